"""Typed rows at the publication-list boundary (issue 26, item 4): what a list file may hold, checked before use.

A publication list is a user's file: CSL-JSON exported by Zotero or hand-edited, BibTeX from any tool. The first
reader took values as they came (`str(...)` of whatever was there, `for f in files` over an int) and 3 kinds of
rows ended in tracebacks (a `file` that is a number, a name part that is a list, 5,000 nested brackets). Here:

- the file is read with limits: at most `MAX_LIST_BYTES`; UTF-8 with or without a byte-order mark (a file with no
  UTF-8 at all is Latin-1, said once); JSON nested at most `MAX_JSON_DEPTH` deep (CSL-JSON needs 4);
- a CSL-JSON document is an array of items (or `{"items": [...]}`); each item is decoded on its own
  (`json.JSONDecoder.raw_decode`), so every problem names its line, and validated as a `CslItem`: text fields must
  be text (a number is not silently turned into a title), `author` a list of name objects, `issued` a CSL date;
- a bad item is one `PubIssue` — file, line, key, what is wrong, what to do — and is skipped; the rest goes on.

`PubIssue` lives here (the lowest publication-list module) and is re-exported by `sources.publist`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, field_validator

from academiceval.sources.dates import from_parts, parse_iso_partial
from academiceval.sources.mirror.records import RecordWarning, decode_bytes
from academiceval.store.paper_models import DatePrecision
from academiceval.store.user_rows import not_text

MAX_LIST_BYTES = 64 * 2**20  # a 10,000-entry CSL-JSON export with abstracts is ~20 MB
MAX_JSON_DEPTH = 32  # CSL-JSON: items → issued → date-parts → [y, m, d] is 4 deep
FIX_ROW = "fix or delete this entry and import again; the others were imported"


@dataclass
class PubIssue:
    """A problem in a publication list or with one of its PDFs; the rest of the list goes on."""

    file: str
    key: str | None
    code: str  # unreadable_list, not_a_list, text_repaired, malformed_entry, invalid_entry, duplicate_key,
    #            duplicate_doi, duplicate_pdf, missing_field, unsafe_file, file_missing, title_mismatch,
    #            unlisted_pdf, pdf_error
    message: str
    line: int | None = None
    hint: str | None = None  # what to do

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        key = f" [{self.key}]" if self.key else ""
        tip = f" ({self.hint})" if self.hint else ""
        return f"{where}{key}: {self.message}{tip}"


# ---- reading a list file ---------------------------------------------------------------------------------------
def read_list_text(path: Path) -> tuple[str | None, list[PubIssue]]:
    """The text of a list file, or None with the one issue that says why it cannot be used."""
    src = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_LIST_BYTES:
            return None, [
                PubIssue(
                    src,
                    None,
                    "unreadable_list",
                    f"the file is {size / 2**20:.0f} MB, over the "
                    f"{MAX_LIST_BYTES // 2**20} MB a publication list may have",
                    hint="split it into several lists in the same folder",
                )
            ]
        data = path.read_bytes()
    except OSError as e:
        return None, [
            PubIssue(
                src,
                None,
                "unreadable_list",
                f"cannot be read ({e.strerror or e})",
                hint="check that it is a readable file",
            )
        ]
    warnings: list[RecordWarning] = []
    text = decode_bytes(data, path=src, warnings=warnings).removeprefix("\ufeff")  # spreadsheet/Windows tools add it
    return text, [
        PubIssue(src, None, "text_repaired", w.message, hint=f"lines {w.source}".replace(f"{src}:", ""))
        for w in warnings
    ]


def _line_of(text: str, pos: int, start: int = 0, line: int = 1) -> int:
    return line + text.count("\n", start, pos)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a decoded JSON value, counted without recursion (stops past `limit`)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


@dataclass
class RawItem:
    index: int  # position in the list (0-based)
    line: int
    value: Any


def json_items(text: str, src: str) -> tuple[list[RawItem], list[PubIssue]]:
    """The items of a CSL-JSON document, each with its line; a syntax error ends the list there (one issue)."""
    dec = json.JSONDecoder()
    ws = " \t\r\n"
    pos = len(text) - len(text.lstrip(ws))
    issues: list[PubIssue] = []
    if pos >= len(text) or text[pos] not in "[{":
        return [], [
            PubIssue(
                src,
                None,
                "not_a_list",
                "not CSL-JSON: a list of items ([...]) is expected",
                _line_of(text, pos),
                hint="export the list as CSL-JSON, or move this file elsewhere",
            )
        ]
    if text[pos] == "{":  # {"items": [...]} (some exports), or a single item
        try:
            doc, _ = dec.raw_decode(text, pos)
        except (ValueError, RecursionError) as e:
            return [], [_syntax(src, text, e)]
        items = doc.get("items", [doc]) if isinstance(doc, dict) else None
        if not isinstance(items, list):
            return [], [
                PubIssue(
                    src, None, "not_a_list", '"items" is not a list of items', 1, hint="export the list as CSL-JSON"
                )
            ]
        return [RawItem(i, 1, v) for i, v in enumerate(items)], issues
    out: list[RawItem] = []
    pos += 1
    line, line_at = 1, 0

    def skip() -> int:
        p = pos
        while p < len(text) and text[p] in ws:
            p += 1
        return p

    pos = skip()
    if pos < len(text) and text[pos] == "]":
        return out, issues
    while True:
        line = _line_of(text, pos, line_at, line)
        line_at = pos
        try:
            value, pos = dec.raw_decode(text, pos)
        except (ValueError, RecursionError) as e:
            issues.append(_syntax(src, text, e, line))
            return out, issues
        out.append(RawItem(len(out), line, value))
        pos = skip()
        if pos < len(text) and text[pos] == "]":
            return out, issues
        if pos >= len(text) or text[pos] != ",":
            where = _line_of(text, pos, line_at, line)
            issues.append(
                PubIssue(
                    src,
                    None,
                    "unreadable_list",
                    "not valid JSON (expected , or ] after an item): the list is read up to here",
                    where,
                    hint="fix the JSON at this line and import again",
                )
            )
            return out, issues
        pos += 1
        pos = skip()


def _syntax(src: str, text: str, e: BaseException, line: int | None = None) -> PubIssue:
    if isinstance(e, RecursionError):
        msg = f"nested too deeply to be a publication list (over {MAX_JSON_DEPTH} levels): the rest is not read"
        return PubIssue(src, None, "unreadable_list", msg, line, hint="check what wrote this file; CSL-JSON is flat")
    lineno = getattr(e, "lineno", None) or line
    why = (getattr(e, "msg", None) or str(e).splitlines()[0])[:100]
    return PubIssue(
        src,
        None,
        "unreadable_list",
        f"not valid JSON ({why}): the list is read up to here",
        lineno,
        hint="fix the JSON at this line (a missing comma or quote?) and import again",
    )


# ---- CSL-JSON items --------------------------------------------------------------------------------------------
class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class CslName(_Row):
    family: StrictStr | None = None
    given: StrictStr | None = None
    literal: StrictStr | None = None
    non_dropping_particle: StrictStr | None = Field(None, alias="non-dropping-particle")
    dropping_particle: StrictStr | None = Field(None, alias="dropping-particle")

    def written(self) -> str:
        particle = self.non_dropping_particle or self.dropping_particle
        return (self.literal or " ".join(x for x in (self.given, particle, self.family) if x)).strip()


class CslDate(_Row):
    date_parts: list[list[StrictInt | StrictStr | None]] | None = Field(None, alias="date-parts")
    raw: StrictStr | None = None
    literal: StrictStr | None = None

    def when(self) -> tuple[date, DatePrecision] | None:
        if self.date_parts and self.date_parts[0]:
            y, *rest = self.date_parts[0]
            return from_parts(y, rest[0] if rest else None, rest[1] if len(rest) > 1 else None)
        text = self.raw or self.literal
        return parse_iso_partial(text) if text else None


class CslItem(_Row):
    """One CSL-JSON item, as far as the import reads it (other fields are ignored)."""

    id: StrictStr | StrictInt | None = None
    citation_key: StrictStr | None = Field(None, alias="citation-key")
    type: StrictStr | None = None
    title: StrictStr | None = None
    author: list[CslName] = Field(default_factory=list)
    issued: CslDate | None = None
    DOI: StrictStr | None = None
    URL: StrictStr | None = None
    note: StrictStr | None = None
    arxiv: StrictStr | None = None
    abstract: StrictStr | None = None
    container_title: StrictStr | None = Field(None, alias="container-title")
    file: StrictStr | list[StrictStr] | None = None
    files: StrictStr | list[StrictStr] | None = None

    @field_validator("author", mode="before")
    @classmethod
    def _no_authors(cls, v: object) -> object:
        return [] if v is None else v


def item_key(raw: RawItem) -> str:
    """The entry key for messages and ids: `id`, `citation-key`, else `item<N>` (never a repr of a dict)."""
    v = raw.value
    if isinstance(v, dict):
        for f in ("id", "citation-key"):
            k = v.get(f)
            if isinstance(k, str | int) and not isinstance(k, bool) and str(k).strip():
                return str(k).strip()
    return f"item{raw.index}"


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_WANT = {
    "string_type": "text",
    "list_type": "a list",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}
_TYPE_TAG = re.compile(r"^(?:str|int|float|bool|none|list|dict)(?:\[.*\])?$")  # a union branch in `loc`


def describe(e: ValidationError) -> str:
    """The first bad field of a row, in words: `author[0].family: expected text, got 5 (and 1 more field)`.
    A union field's branches are one field: `id: expected text or a whole number, got {"a": 1}`."""
    fields: dict[str, list[dict[str, Any]]] = {}
    for err in e.errors():
        parts = [p for p in err["loc"] if not (isinstance(p, str) and _TYPE_TAG.match(p))]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "the item"
        fields.setdefault(loc, []).append(err)
    loc, errs = next(iter(fields.items()))
    wants = list(dict.fromkeys(w for err in errs if (w := _WANT.get(err["type"]))))
    what = f"expected {' or '.join(wants)}, got {_shown(errs[0].get('input'))}" if wants else errs[0]["msg"]
    more = f" (and {len(fields) - 1} more field{'s' if len(fields) > 2 else ''})" if len(fields) > 1 else ""
    return f"{loc}: {what}{more}"


