"""Rows of the disk index, made from records — the part of indexing that can run in a worker process.

`prepare(record)` does everything per record that does not need the database (tokens, postings, the compressed
JSON), so a parse worker hands the writer ready rows and the writer only runs SQL. `parse_chunk` is what a worker
runs: raw JSON lines → prepared rows or located errors.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import NamedTuple

import zstandard

from academiceval.errors import AcademicEvalError
from academiceval.sources.errors import RecordParseError
from academiceval.sources.mirror.index import text_tokens
from academiceval.sources.mirror.records import MirrorRecord, kaggle_to_record
from academiceval.sources.mirror.unarxive import unarxive_to_paper
from academiceval.sources.names import key_tokens, surname_of
from academiceval.store.paper_models import Author, Paper, PaperMeta

LINE_FORMATS: dict[str, Callable[..., MirrorRecord]] = {"kaggle": kaggle_to_record, "unarxive": unarxive_to_paper}
SEP = "\x1f"


class Prepared(NamedTuple):
    """One record as the index stores it (see the `rec`, `cat`, `author`, `title_fts`, `paper` tables).

    A named tuple, not a dataclass: a parse worker hands these to the writer by pickle, and a tuple pickles as
    its values (3 µs a record each way) where a slotted dataclass pickles a dict of its fields per record (8 µs
    to pickle, 19 to unpickle, in the writer: ~10% of the build's CPU; benchmarks/mirror_scale.py)."""

    arxiv_id: str
    pub: int
    upd: int | None
    source: str
    cats: list[str]
    akeys: list[str]  # author keys in order ("" when a name has no key tokens)
    blob: bytes  # pack(PaperMeta JSON)
    title: str  # title tokens for FTS
    path: str
    fmt: str
    paper: bytes | None = None  # pack(Paper JSON) for pre-parsed papers

    def rec_row(self, rid: int) -> tuple:
        usort = self.upd if self.upd is not None else self.pub
        cats, akeys = " ".join(self.cats), SEP.join(self.akeys)
        return (rid, self.arxiv_id, self.pub, self.upd, usort, self.source, cats, akeys, self.blob, self.path, self.fmt)

    def postings(self, rid: int) -> tuple[list[tuple], list[tuple]]:
        cats = [(rid, c, self.pub) for c in posted_categories(self.cats)]
        authors = [(rid, pos, surname_of(k), self.pub) for pos, k in enumerate(self.akeys) if k]
        return cats, authors


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_codecs = threading.local()  # zstandard's (de)compressor objects are not for concurrent use: one per thread


def pack(data: bytes) -> bytes:
    """A stored record's JSON, zstd-compressed (level 3). zstd rather than zlib-1: as small (0.511 vs 0.506 of the
    JSON) and 2.6-2.8x faster both ways (compress 8.2 vs 23.1 µs, decompress 2.9 vs 7.6 µs per record;
    `benchmarks/mirror_scale.py --breakdown`), which took the 2.7M-record index from 388 to 341 CPU-seconds."""
    c = getattr(_codecs, "c", None)
    if c is None:
        c = _codecs.c = zstandard.ZstdCompressor(level=3)
    return c.compress(data)


def unpack(blob: bytes) -> bytes:
    """`pack`'s inverse; blobs written by an index built before zstd (zlib streams) are still read."""
    if blob[:4] != _ZSTD_MAGIC:
        return zlib.decompress(blob)
    d = getattr(_codecs, "d", None)
    if d is None:
        d = _codecs.d = zstandard.ZstdDecompressor()
    return d.decompress(blob)


def ts(dt: datetime) -> int:
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp())


def dt_of(t: int | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def author_key_of(a: Author) -> str:
    return a.key if a.key else " ".join(key_tokens(a.name))


def posted_categories(cats: Iterable[str]) -> list[str]:
    """Each category and its dotted prefixes, once: "astro-ph.GA" → astro-ph.GA, astro-ph (see disk_query)."""
    out: dict[str, None] = {}
    for c in cats:
        parts = c.split(".")
        for i in range(1, len(parts) + 1):
            out[".".join(parts[:i])] = None
    return list(out)


def prepare(r: MirrorRecord) -> Prepared:
    m = r.meta
    return Prepared(
        arxiv_id=m.arxiv_id,
        pub=ts(r.published_at),
        upd=ts(r.updated_at) if r.updated_at else None,
        source=m.source,
        cats=list(m.categories),
        akeys=[author_key_of(a) for a in m.authors],
        blob=pack(m.model_dump_json().encode()),
        title=" ".join(text_tokens(m.title)),
        path=r.path,
        fmt=r.fmt,
        paper=pack(r.paper.model_dump_json().encode()) if r.paper is not None else None,
    )


def unprepare(p: Prepared) -> MirrorRecord:
    meta = PaperMeta.model_validate_json(unpack(p.blob))
    paper = Paper.model_validate_json(unpack(p.paper)) if p.paper else None
    return MirrorRecord(meta, dt_of(p.pub), dt_of(p.upd), path=p.path, fmt=p.fmt, paper=paper)


def parse_line(line: bytes, convert: Callable[..., MirrorRecord], where: str, pos: int) -> Prepared | RecordParseError:
    """One JSON line → prepared row, or a located error (file:line; byte offset in the hint); never raises."""
    try:
        d = json.loads(line.decode("utf-8", errors="replace"))
        if not isinstance(d, dict):
            return RecordParseError("line is not a JSON object", source=where, hint=f"byte {pos}")
        return prepare(convert(d, path=where))
    except json.JSONDecodeError as e:
        hint = f"truncated or corrupted line at byte {pos}"
        return RecordParseError(f"invalid JSON: {e.msg}", source=where, hint=hint)
    except RecordParseError as e:
        return e
    except (AcademicEvalError, ValueError, TypeError, AttributeError, KeyError) as e:
        return RecordParseError(f"invalid record: {e}".splitlines()[0], source=where, hint=f"byte {pos}")
    except RecursionError:  # nested past Python's limit
        return RecordParseError("invalid record: nested too deeply", source=where, hint=f"byte {pos}")


Parsed = list[tuple[int, int, Prepared | RecordParseError | None]]


def parse_chunk(args: tuple[str, str, list[tuple[int, int, bytes]]]) -> Parsed:
    """(format, file path, [(line number, byte offset, line)]) → [(line number, end offset, row | error | None)]."""
    fmt, where, lines = args
    convert = LINE_FORMATS[fmt]
    out: Parsed = []
    for lineno, pos, line in lines:
        item = parse_line(line, convert, f"{where}:{lineno}", pos) if line.strip() else None
        out.append((lineno, pos + len(line), item))
    return out
