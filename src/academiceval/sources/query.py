"""The arXiv `search_query` language: build queries in Python, render them to strings, parse strings back.

Collectors build queries with the helpers (`au`, `ti`, `cat`, `submitted_between`, `and_`, ...) and send
`str(q)`; the in-process mirror and `mirror serve` parse the same strings into the AST and evaluate them locally,
so a query means the same thing against live arXiv, a served mirror and an in-process mirror.

Grammar (arXiv's, with its operators): `expr := and_expr (OR and_expr)*`, `and_expr := unary ((AND|ANDNOT)
unary)*`, `unary := '(' expr ')' | field ':' value | value`; adjacent terms without an operator are ANDed; a
bare value means `all:`. Values are a word (`del_maestro`, `astro-ph*`), a quoted phrase (`"quantum
criticality"`), or a date range `[YYYYMMDDHHMM TO YYYYMMDDHHMM]` for `submittedDate` / `lastUpdatedDate`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Literal

from academiceval.sources.errors import QuerySyntaxError

TEXT_FIELDS = ("au", "ti", "abs", "co", "jr", "cat", "rn", "id", "all")
DATE_FIELDS = ("submittedDate", "lastUpdatedDate")
Op = Literal["AND", "OR", "ANDNOT"]
_NEEDS_QUOTES = re.compile(r"[\s()]")


@dataclass(frozen=True)
class Term:
    """`field:value`; `phrase` is True when the value was quoted."""

    field: str
    value: str
    phrase: bool = False

    def __str__(self) -> str:
        # quoted whenever the parser would not read the value back as one word: a space, a parenthesis (MSC
        # classes such as "(Primary)" end up in category lists), or an operator word
        if self.phrase or _NEEDS_QUOTES.search(self.value) or self.value in ("AND", "OR", "ANDNOT"):
            return f'{self.field}:"{self.value}"'
        return f"{self.field}:{self.value}"


@dataclass(frozen=True)
class DateRange:
    """`submittedDate:[start TO end]`, both ends inclusive, minute precision (arXiv's)."""

    field: str
    start: datetime
    end: datetime

    def __str__(self) -> str:
        return f"{self.field}:[{self.start:%Y%m%d%H%M} TO {self.end:%Y%m%d%H%M}]"


@dataclass(frozen=True)
class BoolOp:
    op: Op
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"{_wrap(self.left, self.op, right=False)} {self.op} {_wrap(self.right, self.op, right=True)}"


Node = Term | DateRange | BoolOp


def _wrap(node: Node, parent: Op, *, right: bool) -> str:
    """Parenthesise so that parse(str(q)) == q (left-assoc operators; OR binds weakest)."""
    if not isinstance(node, BoolOp):
        return str(node)
    needs = (node.op == "OR" and parent != "OR") or right
    return f"({node})" if needs else str(node)


# ---- builders ---------------------------------------------------------------------------------------------------
def _term(field: str, value: str) -> Term:
    v = " ".join(value.replace('"', " ").split())
    if not v:
        raise QuerySyntaxError(f"empty value for {field}:", hint="give a name, word or phrase")
    return Term(field, v, phrase=" " in v)


def au(name: str) -> Term:
    """An author: `au("Adrian Del Maestro")` → `au:"Adrian Del Maestro"`; `au("del_maestro")` stays a word."""
    return _term("au", name)


def ti(text: str) -> Term:
    return _term("ti", text)


def abs_(text: str) -> Term:
    return _term("abs", text)


def cat(category: str) -> Term:
    """A category; `cat("astro-ph*")` matches every astro-ph subject class."""
    return _term("cat", category)


def all_(text: str) -> Term:
    return _term("all", text)


def id_(arxiv_id: str) -> Term:
    return _term("id", arxiv_id)


def _as_datetime(d: date | datetime, *, end: bool) -> datetime:
    if isinstance(d, datetime):
        return d.replace(second=0, microsecond=0, tzinfo=None)
    return datetime.combine(d, time(23, 59) if end else time(0, 0))


def submitted_between(start: date | datetime, end: date | datetime) -> DateRange:
    """v1 submission window; plain dates cover whole days (start 00:00, end 23:59)."""
    return DateRange("submittedDate", _as_datetime(start, end=False), _as_datetime(end, end=True))


def updated_between(start: date | datetime, end: date | datetime) -> DateRange:
    return DateRange("lastUpdatedDate", _as_datetime(start, end=False), _as_datetime(end, end=True))


def _fold(op: Op, nodes: Sequence[Node]) -> Node:
    if not nodes:
        raise QuerySyntaxError(f"{op} of nothing", hint="pass at least one query part")
    out = nodes[0]
    for n in nodes[1:]:
        out = BoolOp(op, out, n)
    return out


def and_(*nodes: Node) -> Node:
    return _fold("AND", nodes)


def or_(*nodes: Node) -> Node:
    return _fold("OR", nodes)


def andnot(left: Node, right: Node) -> Node:
    return BoolOp("ANDNOT", left, right)


def id_batches(ids: Sequence[str], size: int = 100) -> Iterator[list[str]]:
    """`id_list` batches: arXiv answers up to a few hundred ids per request; 100 keeps URLs short."""
    if size < 1:
        raise ValueError("batch size must be positive")
    for i in range(0, len(ids), size):
        yield list(ids[i : i + size])


# ---- parser -----------------------------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<lp>\() | (?P<rp>\)) |
        (?P<op>ANDNOT|AND|OR)(?=[\s(]|$) |
        (?P<field>[A-Za-z]+):(?:
            \[\s*(?P<d1>\d{8,12})\s+TO\s+(?P<d2>\d{8,12})\s*\]
            | "(?P<fq>[^"]*)"
            | (?P<fw>[^\s()"]+)
        ) |
        "(?P<q>[^"]*)" |
        (?P<w>[^\s()"]+)
    )""",
    re.VERBOSE,
)


def _parse_stamp(s: str, *, end: bool) -> datetime:
    s = s + ("2359" if end else "0000") if len(s) == 8 else s
    try:
        return datetime.strptime(s[:12].ljust(12, "0"), "%Y%m%d%H%M")
    except ValueError as e:
        raise QuerySyntaxError(f"bad date {s!r} in range", hint="use YYYYMMDDHHMM") from e


def _tokens(query: str) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    pos = 0
    q = query.strip()
    while pos < len(q):
        m = _TOKEN.match(q, pos)
        if not m or m.end() == pos:
            raise QuerySyntaxError(f"cannot read query at {q[pos : pos + 20]!r}", source=query[:200])
        pos = m.end()
        if m.group("lp"):
            out.append(("(", None))
        elif m.group("rp"):
            out.append((")", None))
        elif m.group("op"):
            out.append(("op", m.group("op")))
        elif m.group("field"):
            field = m.group("field")
            if m.group("d1"):
                if field not in DATE_FIELDS:
                    raise QuerySyntaxError(f"date range on {field!r}", hint=f"use one of {DATE_FIELDS}")
                out.append(
                    (
                        "node",
                        DateRange(field, _parse_stamp(m.group("d1"), end=False), _parse_stamp(m.group("d2"), end=True)),
                    )
                )
                continue
            if field not in TEXT_FIELDS:
                raise QuerySyntaxError(f"unknown field {field!r}", hint=f"use one of {TEXT_FIELDS + DATE_FIELDS}")
            if m.group("fq") is not None:
                out.append(("node", _term(field, m.group("fq"))))
            else:
                out.append(("node", Term(field, m.group("fw"))))
        elif m.group("q") is not None:
            out.append(("node", _term("all", m.group("q"))))
        else:
            out.append(("node", Term("all", m.group("w"))))
        if out[-1][0] == "node" and not str(out[-1][1]).strip():
            raise QuerySyntaxError("empty term", source=query[:200])
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, object]], text: str) -> None:
        self.toks, self.i, self.text = tokens, 0, text

    def peek(self) -> tuple[str, object] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def fail(self, msg: str) -> QuerySyntaxError:
        return QuerySyntaxError(msg, source=self.text[:200], hint="check parentheses and AND/OR/ANDNOT placement")

    def expr(self) -> Node:
        node = self.and_expr()
        while (t := self.peek()) is not None and t == ("op", "OR"):
            self.i += 1
            node = BoolOp("OR", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.unary()
        while (t := self.peek()) is not None:
            if t[0] == "op" and t[1] in ("AND", "ANDNOT"):
                self.i += 1
                node = BoolOp(t[1], node, self.unary())
            elif t[0] in ("node", "("):  # implicit AND between adjacent terms
                node = BoolOp("AND", node, self.unary())
            else:
                break
        return node

    def unary(self) -> Node:
        t = self.peek()
        if t is None:
            raise self.fail("query ends where a term was expected")
        self.i += 1
        if t[0] == "(":
            node = self.expr()
            if self.peek() != (")", None):
                raise self.fail("missing closing parenthesis")
            self.i += 1
            return node
        if t[0] == "node":
            return t[1]
        raise self.fail(f"unexpected {t[1] or t[0]!r}")


def parse_query(query: str) -> Node:
    """Parse an arXiv `search_query` string; raises QuerySyntaxError with the position it could not read."""
    toks = _tokens(query)
    if not toks:
        raise QuerySyntaxError("empty query", hint="give at least one term, e.g. cat:cs.CL")
    p = _Parser(toks, query)
    node = p.expr()
    if p.peek() is not None:
        raise p.fail(f"unexpected {p.peek()!r} after a complete query")
    return node


def iter_terms(node: Node) -> Iterator[Term | DateRange]:
    if isinstance(node, BoolOp):
        yield from iter_terms(node.left)
        yield from iter_terms(node.right)
    else:
        yield node
