"""Readers for arXiv's metadata record formats: `.abs` files and mailing listings, Kaggle snapshot lines, SCALAR
metadata, saved Atom responses. Each reader yields `MirrorRecord`s or `RecordParseError`s, never raises for one
bad record, so one garbled entry never stops an index of millions.

Dates come from the records themselves: the first `Date:` line of an `.abs` record is the v1 submission, each
`Date (revised vN):` line a later version; Kaggle lines carry the same in `versions`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from academiceval.sources.atom import parse_feed
from academiceval.sources.errors import AtomParseError, InvalidArxivIdError, RecordParseError, SourceError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.titles import is_all_caps, latex_title, same_words
from academiceval.sources.names import author_fields, make_author
from academiceval.store.paper_models import Paper, PaperMeta

# Which record wins when two sources describe the same version of a paper (richer, more authoritative first).
SOURCE_RANK = {
    "atom": 6,
    "arxiv-api": 6,
    "arxiv-oai": 6,
    "kaggle": 5,
    "abs": 4,
    "unarxive": 3,
    "scalar": 2,
    "listing": 1,
    "pdf-stamp": 0,
}
REFERENCE_SOURCE = "scalar-ref"  # PaperMeta.source of a paper known only from another paper's reference entry
_PRECISION_ORDER = {"day": 0, "month": 1, "year": 2}


def standing(source: str) -> int:
    """How far a record speaks for the paper itself: 2 its own metadata (arXiv's records, SCALAR's metadata file,
    unarXive, a SCALAR paper object of the paper); 1 its PDF (page-1 stamp + parsed title); 0 a reference entry in
    another paper (the citing style's title, "Attention is all you need, 2023", and only the id's month as date).
    A record never merges into one of higher standing, and one of higher standing replaces it whole: a reference
    entry is never a paper's own metadata, a stamp never mixes with a real record."""
    return 0 if source == REFERENCE_SOURCE else 1 if source == "pdf-stamp" else 2


@dataclass
class MirrorRecord:
    """One paper as read from one file, with the full timestamps the file gave (for minute-precise windows)."""

    meta: PaperMeta
    published_at: datetime
    updated_at: datetime | None = None
    path: str = ""
    fmt: str = ""
    paper: Paper | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # titles as the store keeps them, whichever reader, index or merge made the record: LaTeX rendered to text
        # (`titles.latex_title`: "WSe$_{2}$" → "WSe2")
        title = latex_title(self.meta.title)
        if title != self.meta.title:
            self.meta = self.meta.model_copy(update={"title": title})


class RecordWarning(RecordParseError):
    """Something in a file was repaired on the way in (invalid UTF-8 bytes, NUL characters): the record is kept,
    the repair is recorded with its file and line (`mirror_error`, code `record_warning`) and reported as a note,
    never stored silently."""

    code = "record_warning"


_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _lines_of(text: str, needle: str, limit: int = 5) -> str:
    """'3, 17, 40' — the (first few) 1-based line numbers holding `needle`."""
    found = [str(n) for n, line in enumerate(text.split("\n"), 1) if needle in line]
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return ", ".join(found[:limit]) + more


