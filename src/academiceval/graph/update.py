"""Live update of the co-author graph: add what is new, prune what went stale, keep the largest component.

Why not one query per author (the original method): its cost grows with the graph, every month. Here new papers
are found with date-window queries over the graph's categories (pages of up to 2,000 records), matched to graph
authors *locally* by author key; per-author queries are spent only on new candidate authors. So the cost grows
with what is new, not with the size of the graph.

Steps (each recorded in `graph_update` with dates, what was added and pruned, and API calls):
1. node update: new first-author papers of graph authors (from the window pages alone);
2. node+edge update (when `new_papers` is given): co-authors on the new papers who are not yet nodes, ranked by
   the number of new papers of the graph author who brought them in (ties: candidates who first-authored window
   papers first — known from the pages already read), visited breadth-first (their own co-authors queue behind
   them) until the update has added `new_papers` papers in the window;
3. pruning: authors with no paper since `inactive_after`, papers older than the retention window; then refine
   (largest connected component again).
Interrupted updates resume: running the same command again reuses the unfinished record; step 2 rebuilds its
queue from the database (initial candidates, then authors it queued, in queue order).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import date, timedelta

from pydantic import BaseModel, Field

from academiceval.errors import ConfigError
from academiceval.graph import store
from academiceval.graph.crawl import CrawlOptions, fetch_author, write_visit
from academiceval.graph.names import fill_keys, window_query
from academiceval.graph.refine import RefineReport, refine, refine_options
from academiceval.sources.base import MetadataSource
from academiceval.sources.entries import PageEntry, search_entries
from academiceval.store.paper_models import PaperMeta
from academiceval.store.workspace import Workspace, categories_of, latest_published_by_author, now_iso

WINDOW_PAGE = 2000  # arXiv's largest page
MAX_WINDOW_RESULTS = 20000  # deeper paging is unreliable on arXiv: larger windows are split in halves


def iter_window(
    source: MetadataSource,
    since: date,
    until: date,
    categories: list[str],
    *,
    page_size: int = WINDOW_PAGE,
    max_results: int = MAX_WINDOW_RESULTS,
) -> Iterator[PageEntry]:
    """Every paper submitted in [since, until] in the categories, oldest first, page by page, as light entries
    (id, v1 date, author keys; `entry.meta()` for the full record): the local mirror builds them
    without decoding the records, most of which the update only scans (`sources/entries.py`).

    A window whose first page reports more than `max_results` is split into two halves (one probe request
    spent); a small window costs exactly ceil(results / page_size) requests.
    """
    query = window_query(since, until, categories)
    order = {"sort_by": "submittedDate", "sort_order": "ascending"}
    page = search_entries(source, query, start=0, max_results=page_size, **order)
    if page.total_results > max_results and since < until:
        mid = since + (until - since) // 2
        yield from iter_window(source, since, mid, categories, page_size=page_size, max_results=max_results)
        yield from iter_window(
            source, mid + timedelta(days=1), until, categories, page_size=page_size, max_results=max_results
        )
        return
    start = 0
    while True:
        yield from page.items
        start += len(page.items)
        if not page.items or start >= page.total_results:
            return
        page = search_entries(source, query, start=start, max_results=page_size, **order)


ProgressFn = Callable[[str, int, int], None]  # (step, done, total)


class UpdateReport(BaseModel):
    """What one update did; stored as JSON in `graph_update.json`."""

    id: int
    since: date
    until: date | None
    categories: list[str] = Field(default_factory=list)
    window_papers: int = 0  # papers returned by the window queries
    node_papers: list[str] = Field(default_factory=list)  # step 1: new first-author papers of graph authors
    candidates: int = 0  # step 2: co-authors of new papers who are not nodes yet
    authors_added: list[str] = Field(default_factory=list)
    expansion_papers: int = 0  # step 2: window papers added through new authors
    papers_added: int = 0  # window papers added in total (steps 1+2)
    edges_added: int = 0
    authors_pruned: int = 0
    papers_pruned: int = 0
    window_calls: int = 0
    author_calls: int = 0
    api_calls: int = 0
    refine: RefineReport | None = None
    # the refined graph (largest component) before and after, and why its size changed: so the counts add up
    graph_before: int = 0
    graph_after: int = 0
    joined_new: int = 0  # authors this update added who are in the refined graph
    joined_crawled: int = 0  # authors crawled earlier who now qualify (a new first-author paper or edge)
    left_no_paper: int = 0  # left the graph: no first-author paper any more (pruned)
    left_component: int = 0  # left the graph: no longer connected to the largest component

    def graph_change(self) -> str:
        """`5 → 10 (+3 new co-authors, +2 crawled earlier now qualify, −0 …)`: before + joined − left = after."""
        return (
            f"{self.graph_before} → {self.graph_after} (+{self.joined_new} new co-authors, +{self.joined_crawled} "
            f"crawled earlier that now have a first-author paper or a link into the largest component, "
            f"−{self.left_no_paper} without a first-author paper, −{self.left_component} outside the largest component)"
        )


def _graph_categories(ws: Workspace) -> list[str]:
    """Every category (primary or cross-list) of the graph's papers: where its authors publish.

    A window query over these finds every new paper the per-author queries would, as long as a graph author's
    new paper carries at least one category the graph has seen before.
    """
    ids = [
        r[0]
        for r in ws.db.execute(
            "SELECT p.arxiv_id FROM graph_paper p JOIN graph_author a ON a.key = p.author_key WHERE a.state='visited'"
        )
    ]
    return sorted(categories_of(ws.db, ids))


def _open_record(ws: Workspace, since: date, until: date | None) -> int:
    """Reuse the unfinished record of the same window (a resumed update), else start a new one."""
    row = ws.db.execute(
        "SELECT id FROM graph_update WHERE finished_at IS NULL AND since=? AND until IS ? ORDER BY id DESC LIMIT 1",
        (since.isoformat(), until.isoformat() if until else None),
    ).fetchone()
    if row:
        return int(row[0])
    cur = ws.db.execute(
        "INSERT INTO graph_update(since, until, started_at) VALUES (?,?,?)",
        (since.isoformat(), until.isoformat() if until else None, now_iso()),
    )
    return int(cur.lastrowid or 0)


def update(
    ws: Workspace,
    source: MetadataSource,
    since: date,
    until: date | None = None,
    new_papers: int | None = None,
    inactive_after: date | None = None,
    retention: timedelta | None = None,
    *,
    progress: ProgressFn | None = None,
    max_window_results: int = MAX_WINDOW_RESULTS,
) -> UpdateReport:
    """Bring the graph up to date with papers submitted in [since, until] (until: today when omitted)."""
    if until and since > until:
        raise ConfigError(f"--since {since} is after --until {until}")
    if new_papers is not None and new_papers < 0:
        raise ConfigError("--new-papers must be 0 or more")
    if retention is not None and retention <= timedelta(0):
        raise ConfigError("the retention window must be positive", hint="e.g. --retention-days 730")
    store.ensure(ws)
    cats = _graph_categories(ws)
    if not cats:
        raise ConfigError("the workspace has no co-author graph yet", hint="run `academiceval collect` first")
    stored = ws.get_doc(store.CRAWL_OPTIONS_KEY)
    opts = CrawlOptions.model_validate(stored) if isinstance(stored, dict) else CrawlOptions()
    uid = _open_record(ws, since, until)
    tag = f"update:{uid}"
    rep = UpdateReport(id=uid, since=since, until=until, categories=cats)
    conn = ws.db
    calls0 = source.requests_made
    in_graph_before = {r[0] for r in conn.execute("SELECT key FROM graph_author WHERE in_graph=1")}
    # authors that were nodes before this update (a resumed update must see the same set)
    graph = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT key, depth FROM graph_author WHERE state='visited' AND COALESCE(visited_in,'') != ?", (tag,)
        )
    }

    # ---- step 1: window pages, matched locally ---------------------------------------------------------------
    relevant: list[PaperMeta] = []
    window_first: Counter[str] = Counter()  # first authors of every window paper (ranks candidates in step 2)
    hi = until or date.today()
    for entry in iter_window(source, since, hi, cats, max_results=max_window_results):
        rep.window_papers += 1
        if not since <= entry.published <= hi:
            continue
        if entry.author_keys:
            window_first[entry.author_keys[0]] += 1
        if any(k in graph for k in entry.author_keys):
            relevant.append(fill_keys(entry.meta()))  # only these records are decoded
        if progress:
            progress("window", rep.window_papers, 0)
    rep.window_calls = source.requests_made - calls0
    relevant.sort(key=lambda m: m.arxiv_id)
    with ws.transaction() as c:
        ws.upsert_meta(relevant, conn=c)
        pairs: list[tuple[str, str]] = []
        for m in relevant:
            first = m.authors[0].key
            if first not in graph:
                continue
            c.execute(
                "INSERT OR IGNORE INTO graph_paper(arxiv_id, author_key, published, added_by) VALUES (?,?,?,?)",
                (m.arxiv_id, first, m.published.isoformat(), tag),
            )
            pairs += [(first, a.key) for a in m.authors[1:] if a.key in graph]
        rep.edges_added += store.add_edges(c, pairs)
    tagged = {r[0] for r in conn.execute("SELECT arxiv_id FROM graph_paper WHERE added_by=?", (tag,))}
    rep.node_papers = [m.arxiv_id for m in relevant if m.authors[0].key in graph and m.arxiv_id in tagged]

    # ---- step 2: new co-authors, ranked by their bringer's number of new papers ---------------------------------
    # (a resumed update reports the authors its interrupted runs added too)
    rep.authors_added = [
        r[0] for r in conn.execute("SELECT key FROM graph_author WHERE visited_in=? ORDER BY visited_at, key", (tag,))
    ]
    if new_papers:
        _expand(ws, source, rep, relevant, window_first, graph, opts, since, hi, new_papers, tag, progress)

    # ---- step 3: pruning, then the largest component again ----------------------------------------------------
    with ws.transaction() as c:
        if inactive_after is not None:
            rep.authors_pruned, pruned_papers = _prune_inactive(c, inactive_after)
            rep.papers_pruned += pruned_papers
        if retention is not None:
            rep.papers_pruned += _prune_old(c, hi - retention)
    ropts = refine_options(ws)
    rep.refine = refine(ws, max_papers_per_author=ropts["max_papers_per_author"], seed=int(ropts["seed"] or 0))
    after = {r[0]: r[1] for r in conn.execute("SELECT key, first_papers FROM graph_author WHERE in_graph=1")}
    added = set(rep.authors_added)
    rep.graph_before, rep.graph_after = len(in_graph_before), len(after)
    rep.joined_new = sum(1 for k in after if k not in in_graph_before and k in added)
    rep.joined_crawled = sum(1 for k in after if k not in in_graph_before and k not in added)
    papers_now = dict(conn.execute("SELECT key, first_papers FROM graph_author").fetchall())
    left = [k for k in in_graph_before if k not in after]
    rep.left_no_paper = sum(1 for k in left if not papers_now.get(k))
    rep.left_component = len(left) - rep.left_no_paper
    rep.papers_added = _window_papers_added(ws, tag, since, hi)
    rep.expansion_papers = max(0, rep.papers_added - len(rep.node_papers))
    rep.api_calls = source.requests_made - calls0
    rep.author_calls = rep.api_calls - rep.window_calls
    with ws.transaction() as c:
        c.execute(
            """UPDATE graph_update SET finished_at=?, papers_added=?, authors_added=?, edges_added=?,
               authors_pruned=?, papers_pruned=?, api_calls=?, json=? WHERE id=?""",
            (
                now_iso(),
                rep.papers_added,
                len(rep.authors_added),
                rep.edges_added,
                rep.authors_pruned,
                rep.papers_pruned,
                rep.api_calls,
                rep.model_dump_json(),
                uid,
            ),
        )
    return rep


def _window_papers_added(ws: Workspace, tag: str, since: date, hi: date) -> int:
    return store.count(
        ws.db,
        "SELECT COUNT(*) FROM graph_paper WHERE added_by=? AND published BETWEEN ? AND ?",
        (tag, since.isoformat(), hi.isoformat()),
    )


def _expand(
    ws: Workspace,
    source: MetadataSource,
    rep: UpdateReport,
    relevant: list[PaperMeta],
    window_first: Counter[str],
    graph: dict[str, int],
    opts: CrawlOptions,
    since: date,
    hi: date,
    target: int,
    tag: str,
    progress: ProgressFn | None,
) -> None:
    """Breadth-first over new co-authors until the update has added `target` window papers."""
    conn = ws.db
    new_count: dict[str, int] = defaultdict(int)  # graph author -> new papers listing them
    for m in relevant:
        for k in {a.key for a in m.authors if a.key in graph}:
            new_count[k] += 1
    priority: dict[str, int] = {}
    names: dict[str, str] = {}
    bringers: dict[str, set[str]] = defaultdict(set)
    for m in relevant:
        here = [a.key for a in m.authors if a.key in graph]
        best = max(new_count[k] for k in here)
        for a in m.authors:
            if a.key and a.key not in graph:
                priority[a.key] = max(priority.get(a.key, 0), best)
                names.setdefault(a.key, a.name)
                bringers[a.key].update(here)
    # ties (same bringer count) go first to candidates who first-authored window papers: the window pages
    # already tell us who they are, for free, and only their visits can add new papers
    initial = sorted(priority, key=lambda k: (-priority[k], -window_first.get(k, 0), k))
    rep.candidates = len(initial)

    def state(k: str) -> str | None:
        row = conn.execute("SELECT state FROM graph_author WHERE key=?", (k,)).fetchone()
        return row[0] if row else None

    def visit(k: str, name: str, depth: int, extra_edges: set[str]) -> None:
        v = fetch_author(source, k, name, top_k=opts.top_k, papers_per_author=opts.papers_per_author, until=hi)
        with ws.transaction() as c:
            store.enqueue(c, k, name, depth, tag)
            c.execute("UPDATE graph_author SET state='queued' WHERE key=? AND state='pruned'", (k,))
            write_visit(ws, c, v, depth, tag)
            rep.edges_added += store.add_edges(c, [(b, k) for b in sorted(extra_edges)])
        rep.authors_added.append(k)

    def added() -> int:
        return _window_papers_added(ws, tag, since, hi)

    for k in initial:
        if added() >= target:
            return
        if state(k) in ("visited", "failed"):
            continue
        depth = 1 + min(graph[b] for b in bringers[k])
        visit(k, names[k], depth, bringers[k])
        if progress:
            progress("expand", added(), target)
    while added() < target:  # authors queued by this update's visits, in queue order (breadth-first)
        row = conn.execute(
            "SELECT key, name, depth FROM graph_author WHERE added_by=? AND state='queued' ORDER BY queue_pos LIMIT 1",
            (tag,),
        ).fetchone()
        if row is None:
            return
        visit(row["key"], row["name"], row["depth"], set())
        if progress:
            progress("expand", added(), target)


def _prune_inactive(conn, inactive_after: date) -> tuple[int, int]:
    """Authors with no paper (any position) on or after `inactive_after` leave the graph with their papers."""
    visited = [r[0] for r in conn.execute("SELECT key FROM graph_author WHERE state='visited'")]
    latest = latest_published_by_author(conn, visited)
    keys = [k for k in visited if latest.get(k, "") < inactive_after.isoformat()]
    papers = 0
    for k in keys:
        papers += conn.execute("DELETE FROM graph_paper WHERE author_key=?", (k,)).rowcount
        conn.execute("DELETE FROM graph_edge WHERE a=? OR b=?", (k, k))
        conn.execute("UPDATE graph_author SET state='pruned', in_graph=0, first_papers=0 WHERE key=?", (k,))
    return len(keys), papers


def _prune_old(conn, cutoff: date) -> int:
    """Papers older than the retention window stop being node features; unsupported edges go with them."""
    rows = conn.execute("SELECT arxiv_id, author_key FROM graph_paper WHERE published < ?", (cutoff.isoformat(),))
    rows = rows.fetchall()
    touched = {r[1] for r in rows}
    conn.executemany("DELETE FROM graph_paper WHERE arxiv_id=?", [(r[0],) for r in rows])
    # a paper supports only edges at its first author, so refreshing those edges is enough
    store.refresh_weights(conn, touched)
    return len(rows)


def history(ws: Workspace) -> list[dict[str, object]]:
    """Every recorded update, oldest first (dates, counts, API calls)."""
    out = []
    for r in ws.db.execute("SELECT * FROM graph_update ORDER BY id"):
        d = dict(r)
        d["json"] = json.loads(d["json"]) if d["json"] else None
        out.append(d)
    return out
