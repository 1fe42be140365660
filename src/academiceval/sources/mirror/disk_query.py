"""Query evaluation over a `DiskIndex`, with the matching rules of the in-memory index (`index.py` docstring).

A query tree is compiled to a SQL condition on table `rec r`. Parts the postings answer exactly — v1/updated date
windows, `cat:`, `id:` — stay in SQL, and a whole exact query is counted, sorted and paged by SQLite (only the
page's rows are decoded). `au:` is a surname posting lookup (a superset: given names are checked in Python
against the stored author keys); `ti:` uses the FTS5 title pre-filter for plain-ASCII words; other text terms
have no SQL form. A query with an inexact part fetches its SQL candidates (id, dates, categories, author keys)
and evaluates the whole tree on them in Python — so the results equal the in-memory index's.

A date window next to a `cat:`/`au:` term is pushed into that term's posting lookup (`cat_q(cat, pub)`,
`author_q(skey, pub)`): the window + categories query `update` issues is one index range scan per category.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any

from academiceval.sources.errors import InvalidArxivIdError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.disk_rows import unpack
from academiceval.sources.mirror.index import _author_match, _text_matcher, text_tokens
from academiceval.sources.names import key_tokens
from academiceval.sources.query import BoolOp, DateRange, Node, Term, parse_query
from academiceval.store.paper_models import PaperMeta

if TYPE_CHECKING:
    from academiceval.sources.mirror.disk import DiskIndex

SEP = "\x1f"
Window = tuple[int, int] | None


@dataclass
class Plan:
    sql: str | None  # None: no SQL restriction (every row is a candidate)
    params: list[Any] = field(default_factory=list)
    exact: bool = True
    # non-empty: the hits are exactly the records posted under these (category, v1 window) ranges of `cat_q` — a
    # `cat:` term, an OR of them, or a window ANDed with them (pushed into each); ORs of such plans merge, and their
    # pages are ordered from the postings alone (`_postings_page`)
    cats: tuple[tuple[str, Window], ...] = ()


def _cat_plan(terms: tuple[tuple[str, Window], ...]) -> Plan:
    """One posting scan for `cat:a OR cat:b OR ...` (each a range of `cat_q`). A term whose category has an
    ancestor among the others' under the same window is dropped: `cat:astro-ph` already matches every
    `astro-ph.*` record, and its postings would be read twice (the month window + categories index query at 2.7M
    records, p50 25 -> 17 ms, p95 36 -> 26 ms; benchmarks/mirror_scale.py)."""
    plain = {(v, w) for v, w in terms if not v.endswith("*")}
    kept: list[tuple[str, Window]] = []
    for v, w in dict.fromkeys(terms):
        parts = v.split(".")
        if not v.endswith("*") and any((".".join(parts[:i]), w) in plain for i in range(1, len(parts))):
            continue
        kept.append((v, w))
    conds = [_cat_cond(v, w) for v, w in kept]
    cond = " OR ".join(c for c, _ in conds)
    params = [x for _, ps in conds for x in ps]
    return Plan(f"r.rid IN (SELECT c.rid FROM cat c WHERE {cond})", params, cats=tuple(kept))


@functools.lru_cache(maxsize=1024)
def _window(node: DateRange) -> tuple[int, int]:
    lo = int(node.start.replace(tzinfo=UTC).timestamp())
    hi = int(node.end.replace(tzinfo=UTC, second=59, microsecond=0).timestamp())
    return lo, hi


def _cat_cond(value: str, window: Window) -> tuple[str, list[Any]]:
    """A range of index `cat_q(cat, pub)`. Postings hold each category and its dotted prefixes ("astro-ph.GA"
    is also posted as "astro-ph"), so `cat:astro-ph` (= astro-ph or astro-ph.*) is one equality, window included."""
    v = value.strip()
    w, wp = (" AND c.pub BETWEEN ? AND ?", list(window)) if window else ("", [])
    if v.endswith("*"):
        p = v[:-1]
        return f"(c.cat >= ? AND c.cat < ?{w})", [p, p + "\U0010ffff", *wp]
    return f"(c.cat = ?{w})", [v, *wp]


def _fts_query(value: str) -> str | None:
    toks = text_tokens(value.rstrip("*"))
    if not toks or not all(t.isascii() and t.isalnum() for t in toks):
        return None
    if value.endswith("*") and len(toks) == 1:
        return f"{toks[0]}*"
    return " ".join(f'"{t}"' for t in toks)


def plan(node: Node, window: Window = None) -> Plan:
    """SQL superset of the node's hits (exact when `Plan.exact`); `window` = an enclosing v1 date window."""
    if isinstance(node, BoolOp):
        if node.op == "AND":
            sub = window
            for side in (node.left, node.right):
                if isinstance(side, DateRange) and side.field == "submittedDate":
                    sub = _window(side)
            left, right = plan(node.left, sub), plan(node.right, sub)
            parts = [p for p in (left, right) if p.sql]
            sql = " AND ".join(f"({p.sql})" for p in parts) or None
            out = Plan(sql, [x for p in parts for x in p.params], left.exact and right.exact)
            for side, other in ((node.left, right), (node.right, left)):
                # window AND (cat OR ...) with the window in every posting range: a posting's `pub` is its record's
                # (`Prepared.postings`), so the window adds nothing to the postings and the hits are theirs
                if not (isinstance(side, DateRange) and side.field == "submittedDate" and other.cats):
                    continue
                if all(w == _window(side) for _, w in other.cats):
                    out.cats = other.cats
            return out
        if node.op == "OR":
            left, right = plan(node.left, window), plan(node.right, window)
            if left.cats and right.cats:  # one posting scan for "cat:a OR cat:b OR ..."
                return _cat_plan(left.cats + right.cats)
            if left.sql is None or right.sql is None:
                return Plan(None, [], False)
            return Plan(f"({left.sql}) OR ({right.sql})", left.params + right.params, left.exact and right.exact)
        left, right = plan(node.left, window), plan(node.right, window)  # ANDNOT
        if right.exact and right.sql:
            base = f"({left.sql}) AND " if left.sql else ""
            return Plan(f"{base}NOT ({right.sql})", left.params + right.params, left.exact)
        return Plan(left.sql, left.params, False)
    if isinstance(node, DateRange):
        col = "r.pub" if node.field == "submittedDate" else "r.usort"
        return Plan(f"{col} BETWEEN ? AND ?", list(_window(node)))
    f, v = node.field, node.value
    if f == "id":
        try:
            return Plan("r.arxiv_id = ?", [parse_arxiv_id(v)[0]])
        except InvalidArxivIdError:
            return Plan("0")
    if f == "cat":
        return _cat_plan(((v.strip(), window),))
    if f == "au":
        q = key_tokens(v.replace("_", " ").rstrip("*"))
        if not q:
            return Plan("0")
        cond, params = "a.skey = ?", [q[-1]]
        if window:
            cond, params = f"{cond} AND a.pub BETWEEN ? AND ?", [*params, *window]
        return Plan(f"r.rid IN (SELECT a.rid FROM author a WHERE {cond})", params, exact=False)
    if f == "ti":
        fq = _fts_query(v)
        if fq:
            return Plan("r.rid IN (SELECT rowid FROM title_fts WHERE title_fts MATCH ?)", [fq], exact=False)
    return Plan(None, [], False)