def decode_bytes(data: bytes, *, path: str = "", warnings: list[RecordWarning] | None = None) -> str:
    """UTF-8; a file with no UTF-8 sequence at all is Latin-1 (a few real `.abs` files are); a UTF-8 file with
    some bad bytes keeps its UTF-8 and gets U+FFFD for those bytes (decoding all of it as Latin-1 would garble
    every accented name in it). NUL characters are removed. Each repair is appended to `warnings` with the
    file and the lines concerned."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if _UTF8_MULTIBYTE.search(data) is None:
            text = data.decode("latin-1")
            _warn(warnings, "not UTF-8: read as Latin-1", path, text, None)
        else:
            text = data.decode("utf-8", errors="replace")
            _warn(warnings, "invalid UTF-8 bytes replaced by U+FFFD", path, text, "\ufffd")
    return strip_nuls(text, path=path, warnings=warnings)


def strip_nuls(
    text: str, *, path: str = "", warnings: list[RecordWarning] | None = None, line: int | None = None
) -> str:
    """`text` without NUL characters (they end strings in C tools and SQLite's text functions)."""
    if "\x00" not in text:
        return text
    if warnings is not None:
        where = f"{path}:{line}" if line is not None else f"{path}:{_lines_of(text, chr(0))}"
        warnings.append(RecordWarning(f"{text.count(chr(0))} NUL character(s) removed", source=where))
    return text.replace("\x00", "")


def _warn(warnings: list[RecordWarning] | None, message: str, path: str, text: str, needle: str | None) -> None:
    if warnings is None:
        return
    where = f"{path}:{_lines_of(text, needle)}" if needle else path
    warnings.append(RecordWarning(message, source=where))


def rfc2822(s: str) -> datetime:
    dt = parsedate_to_datetime(s.strip())
    return dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)


def iso_dt(s: str) -> datetime:
    dt = datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    return dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)


def _collapse(s: str | None) -> str:
    return " ".join((s or "").split())


def _cats(raw: str, arxiv_id: str) -> list[str]:
    cats = raw.split()
    if not cats and "/" in arxiv_id:  # old-style ids name their archive
        cats = [arxiv_id.split("/")[0]]
    return cats


# ---- .abs records and listings ----------------------------------------------------------------------------------
_SEPARATOR = re.compile(r"^-{20,}\s*$", re.MULTILINE)
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9 ()\-]*?):\s?(.*)$")
_DATE_VALUE = re.compile(r"^(.*?\d{2}:\d{2}(?::\d{2})?\s*(?:GMT|UT|UTC|[+-]\d{4})?)")


def parse_abs_record(text: str, *, path: str = "", fmt: str = "abs", version_hint: int | None = None) -> MirrorRecord:
    """One `.abs` record (header, `\\\\`, abstract, `\\\\`). Raises RecordParseError with the reason."""
    parts = re.split(r"^\\\\\s*$", text, flags=re.MULTILINE)
    if len(parts) < 3:
        raise RecordParseError("no '\\\\' header delimiters", source=path, hint="not an arXiv .abs record")
    header = parts[1]
    abstract = _collapse(parts[2]) if len(parts) > 3 else ""
    fields: dict[str, str] = {}
    dates: list[str] = []
    arxiv_raw = ""
    last: str | None = None
    for line in header.splitlines():
        if not line.strip():
            last = None
            continue
        if line[0].isspace() and last:
            fields[last] += " " + line.strip()
            continue
        if line.startswith(("arXiv:", "Paper:")) and not arxiv_raw:
            arxiv_raw = line.split(":", 1)[1].strip()
            continue
        m = _FIELD.match(line)
        if not m:
            last = None
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        if key == "Date" or key.startswith("Date (revised"):
            dates.append(value)
            last = None
            continue
        fields[key] = value
        last = key
    if not arxiv_raw:
        raise RecordParseError("record has no 'arXiv:' id line", source=path)
    try:
        arxiv_id, _ = parse_arxiv_id(arxiv_raw.split()[0])
    except InvalidArxivIdError as e:
        raise RecordParseError(f"bad id line {arxiv_raw[:60]!r}", source=path) from e
    where = f"{path}#{arxiv_id}" if path else arxiv_id
    title = _collapse(fields.get("Title"))
    if not title:
        raise RecordParseError("record has no Title", source=where)
    if not dates:
        raise RecordParseError("record has no Date line (v1 submission date unknown)", source=where)
    try:
        stamps = [rfc2822(_DATE_VALUE.match(d).group(1) if _DATE_VALUE.match(d) else d) for d in dates]
    except (TypeError, ValueError, AttributeError) as e:
        raise RecordParseError(f"unreadable Date line {dates[0][:50]!r}", source=where) from e
    cats = _cats(fields.get("Categories", ""), arxiv_id)
    authors = author_fields(fields.get("Authors", ""))
    meta = PaperMeta(
        arxiv_id=arxiv_id,
        version=version_hint or len(stamps),
        title=title,
        abstract=abstract,
        authors=authors,
        primary_category=cats[0] if cats else None,
        categories=cats,
        published=stamps[0].date(),
        updated=stamps[-1].date(),
        doi=_collapse(fields.get("DOI")).split(" ")[0] or None,
        journal_ref=_collapse(fields.get("Journal-ref")) or None,
        comment=_collapse(fields.get("Comments")) or None,
        source=fmt,
    )
    return MirrorRecord(meta, stamps[0], stamps[-1], path=path, fmt=fmt)