def csl_rows(raw_items: list[RawItem], src: str) -> Iterator[tuple[RawItem, CslItem | None, PubIssue | None]]:
    """Each raw item validated: (item, row, None), or (item, None, the one issue that skips it)."""
    for raw in raw_items:
        key = item_key(raw)
        if not isinstance(raw.value, dict):
            kind = "null" if raw.value is None else type(raw.value).__name__
            yield (
                raw,
                None,
                PubIssue(
                    src, key, "malformed_entry", f"item {raw.index} is {kind}, not an object", raw.line, hint=FIX_ROW
                ),
            )
            continue
        if _depth(raw.value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            yield (
                raw,
                None,
                PubIssue(
                    src,
                    key,
                    "invalid_entry",
                    f"item {raw.index} is nested deeper than {MAX_JSON_DEPTH} levels",
                    raw.line,
                    hint=FIX_ROW,
                ),
            )
            continue
        if not_text(raw.value):
            msg = f"item {raw.index} holds a lone surrogate (\\ud800-\\udfff), which is not text"
            yield raw, None, PubIssue(src, key, "invalid_entry", msg, raw.line, hint=FIX_ROW)
            continue
        try:
            yield raw, CslItem.model_validate(raw.value), None
        except ValidationError as e:
            yield raw, None, PubIssue(src, key, "invalid_entry", describe(e), raw.line, hint=FIX_ROW)