class _Row:
    """A candidate row; the record's text is decoded only if a text term asks for it."""

    __slots__ = ("_meta", "_tokens", "akeys", "arxiv_id", "blob", "cats", "pub", "rid", "usort")

    def __init__(
        self, rid: int, pub: int, usort: int, arxiv_id: str, cats: str, akeys: str, blob: bytes | None
    ) -> None:
        self.rid, self.pub, self.usort, self.arxiv_id = rid, pub, usort, arxiv_id
        self.cats, self.akeys, self.blob = cats.split(), akeys, blob
        self._meta: PaperMeta | None = None
        self._tokens: dict[str, list[str]] = {}

    def authors(self, surname: str = "") -> list[list[str]]:
        """Author key tokens; with `surname`, only the keys that contain it (a collaboration paper lists hundreds
        of authors, and an `au:` check needs only those that can match its surname)."""
        if not self.akeys:
            return []
        return [a.split() for a in self.akeys.split(SEP) if surname in a]

    def tokens(self, attr: str) -> list[str]:
        if attr not in self._tokens:
            if self._meta is None:
                assert self.blob is not None, "the query's plan said no text is read"
                self._meta = PaperMeta.model_validate_json(unpack(self.blob))
            m = self._meta
            text = {"title": m.title, "abstract": m.abstract, "comment": m.comment, "journal": m.journal_ref}[attr]
            self._tokens[attr] = text_tokens(text or "")
        return self._tokens[attr]


