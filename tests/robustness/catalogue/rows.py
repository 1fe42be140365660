"""Bad rows: what an importer's input file can hold that its author did not mean.

Each damage turns one valid row (a JSON object an importer reads) into something else — a JSON value of the
wrong kind, an object whose fields have the wrong types, or raw bytes that are not a JSON line at all. The
importers' inputs are built from real files of the corpus; the damaged row goes among valid ones, so the oracle
can also ask that the valid rows were imported.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

DEEP = 100_000  # brackets: far past Python's recursion limit (json.loads -> RecursionError, not ValueError)
Row = dict[str, Any]


class Raw(bytes):
    """A damaged row that is bytes, not a JSON value (spliced into the file as it is)."""


def _deep_value() -> Raw:
    return Raw(b"[" * DEEP + b"]" * DEEP)


def _with_raw_field(row: Row, raw: bytes) -> Raw:
    """The row with its first field's value replaced by raw JSON text (e.g. 100,000 nested lists)."""
    first = next(iter(row), "x")
    rest = json.dumps({k: v for k, v in row.items() if k != first}, ensure_ascii=False)[1:]
    sep = b", " if rest != "}" else b""
    return Raw(b"{" + json.dumps(first).encode() + b": " + raw + sep + rest.encode())


def _each_field(row: Row, value: Any) -> Row:
    return {k: value for k in row} or {"x": value}


def _line(row: Row) -> bytes:
    return json.dumps(row, ensure_ascii=False).encode()


# damage name -> (valid row -> damaged row: a JSON value or Raw bytes)
ROW_DAMAGE: dict[str, Callable[[Row], Any]] = {
    "list-row": lambda r: [1, 2, 3],
    "string-row": lambda r: "a row",
    "number-row": lambda r: 42,
    "null-row": lambda r: None,
    "empty-object": lambda r: {},
    "null-fields": lambda r: _each_field(r, None),
    "number-fields": lambda r: _each_field(r, 5),
    "float-fields": lambda r: _each_field(r, 1.5),
    "bool-fields": lambda r: _each_field(r, True),
    "list-fields": lambda r: _each_field(r, [1, {"x": None}]),
    "object-fields": lambda r: _each_field(r, {"a": {"b": 1}}),
    "huge-int-fields": lambda r: Raw(json.dumps({k: 0 for k in r}).replace("0", "9" * 5000).encode()),
    "lone-surrogate": lambda r: Raw(_line(r).replace(b'": "', b'": "\\ud800', 3)),
    "deep-field": lambda r: _with_raw_field(r, _deep_value()),
    "deep-row": lambda r: _deep_value(),
    "nan-infinity": lambda r: Raw(_line(r)[:-1] + b', "nan": NaN, "inf": -Infinity}'),
    "truncated": lambda r: Raw(_line(r)[: max(1, len(_line(r)) // 2)]),
    "bad-utf8": lambda r: Raw(_line(r).replace(b'": "', b'": "\xff\xfe', 2)),
    "nul-bytes": lambda r: Raw(_line(r).replace(b'": "', b'": "\x00', 2)),
    "binary": lambda r: Raw(random.Random(26).randbytes(300).replace(b"\n", b" ")),
    "huge-field": lambda r: Raw(_line({**r, next(iter(r), "x"): "a" * 3_000_000})),
}
# damage of the whole file (the rows' container)
FILE_DAMAGE = ("empty-file", "directory", "bom", "crlf", "not-a-list", "binary-file", "deep-file")


def encode(value: Any) -> bytes:
    """One row as the bytes of one JSON line."""
    return bytes(value) if isinstance(value, Raw) else json.dumps(value, ensure_ascii=False).encode()


def jsonl(rows: list[Any]) -> bytes:
    """A JSON-lines file of rows (each a JSON value or Raw bytes)."""
    return b"".join(encode(r) + b"\n" for r in rows)


def json_list(rows: list[Any]) -> bytes:
    """A JSON document holding a list of rows (Raw rows spliced in as they are)."""
    return b"[\n" + b",\n".join(encode(r) for r in rows) + b"\n]\n"


def damaged_rows(good: list[Row], damage: str) -> list[Any]:
    """The good rows with one damaged row in the middle (a damaged copy of the middle row)."""
    mid = len(good) // 2
    return [*good[:mid], ROW_DAMAGE[damage](good[mid]), *good[mid:]]


def file_damage(data: bytes, damage: str) -> bytes | None:
    """A whole input file damaged; None for "directory" (the caller puts a directory there)."""
    return {
        "empty-file": b"",
        "directory": None,
        "bom": b"\xef\xbb\xbf" + data,
        "crlf": data.replace(b"\n", b"\r\n"),
        "not-a-list": b'{"rows": "not what this file holds"}\n',
        "binary-file": random.Random(10).randbytes(4096),
        "deep-file": bytes(_deep_value()),
    }[damage]