def read_abs_text(
    text: str, *, path: str = "", fmt: str = "abs", version_hint: int | None = None
) -> Iterator[MirrorRecord | RecordParseError]:
    """Every record of an `.abs` file or a mailing listing (records separated by lines of dashes). NUL characters
    are removed first, with a `RecordWarning` naming the lines."""
    repairs: list[RecordWarning] = []
    text = strip_nuls(text, path=path, warnings=repairs)
    yield from repairs
    chunks = [c for c in _SEPARATOR.split(text) if c.strip()]
    for i, chunk in enumerate(chunks):
        try:
            yield parse_abs_record(chunk, path=path, fmt=fmt, version_hint=version_hint if len(chunks) == 1 else None)
        except RecordParseError as e:
            if not e.source or e.source == path:
                e.source = f"{path}#record{i + 1}"
            yield e
        except (ValueError, TypeError) as e:  # pydantic validation and the like: still a record-level problem
            yield RecordParseError(f"invalid record: {e}".splitlines()[0], source=f"{path}#record{i + 1}")


# ---- Kaggle arxiv-metadata-oai-snapshot lines (and unarXive's metadata block) -----------------------------------
def kaggle_to_record(d: dict[str, Any], *, path: str = "", fmt: str = "kaggle") -> MirrorRecord:
    raw_id = str(d.get("id") or "")
    try:
        arxiv_id, _ = parse_arxiv_id(raw_id)
    except InvalidArxivIdError as e:
        raise RecordParseError(f"bad id {raw_id[:40]!r}", source=path) from e
    where = f"{path}#{arxiv_id}"
    versions = d.get("versions") or []
    try:
        stamps = [rfc2822(v["created"]) for v in versions if isinstance(v, dict) and v.get("created")]
    except (TypeError, ValueError) as e:
        raise RecordParseError(f"unreadable version date: {e}", source=where) from e
    if not stamps:
        raise RecordParseError("no version dates (v1 submission date unknown)", source=where)
    title = _collapse(d.get("title"))
    if not title:
        raise RecordParseError("no title", source=where)
    cats = _cats(str(d.get("categories") or ""), arxiv_id)
    meta = PaperMeta(
        arxiv_id=arxiv_id,
        version=len(stamps),
        title=title,
        abstract=_collapse(d.get("abstract")),
        authors=author_fields(str(d.get("authors") or "")),
        primary_category=cats[0] if cats else None,
        categories=cats,
        published=stamps[0].date(),
        updated=stamps[-1].date(),
        doi=_collapse(d.get("doi")).split(" ")[0] or None,
        journal_ref=_collapse(d.get("journal-ref")) or None,
        comment=_collapse(d.get("comments")) or None,
        source=fmt,
    )
    return MirrorRecord(meta, stamps[0], stamps[-1], path=path, fmt=fmt)