@functools.lru_cache(maxsize=4096)
def _name_query(value: str) -> tuple[str, ...]:
    """The key tokens of an `au:` value (computed once per query term, not once per candidate row)."""
    return tuple(key_tokens(value.replace("_", " ").rstrip("*")))


@functools.lru_cache(maxsize=1024)
def _compiled_text(node: Term) -> Any:
    return _text_matcher(node)


def _needs_text(node: Node) -> bool:
    """Does evaluating the tree read a record's text (title, abstract, …)? Only then are the candidates' stored
    records fetched with them: an `au:` + window query reads thousands of candidates and needs none."""
    if isinstance(node, BoolOp):
        return _needs_text(node.left) or _needs_text(node.right)
    return isinstance(node, Term) and node.field not in ("au", "cat", "id")


def _cat_match(cats: list[str], value: str) -> bool:
    v = value.strip()
    if v.endswith("*"):
        return any(c.startswith(v[:-1]) for c in cats)
    return any(c == v or c.startswith(v + ".") for c in cats)


def matches(node: Node, row: _Row) -> bool:
    """The in-memory index's rules, on one candidate row."""
    if isinstance(node, BoolOp):
        if node.op == "AND":
            return matches(node.left, row) and matches(node.right, row)
        if node.op == "OR":
            return matches(node.left, row) or matches(node.right, row)
        return matches(node.left, row) and not matches(node.right, row)
    if isinstance(node, DateRange):
        lo, hi = _window(node)
        ts = row.pub if node.field == "submittedDate" else row.usort
        return lo <= ts <= hi
    f, v = node.field, node.value
    if f == "au":
        q = _name_query(v)
        return bool(q) and q[-1] in row.akeys and any(_author_match(toks, q) for toks in row.authors(q[-1]))
    if f == "cat":
        return _cat_match(row.cats, v)
    if f == "id":
        try:
            return row.arxiv_id == parse_arxiv_id(v)[0]
        except InvalidArxivIdError:
            return False
    attrs = {"ti": ("title",), "abs": ("abstract",), "co": ("comment",), "jr": ("journal",)}.get(
        f, ("title", "abstract", "comment")
    )
    match = _compiled_text(node)
    if any(match(row.tokens(a), None) for a in attrs):
        return True
    if f in ("all", "rn"):
        q = _name_query(v)
        return (bool(q) and any(_author_match(t, q) for t in row.authors(q[-1]))) or _cat_match(row.cats, v)
    return False


