"""Rows from a user's JSON file (JSON lines, a JSON list, or one JSON document), read so that no row can crash
an importer.

Every importer of rows someone else wrote (SCALAR questions, L-Eval task and prediction files, ElaipBench rows)
reads them here: a row that does not parse, is nested past Python's recursion limit, holds NaN/Infinity or a
lone surrogate (valid JSON, but not text: it fails later when hashed or written), or — when objects are asked
for — is not a JSON object, becomes a `BadRow` naming `file:line` and why; the other rows are returned as they
are. An unreadable file (missing, a directory, no permission) is one `BadRow` for the file. Callers count and
report the bad rows and go on with the good ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BOM = "\ufeff"


@dataclass(frozen=True)
class BadRow:
    """One row (or the whole file) that was not read: where (`file:line` or `file[index]`) and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _decode(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _why(e: BaseException) -> str:
    if isinstance(e, RecursionError):
        return "nested too deeply to be a row (over Python's recursion limit)"
    if isinstance(e, UnicodeError):
        return "not UTF-8 text"
    msg = (getattr(e, "msg", None) or str(e) or type(e).__name__).splitlines()[0]
    return f"not valid JSON ({msg[:120]})"


def not_text(value: Any) -> bool:
    """Whether the value holds a lone surrogate (json accepts "\\ud800"; UTF-8 cannot encode it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check(value: Any, where: str, objects: bool) -> BadRow | None:
    if objects and not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        return BadRow(where, f"the row is a JSON {kind}, not an object")
    if not_text(value):
        return BadRow(where, "holds bytes that are not UTF-8, or a lone surrogate (\\ud800-\\udfff): not text")
    return None


def read_json_rows(path: str | Path, *, objects: bool = True) -> tuple[list[tuple[Any, str]], list[BadRow]]:
    """(row, where) for each good row of `path`, and the bad ones. A file whose first character is `[` is a JSON
    list; one that parses as a whole is one row (a question per file); anything else is JSON lines."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        return [], [BadRow(str(path), f"cannot be read ({e.strerror or type(e).__name__})")]
    good: list[tuple[Any, str]] = []
    bad: list[BadRow] = []
    head = raw.lstrip(b" \t\r\n")
    if head.startswith(BOM.encode()):
        head = head[len(BOM.encode()) :].lstrip()
    if not head:
        return [], [BadRow(str(path), "the file is empty")]
    whole: Any = None
    try:
        whole = _decode(raw.decode("utf-8-sig"))
        parsed = True
    except (ValueError, RecursionError) as e:
        parsed = False
        if head[:1] == b"[":  # a list with a bad element: the elements before it are read
            return _list_prefix(raw, path, objects, e)
        if head.split(b"\n", 1)[0].strip() == b"{" or b"\n" not in head.strip():
            return [], [BadRow(str(path), _why(e))]
    if parsed:
        if isinstance(whole, list):
            for n, value in enumerate(whole):
                problem = _check(value, f"{path}[{n}]", objects)
                (bad.append(problem) if problem else good.append((value, f"{path}[{n}]")))
            return good, bad
        problem = _check(whole, f"{path}:1", objects)
        return ([], [problem]) if problem else ([(whole, f"{path}:1")], [])
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            value = _decode(line.decode("utf-8-sig" if n == 1 else "utf-8"))
        except (ValueError, RecursionError) as e:
            bad.append(BadRow(where, _why(e)))
            continue
        problem = _check(value, where, objects)
        (bad.append(problem) if problem else good.append((value, where)))
    return good, bad


def _list_prefix(
    raw: bytes, path: Path, objects: bool, error: BaseException
) -> tuple[list[tuple[Any, str]], list[BadRow]]:
    """A JSON list that does not parse as a whole, read element by element up to the first that does not parse
    (there is no telling where the next element starts); the rest is one bad row naming the element's index."""
    # bytes that are not UTF-8 become lone surrogates, so the element holding them is the one reported
    text = raw.decode("utf-8", errors="surrogateescape").removeprefix(BOM)
    dec = json.JSONDecoder(parse_constant=_reject_constant)
    good: list[tuple[Any, str]] = []
    bad: list[BadRow] = []
    pos = text.index("[") + 1
    n = 0
    stopped = False
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        where = f"{path}[{n}]"
        try:
            value, pos = dec.raw_decode(text, pos)
        except (ValueError, RecursionError) as e:
            bad.append(BadRow(where, _why(e) + ": the list is not read past this element"))
            stopped = True
            break
        problem = _check(value, where, objects)
        (bad.append(problem) if problem else good.append((value, where)))
        n += 1
    if not stopped and not isinstance(error, UnicodeError):  # every element parsed, the whole did not: no ]?
        bad.append(BadRow(str(path), _why(error)))
    return good, bad
