"""Breadth-first crawl of the co-author graph.

Per visited author: their recent papers (one `au:` query through the source); a paper becomes a node feature
only where the author is the *first* author; co-author frequency is counted over those papers; the top-k
co-authors (ties broken by key, so the order never depends on the source's ordering) are queued. The cap is on
authors visited, not on the queue.

Why one transaction per author: the queue, the visited mark, the papers and the edges of one visit are written
together, so `kill -9` at any moment leaves either the whole visit or none of it, and the same command resumes
from the next queued author. The queue is a persisted FIFO (`graph_author.queue_pos`), so an interrupted and
resumed crawl visits exactly the authors an uninterrupted one would, in the same order.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from pydantic import BaseModel

from academiceval.errors import ConfigError
from academiceval.graph import store
from academiceval.graph.names import author_query, fill_keys, key_of
from academiceval.graph.refine import RefineReport
from academiceval.graph.refine import refine as run_refine
from academiceval.sources.base import MetadataSource
from academiceval.sources.errors import RetriesExhaustedError, SourceError
from academiceval.store.paper_models import PaperMeta
from academiceval.store.workspace import Workspace, now_iso

ProgressFn = Callable[[int, int, str], None]  # (visited so far, cap, display name of the author just visited)


class CrawlOptions(BaseModel):
    """What defines a crawl; a resumed crawl must use the same options (the cap may grow)."""

    top_k: int = 20
    papers_per_author: int = 100
    since: date | None = None
    until: date | None = None

    def comparable(self) -> dict[str, object]:
        return self.model_dump(mode="json")


class CrawlReport(BaseModel):
    """What one `collect` call did (the totals are over the whole crawl, resumed parts included)."""

    visited_now: int = 0
    visited_total: int = 0
    queued: int = 0
    nodes: int = 0  # visited authors with at least one first-author paper
    papers: int = 0
    edges: int = 0
    failed: int = 0
    api_calls: int = 0
    stopped_early: str | None = None  # reason when the source kept failing (resume with the same command)
    refined: RefineReport | None = None  # the refinement run at the end (None when stopped early or disabled)


@dataclass
class Visit:
    """The outcome of fetching one author, before it is written."""

    key: str
    name: str
    papers: list[PaperMeta] = field(default_factory=list)  # every fetched paper listing this author
    first: list[PaperMeta] = field(default_factory=list)  # first-author papers (the node features)
    coauthors: list[tuple[str, str, int]] = field(default_factory=list)  # (key, display name, count), ranked


def fetch_author(
    source: MetadataSource,
    key: str,
    name: str,
    *,
    top_k: int,
    papers_per_author: int,
    since: date | None = None,
    until: date | None = None,
) -> Visit:
    """One author query; matching is local, by author key (the source's `au:` search is only a pre-filter)."""
    query = author_query(name, since=since, until=until)
    page = min(100, max(1, papers_per_author))
    visit = Visit(key=key, name=name)
    seen: set[str] = set()
    for meta in source.iter_search(query, page_size=page, limit=papers_per_author):
        meta = fill_keys(meta)
        if meta.arxiv_id in seen or not any(a.key == key for a in meta.authors):
            continue
        if (since and meta.published < since) or (until and meta.published > until):
            continue
        seen.add(meta.arxiv_id)
        visit.papers.append(meta)
        if meta.authors[0].key == key:
            visit.first.append(meta)
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}  # display name as written on the co-author's newest shared paper
    for meta in sorted(visit.first, key=lambda m: (m.published, m.arxiv_id), reverse=True):
        for k, a in {a.key: a for a in meta.authors[1:]}.items():
            if k and k != key:
                counts[k] += 1
                names.setdefault(k, a.name)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
    visit.coauthors = [(k, names[k], c) for k, c in ranked]
    return visit


def write_visit(ws: Workspace, conn: sqlite3.Connection, visit: Visit, depth: int, added_by: str = "crawl") -> int:
    """Write one visit inside the caller's transaction; returns the number of new graph papers."""
    ws.upsert_meta(visit.papers, conn=conn)
    new_papers = 0
    for meta in visit.first:
        cur = conn.execute(
            "INSERT OR IGNORE INTO graph_paper(arxiv_id, author_key, published, added_by) VALUES (?,?,?,?)",
            (meta.arxiv_id, visit.key, meta.published.isoformat(), added_by),
        )
        new_papers += cur.rowcount
    for k, name, _ in visit.coauthors:
        store.enqueue(conn, k, name, depth + 1, added_by)
    store.add_edges(conn, [(visit.key, k) for k, _, _ in visit.coauthors])
    n_first = store.count(conn, "SELECT COUNT(*) FROM graph_paper WHERE author_key=?", (visit.key,))
    conn.execute(
        "UPDATE graph_author SET state='visited', visited_at=?, first_papers=?, visited_in=? WHERE key=?",
        (now_iso(), n_first, added_by, visit.key),
    )
    return new_papers