def read_json_lines(
    lines: Iterator[str] | Iterator[bytes],
    convert: Callable[..., MirrorRecord],
    *,
    path: str = "",
    what: str = "record",
) -> Iterator[MirrorRecord | RecordParseError]:
    """One record per JSON line through `convert(obj, path=where)`; a bad line becomes a located error and the
    file goes on (a truncated download must not cost the lines before and after it).

    Lines may be bytes (the file opened in binary): a line that is not UTF-8 is decoded with U+FFFD for its bad
    bytes, and NUL characters (raw, or `\\u0000` escapes) are removed from every string; each repair is
    yielded as a `RecordWarning` at `file:line` before the line's record."""
    for n, raw in enumerate(lines, 1):
        where = f"{path}:{n}"
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw.decode("utf-8", errors="replace")
                yield RecordWarning("invalid UTF-8 bytes replaced by U+FFFD", source=where)
        else:
            line = raw
        if not line.strip():
            continue
        if "\x00" in line:  # a raw NUL is not even valid JSON: remove it rather than lose the line
            repairs: list[RecordWarning] = []
            line = strip_nuls(line, path=path, warnings=repairs, line=n)
            yield from repairs
        try:
            d = json.loads(line)
            if not isinstance(d, dict):
                raise RecordParseError("line is not a JSON object", source=where)
            if "\\u0000" in line:
                d, removed = _without_nuls(d)
                if removed:
                    yield RecordWarning(f"{removed} NUL character(s) removed", source=where)
            yield convert(d, path=where)
        except json.JSONDecodeError as e:
            yield RecordParseError(f"invalid JSON: {e.msg}", source=where, hint="truncated or corrupted line")
        except RecordParseError as e:
            yield e
        except (ValueError, TypeError, AttributeError, KeyError) as e:
            yield RecordParseError(f"invalid {what}: {e}".splitlines()[0], source=where)
        except RecursionError:  # nested past Python's limit: json cannot read it, nor can anyone mean it
            yield RecordParseError(f"invalid {what}: nested too deeply", source=where, hint="skipped")


def _without_nuls(obj: Any) -> tuple[Any, int]:
    """`obj` with NUL characters removed from every string (keys included); how many were removed."""
    if isinstance(obj, str):
        n = obj.count("\x00")
        return (obj.replace("\x00", "") if n else obj), n
    if isinstance(obj, list):
        total, out = 0, []
        for v in obj:
            v, k = _without_nuls(v)
            out.append(v)
            total += k
        return out, total
    if isinstance(obj, dict):
        total, outd = 0, {}
        for key, v in obj.items():
            key, k1 = _without_nuls(key)
            v, k2 = _without_nuls(v)
            outd[key] = v
            total += k1 + k2
        return outd, total
    return obj, 0


def read_kaggle_lines(
    lines: Iterator[str] | Iterator[bytes], *, path: str = ""
) -> Iterator[MirrorRecord | RecordParseError]:
    return read_json_lines(lines, kaggle_to_record, path=path)


# ---- SCALAR metadata (arxiv.py Result dumps) --------------------------------------------------------------------
def read_scalar(data: Any, *, path: str = "") -> Iterator[MirrorRecord | RecordParseError]:
    for n, item in enumerate(data if isinstance(data, list) else []):
        where = f"{path}[{n}]"
        md = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(md, dict):
            yield RecordParseError("entry has no arXiv metadata", source=where, hint="title match without metadata")
            continue
        try:
            arxiv_id, version = parse_arxiv_id(str(md.get("entry_id") or item.get("arxiv_id") or ""))
            pub, upd = iso_dt(str(md["published"])), iso_dt(str(md.get("updated") or md["published"]))
            cats = [str(c) for c in md.get("categories") or []]
            primary = md.get("primary_category") or (cats[0] if cats else None)
            meta = PaperMeta(
                arxiv_id=arxiv_id,
                version=version,
                title=_collapse(md.get("title")),
                abstract=_collapse(md.get("abstract")),
                authors=[make_author(str(a)) for a in md.get("authors") or [] if str(a).strip()],
                primary_category=primary,
                categories=cats,
                published=pub.date(),
                updated=upd.date(),
                doi=md.get("doi") or None,
                journal_ref=md.get("journal_ref") or None,
                comment=md.get("comment") or None,
                pdf_url=md.get("pdf_url") or None,
                source="scalar",
            )
            if not meta.title:
                raise RecordParseError("no title", source=where)
            yield MirrorRecord(meta, pub, upd, path=where, fmt="scalar")
        except SourceError as e:
            e.source = e.source or where
            yield e
        except (KeyError, ValueError, TypeError) as e:
            yield RecordParseError(f"invalid SCALAR entry: {e}".splitlines()[0], source=where)