def run_query(
    idx: DiskIndex,
    query: str | Node,
    *,
    start: int = 0,
    max_results: int | None = 100,
    sort_by: str = "submittedDate",
    sort_order: str = "descending",
    decode: Callable[[list[int]], list[Any]] | None = None,
    from_postings: bool = True,
) -> tuple[int, list[Any]]:
    """(total hits, the page decoded by `decode` — `idx.records_by_rid` by default, `idx.metas_by_rid` for
    `MirrorSource`'s pages of bare `PaperMeta`). `from_postings=False` orders a window + categories query the way
    it was ordered before `_postings_page` (every hit's `rec` row, sorted by SQLite): the baseline of
    `benchmarks/mirror_scale.py --reuse` and of the test that shows both orders equal."""
    with gc_paused():
        return _run_query(
            idx, query, start, max_results, sort_by, sort_order, decode or idx.records_by_rid, from_postings
        )


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (re-enabled after it only if it was on before it).

    A page allocates ~10⁴-10⁵ containers (row tuples, entries, records; none in a cycle). With the collector
    running, the young collections they trigger promote the page's first objects to the old generations, and
    every few pages a full collection walks the whole process (66 CPU-ms in the benchmark's process, more in a
    bigger one): that was the p95 of a 2,000-entry page (CPU p95 93-101 vs 20-22 ms paused, p50 20 vs 18 ms;
    benchmarks/mirror_scale.py, notes/scale.md). Paused, the page's objects are young when it is handed back.

    Counted under a lock: `mirror serve` queries from several threads, and a thread that saw the collector off
    (another thread's pause) must not leave it off for good."""
    global _pauses, _was_on
    with _pause_lock:
        if _pauses == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_on:
                gc.enable()


_pause_lock = threading.Lock()
_pauses = 0
_was_on = False


def _run_query(
    idx: DiskIndex, query: str | Node, start: int, max_results: int | None, sort_by: str, sort_order: str,
    decode: Callable[[list[int]], list[Any]], from_postings: bool,
) -> tuple[int, list[Any]]:  # fmt: skip
    node = parse_query(query) if isinstance(query, str) else query
    p = plan(node)
    where = f"WHERE {p.sql}" if p.sql else ""
    col = "r.usort" if sort_by == "lastUpdatedDate" else "r.pub"
    desc = sort_order == "descending"
    order = f"{col} {'DESC' if desc else 'ASC'}, r.arxiv_id {'DESC' if desc else 'ASC'}"
    start = max(0, start)
    c = idx.conn()
    if p.exact and p.cats and from_postings and col == "r.pub" and len(p.cats) <= MERGED_RANGES:
        total, rids = _postings_page(c, p.cats, start, max_results, desc)
        return total, decode(rids)
    if p.exact:  # one evaluation: every hit's rid in order (small ints), then decode only the page
        rids = [r[0] for r in c.execute(f"SELECT r.rid FROM rec r {where} ORDER BY {order}", p.params)]
        page = rids[start:] if max_results is None else rids[start : start + max(0, max_results)]
        return len(rids), decode(page)
    meta = "r.meta" if _needs_text(node) else "NULL"
    sql = f"SELECT r.rid, r.pub, r.usort, r.arxiv_id, r.cats, r.akeys, {meta} FROM rec r {where}"
    hits = [row for row in (_Row(*t) for t in c.execute(sql, p.params)) if matches(node, row)]
    key = (lambda h: (h.usort, h.arxiv_id)) if sort_by == "lastUpdatedDate" else (lambda h: (h.pub, h.arxiv_id))
    hits.sort(key=key, reverse=desc)
    page = hits[start:] if max_results is None else hits[start : start + max(0, max_results)]
    return len(hits), decode([h.rid for h in page])


MERGED_RANGES = 64  # a compound SELECT may have 500 arms (SQLITE_MAX_COMPOUND_SELECT); a page of more ranges
# is ordered the general way
TIE_MARGIN = 64  # rows read on each side of a page, so that the runs of equal dates at its ends are whole


def _postings_page(
    c: Any, cats: tuple[tuple[str, Window], ...], start: int, max_results: int | None, desc: bool
) -> tuple[int, list[int]]:
    """(total hits, the page's rids in (v1 date, arXiv id) order) of a query whose hits are these posting ranges,
    read from index `cat_q` alone: its entries are (cat, pub, rid), so each range of one category comes out in
    (pub, rid) order, and a `UNION` of the ranges is a merge (SQLite: `MERGE (UNION)`, no sorter) that also drops
    a record posted under two of them. The general path reads every hit's `rec` row for its date and id and sorts
    them all: at 2.7M records a month of the astro-ph categories is ~10,000 hits for a page of 2,000 (index part
    p50 20.4 -> 5.6 ms reading every merged row into Python, 3.1 ms counting them in SQLite and reading only the
    page; benchmarks/mirror_scale.py, notes/scale.md).

    The merge orders equal dates by rid, and the page's order breaks them by arXiv id; rids do not follow ids
    (a merged or later-read record keeps its first rid). So the runs of equal dates that touch the page are
    re-sorted by id (their ids fetched): with second-resolution v1 dates they are few; a listing's day-resolution
    dates make long runs. The order of whole runs is the dates', so only the page's runs matter: the page is read
    with `TIE_MARGIN` rows on each side, and if a run at one of its ends reaches the margin's edge, every hit is
    read instead (what a page without a bound does anyway)."""
    arms, params = [], []
    for v, w in cats:
        cond, ps = _cat_cond(v, w)
        distinct = "DISTINCT " if v.endswith("*") else ""  # a prefix range holds a record once per category
        arms.append(f"SELECT {distinct}c.pub, c.rid FROM cat c WHERE {cond}")
        params += ps
    way = "DESC" if desc else "ASC"
    merged = f"{' UNION '.join(arms)} ORDER BY 1 {way}, 2 {way}"
    if max_results is not None:
        with _snapshot(c):  # the count and the rows of one state of the index (`mirror serve` reads while it grows)
            total = c.execute(f"SELECT count(*) FROM ({merged})", params).fetchone()[0]
            lo, hi = start, min(total, start + max(0, max_results))
            if lo >= hi:
                return total, []
            off = max(0, lo - TIE_MARGIN)
            rows = c.execute(f"{merged} LIMIT ? OFFSET ?", [*params, hi + TIE_MARGIN - off, off]).fetchall()
            first, last = rows[lo - off][0], rows[hi - 1 - off][0]
            if (off == 0 or rows[0][0] != first) and (off + len(rows) == total or rows[-1][0] != last):
                return total, _in_order(c, rows, lo - off, hi - off, desc)
    rows = c.execute(merged, params).fetchall()
    n = len(rows)
    lo, hi = start, n if max_results is None else min(n, start + max(0, max_results))
    return n, _in_order(c, rows, lo, hi, desc) if lo < hi else []


@contextmanager
def _snapshot(c: Any) -> Iterator[None]:
    """A read transaction around the block (WAL: its statements see one state of the file), unless one is open.
    Ended whatever happens in the block (a `time_limit` interrupt included), so the thread's connection does not
    keep an old snapshot open; a SELECT that is interrupted does not end it by itself."""
    if c.in_transaction:
        yield
        return
    c.execute("BEGIN")
    try:
        yield
    finally:
        if c.in_transaction:
            c.execute("COMMIT")


def _in_order(c: Any, rows: list[tuple[int, int]], lo: int, hi: int, desc: bool) -> list[int]:
    """The rids of `rows[lo:hi]` ((pub, rid) in merge order) in (pub, arXiv id) order: the runs of equal dates
    that touch the page, widened to whole runs within `rows`, re-sorted by id."""
    a, b = lo, hi
    while a > 0 and rows[a - 1][0] == rows[a][0]:
        a -= 1
    while b < len(rows) and rows[b][0] == rows[b - 1][0]:
        b += 1
    seg = rows[a:b]
    pubs = [pub for pub, _ in seg]
    if len(set(pubs)) < len(pubs):
        runs = Counter(pubs)
        tied = [rid for pub, rid in seg if runs[pub] > 1]
        ids: dict[int, str] = {}
        for i in range(0, len(tied), 900):
            chunk = tied[i : i + 900]
            ids.update(c.execute(f"SELECT rid, arxiv_id FROM rec WHERE rid IN ({','.join('?' * len(chunk))})", chunk))
        seg.sort(key=lambda t: (t[0], ids.get(t[1], "")), reverse=desc)
    return [rid for _, rid in seg[lo - a : hi - a]]