def _check_options(ws: Workspace, opts: CrawlOptions) -> None:
    """A crawl resumed with other options would not be the crawl it claims to be: refuse, say why."""
    stored = ws.get_doc(store.CRAWL_OPTIONS_KEY)
    if stored is None:
        ws.put_doc(store.CRAWL_OPTIONS_KEY, opts.comparable())
    elif stored != opts.comparable():
        raise ConfigError(
            f"this workspace holds a crawl made with other options {stored}, not {opts.comparable()}",
            source=str(ws.home),
            hint="repeat the original options to resume or extend it, or use a fresh --home",
        )


def collect(
    ws: Workspace,
    source: MetadataSource,
    seed_authors: Sequence[str],
    *,
    max_authors: int,
    top_k: int = 20,
    papers_per_author: int = 100,
    since: date | None = None,
    until: date | None = None,
    progress: ProgressFn | None = None,
    refine: bool = True,
    max_papers_per_author: int | None = None,
    seed: int = 0,
) -> CrawlReport:
    """Crawl breadth-first from the seeds until `max_authors` authors have been visited (resumable).

    Running it again with the same arguments continues an interrupted crawl; a larger `max_authors` extends a
    finished one. Source failures that persist through the client's retries stop the crawl with
    `stopped_early` set (nothing half-written; run again to resume); per-author errors that are not transient
    (a rejected query, say) are recorded in `graph_error` and the crawl goes on. At the end the graph is refined
    (`refine`, with the popularity options) unless `refine=False`.
    """
    if max_authors < 1:
        raise ConfigError("--max-authors must be at least 1", hint="e.g. --max-authors 500")
    if top_k < 1 or papers_per_author < 1:
        raise ConfigError("--top-k and --papers-per-author must be at least 1")
    if since and until and since > until:
        raise ConfigError(f"--since {since} is after --until {until}")
    seeds = [(key_of(s), s.strip()) for s in seed_authors if s.strip()]
    seeds = [(k, n) for k, n in seeds if k]
    if not seeds:
        raise ConfigError("no usable seed author", hint="pass --seed-author 'First Last'")
    opts = CrawlOptions(top_k=top_k, papers_per_author=papers_per_author, since=since, until=until)
    store.ensure(ws)
    _check_options(ws, opts)
    with ws.transaction() as conn:
        for k, n in seeds:
            store.enqueue(conn, k, n, 0)

    report = CrawlReport()
    calls0 = source.requests_made
    conn = ws.db
    done = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state IN ('visited','failed')")
    while done < max_authors:
        row = conn.execute(
            "SELECT key, name, depth FROM graph_author WHERE state='queued' ORDER BY queue_pos LIMIT 1"
        ).fetchone()
        if row is None:
            break
        key, name, depth = row["key"], row["name"], row["depth"]
        try:
            visit = fetch_author(
                source, key, name, top_k=top_k, papers_per_author=papers_per_author, since=since, until=until
            )
        except RetriesExhaustedError as exc:
            report.stopped_early = str(exc)
            break
        except SourceError as exc:
            if exc.retryable:
                report.stopped_early = str(exc)
                break
            with ws.transaction() as c:
                store.record_error(c, key, exc.code, str(exc))
                c.execute("UPDATE graph_author SET state='failed', visited_at=? WHERE key=?", (now_iso(), key))
            report.failed += 1
        else:
            with ws.transaction() as c:
                write_visit(ws, c, visit, depth)
        done += 1
        report.visited_now += 1
        if progress:
            progress(done, max_authors, name)
    report.api_calls = source.requests_made - calls0
    _fill_totals(conn, report)
    if refine and report.stopped_early is None:
        report.refined = run_refine(ws, max_papers_per_author=max_papers_per_author, seed=seed)
    return report


def _fill_totals(conn: sqlite3.Connection, r: CrawlReport) -> None:
    r.visited_total = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state='visited'")
    r.queued = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state='queued'")
    r.nodes = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state='visited' AND first_papers>0")
    r.papers = store.count(conn, "SELECT COUNT(*) FROM graph_paper")
    r.edges = store.count(conn, "SELECT COUNT(*) FROM graph_edge")
    r.failed = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state='failed'")