# ---- saved Atom responses ---------------------------------------------------------------------------------------
def read_atom(body: bytes | str, *, path: str = "") -> Iterator[MirrorRecord | RecordParseError]:
    """A saved API response (raw XML, or a recorded JSON wrapper's `body`)."""
    try:
        page = parse_feed(body, source="atom")
    except AtomParseError as e:
        yield RecordParseError(e.message, source=path, hint=e.hint)
        return
    for msg in page.errors:
        yield RecordParseError(msg, source=path)
    for m in page.items:
        at = datetime.combine(m.published, datetime.min.time(), tzinfo=UTC)
        up = datetime.combine(m.updated, datetime.min.time(), tzinfo=UTC) if m.updated else None
        yield MirrorRecord(m, at, up, path=path, fmt="atom")


def recased_title(title: str, other: str) -> str:
    """`title`, or `other` when `title` is set in capitals and `other` is the same words in a real case."""
    if is_all_caps(title) and not is_all_caps(other) and same_words(title, other):
        return other
    return title


def combine(old: MirrorRecord, new: MirrorRecord) -> MirrorRecord:
    """Two records of one paper, by standing: a record of lower standing (a stamp, a reference entry) never mixes
    with one of higher standing, which wins whole; of equal standing, `merge_records`. The one merge rule of the
    in-memory index, the disk index and the workspace (`workspace._write`)."""
    if standing(new.meta.source) < standing(old.meta.source):
        return old
    if standing(old.meta.source) < standing(new.meta.source):
        return new
    return merge_records(old, new)


def merge_records(old: MirrorRecord, new: MirrorRecord) -> MirrorRecord:
    """Two records of one paper → one. A record of higher `standing` wins whole (its title keeps the case of the
    other where it is set in capitals; a pre-parsed text of the other is kept). Otherwise the newer version
    wins, ties go to the richer source; empty fields are filled from the other record; the v1 date is the most
    precise of the two, the earlier of two equally precise ones (v1 is the first submission; an exact day beats
    the month an arXiv id gives)."""
    if standing(old.meta.source) != standing(new.meta.source):
        win, lose = (new, old) if standing(new.meta.source) > standing(old.meta.source) else (old, new)
        title = recased_title(win.meta.title, lose.meta.title)
        meta = win.meta if title == win.meta.title else win.meta.model_copy(update={"title": title})
        return replace(win, meta=meta, paper=win.paper or lose.paper)  # a text is not metadata: it is kept

    def rank(r: MirrorRecord) -> tuple[int, int]:
        return (r.meta.version or 0, SOURCE_RANK.get(r.meta.source, 0))

    win, lose = (new, old) if rank(new) > rank(old) else (old, new)
    fill: dict[str, Any] = {}
    title = recased_title(win.meta.title, lose.meta.title)
    if title != win.meta.title:
        fill["title"] = title
    for name in ("abstract", "doi", "journal_ref", "comment", "pdf_url", "primary_category"):
        if not getattr(win.meta, name) and getattr(lose.meta, name):
            fill[name] = getattr(lose.meta, name)
    if not win.meta.categories and lose.meta.categories:
        fill["categories"] = lose.meta.categories
    if not win.meta.authors and lose.meta.authors:
        fill["authors"] = lose.meta.authors
    first = min(win, lose, key=lambda r: (_PRECISION_ORDER.get(r.meta.date_precision, 0), r.published_at))
    published_at = first.published_at
    fill["published"] = published_at.date()
    fill["date_precision"] = first.meta.date_precision
    meta = win.meta.model_copy(update=fill) if fill else win.meta
    return MirrorRecord(
        meta,
        published_at,
        win.updated_at or lose.updated_at,
        path=win.path,
        fmt=win.fmt,
        paper=win.paper or lose.paper,
    )
