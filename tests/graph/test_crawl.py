"""Crawl and refine on the real astro-ph listings, checked against ground truth computed from the records."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import networkx as nx
import pytest
from graph_data import CRAWL_UNTIL, DiesAfter

from academiceval.errors import ConfigError
from academiceval.graph import coauthor_papers, coauthors, collect, first_author_papers, refine, stats
from academiceval.graph.crawl import fetch_author
from academiceval.graph.queries import snapshot
from academiceval.store import Workspace


def _first_author_truth(records) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for m in records:
        if m.authors and m.published <= CRAWL_UNTIL:
            out[m.authors[0].key].add(m.arxiv_id)
    return out


def _visited(ws: Workspace) -> list[tuple[str, int, int]]:
    return [
        tuple(r)
        for r in ws.db.execute(
            "SELECT key, depth, queue_pos FROM graph_author WHERE state='visited' ORDER BY queue_pos"
        )
    ]


def test_crawl_matches_ground_truth(workspace, mirror, records, seeds) -> None:
    calls0 = mirror.requests_made
    rep = collect(workspace, mirror, seeds, max_authors=150, until=CRAWL_UNTIL)
    assert rep.visited_now == rep.visited_total == 150  # the cap is on authors visited ...
    assert rep.queued > 0  # ... not on the queue, which is longer
    assert rep.api_calls == mirror.requests_made - calls0 == 150  # one author query (one page) per visit

    visited = _visited(workspace)
    # breadth-first: the visited authors are the first 150 of the FIFO queue, depth never decreases
    assert [q for _, _, q in visited] == list(range(150))
    assert [d for _, d, _ in visited] == sorted(d for _, d, _ in visited)
    assert {k for k, _, _ in visited[: len(seeds)]} == {m.authors[0].key for m in records if m.authors[0].name in seeds}

    truth = _first_author_truth(records)
    by_id = {m.arxiv_id: m for m in records}
    graph_papers: dict[str, set[str]] = defaultdict(set)
    for pid, key, _ in snapshot(workspace)["papers"]:
        graph_papers[key].add(pid)
    for key, _, _ in visited:  # node features = exactly the author's first-author papers up to the date
        assert graph_papers.get(key, set()) == truth.get(key, set()), key

    edges = {(a, b): w for a, b, w in snapshot(workspace)["edges"]}
    for key, _, _ in visited:
        counts: Counter[str] = Counter()
        for pid in truth.get(key, ()):
            counts.update({a.key for a in by_id[pid].authors[1:]} - {key})
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
        for other, _ in top:  # the top-k co-authors were queued and linked
            assert (min(key, other), max(key, other)) in edges
    for (a, b), w in edges.items():  # weight = graph papers (of either endpoint) listing both
        papers = graph_papers.get(a, set()) | graph_papers.get(b, set())
        assert w == sum(1 for p in papers if {a, b} <= {x.key for x in by_id[p].authors}) >= 1


def test_cap_extends_and_options_are_checked(workspace, mirror, seeds, tmp_path) -> None:
    collect(workspace, mirror, seeds, max_authors=10, until=CRAWL_UNTIL)
    assert len(_visited(workspace)) == 10
    collect(workspace, mirror, seeds, max_authors=40, until=CRAWL_UNTIL)  # a larger cap extends the same crawl
    once = Workspace(tmp_path / "once")
    collect(once, mirror, seeds, max_authors=40, until=CRAWL_UNTIL)
    assert snapshot(workspace) == snapshot(once)
    with pytest.raises(ConfigError, match="other options"):
        collect(workspace, mirror, seeds, max_authors=50, top_k=5, until=CRAWL_UNTIL)
    with pytest.raises(ConfigError):
        collect(workspace, mirror, ["  "], max_authors=5)


def test_resume_after_interruption_is_identical(mirror, seeds, tmp_path) -> None:
    ref = Workspace(tmp_path / "ref")
    collect(ref, mirror, seeds, max_authors=120, until=CRAWL_UNTIL)
    ws = Workspace(tmp_path / "killed")
    for n in (5, 23, 61):  # die at three different moments, then resume with the same call
        with pytest.raises(KeyboardInterrupt):
            collect(ws, DiesAfter(mirror, n), seeds, max_authors=120, until=CRAWL_UNTIL)
        ws.close()
        ws = Workspace(tmp_path / "killed")  # a new process would open a new connection
    collect(ws, mirror, seeds, max_authors=120, until=CRAWL_UNTIL)
    assert snapshot(ws) == snapshot(ref)
    assert len(snapshot(ws)["authors"]) > 120 and len(snapshot(ws)["edges"]) > 100


def test_refine_keeps_the_largest_component(workspace, mirror, seeds) -> None:
    collect(workspace, mirror, seeds, max_authors=400, until=CRAWL_UNTIL)
    rep = refine(workspace)
    snap = snapshot(workspace)
    with_paper = {k for k, _, state, _, _, n in snap["authors"] if state == "visited" and n > 0}
    g = nx.Graph()
    g.add_nodes_from(with_paper)
    g.add_edges_from((a, b) for a, b, _ in snap["edges"] if a in with_paper and b in with_paper)
    kept = {r[0] for r in workspace.db.execute("SELECT key FROM graph_author WHERE in_graph=1")}
    assert kept <= with_paper  # nobody without a first-author paper
    assert nx.is_connected(g.subgraph(kept))
    assert len(kept) == max(len(c) for c in nx.connected_components(g)) == rep.authors
    assert rep.components == nx.number_connected_components(g) > 1
    assert rep.authors_without_paper == rep.authors_crawled - len(with_paper) > 0
    st = stats(workspace)
    assert (st.authors, st.edges, st.papers) == (rep.authors, rep.edges, rep.papers)
    assert st.edges == g.subgraph(kept).number_of_edges()
    assert refine(workspace) == rep  # idempotent

    # popularity control: a seeded cap, reproducible
    capped = refine(workspace, max_papers_per_author=1, seed=7)
    per_author = Counter(
        r[0]
        for r in workspace.db.execute(
            "SELECT p.author_key FROM graph_paper p JOIN graph_author a ON a.key=p.author_key "
            "WHERE a.in_graph=1 AND p.sampled=1"
        )
    )
    assert max(per_author.values()) == 1 and capped.papers == len(kept)
    assert capped.papers_capped > 0
    chosen = sorted(r[0] for r in workspace.db.execute("SELECT arxiv_id FROM graph_paper WHERE sampled=1"))
    refine(workspace, max_papers_per_author=1, seed=7)
    assert chosen == sorted(r[0] for r in workspace.db.execute("SELECT arxiv_id FROM graph_paper WHERE sampled=1"))
    assert refine(workspace).papers == rep.papers  # no cap: everything back


def test_coauthor_queries(workspace, mirror, seeds, records) -> None:
    collect(workspace, mirror, seeds, max_authors=400, until=CRAWL_UNTIL)
    refine(workspace)
    kept = [r[0] for r in workspace.db.execute("SELECT key FROM graph_author WHERE in_graph=1 ORDER BY key")]
    weights = {(a, b): w for a, b, w in snapshot(workspace)["edges"]}
    by_pub = {pid: pub for pid, _, pub in snapshot(workspace)["papers"]}
    for k in kept:
        co = coauthors(workspace, k)
        assert co and set(co) <= set(kept)
        ws_ = [weights[(min(k, c), max(k, c))] for c in co]
        assert ws_ == sorted(ws_, reverse=True)
        for c in co:
            assert k in coauthors(workspace, c)
    assert coauthors(workspace, "nobody at all") == []
    papers_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pid, key, pub in snapshot(workspace)["papers"]:
        papers_of[key].append((pub, pid))
    for k in kept:  # node features, newest first
        got = first_author_papers(workspace, k)
        assert sorted(got) == sorted(pid for _, pid in papers_of[k])
        assert [by_pub[p] for p in got] == sorted((by_pub[p] for p in got), reverse=True)

    by_id = {m.arxiv_id: m for m in records}
    targets = [
        r[0]
        for r in workspace.db.execute(
            "SELECT p.arxiv_id FROM graph_paper p JOIN graph_author a ON a.key=p.author_key WHERE a.in_graph=1"
        )
    ]
    some = 0
    for t in targets:
        demos = coauthor_papers(workspace, t, 3)
        assert len(demos) <= 3 and t not in demos
        authors = {a.key for a in by_id[t].authors}
        allowed = set(authors)
        for a in authors:
            allowed |= set(coauthors(workspace, a))
        for d in demos:
            assert by_id[d].published <= by_id[t].published  # never newer than the target
            assert by_id[d].authors[0].key in allowed
        some += bool(demos)
    assert some > 0
    assert coauthor_papers(workspace, "0000.00000", 3) == []


class _Failing(DiesAfter):
    """Answers like the mirror, except: queries naming `bad` are rejected (400), and from request `down_at`
    on the source is unreachable (retries exhausted) until `down_at` is cleared."""

    def __init__(self, inner, bad: str, down_at: int | None) -> None:
        super().__init__(inner, n=-1)
        self.bad, self.down_at = bad, down_at

    def search(self, query, **kw):
        from academiceval.sources.errors import HTTPStatusError, RetriesExhaustedError

        self.requests_made += 1
        if self.down_at is not None and self.requests_made >= self.down_at:
            raise RetriesExhaustedError("gave up after 6 attempts: HTTP 503", source="test")
        if self.bad in query:
            raise HTTPStatusError("HTTP 400: bad query", source="test", status=400)
        return self.inner.search(query, **kw)


def test_source_errors_are_recorded_or_stop_resumably(workspace, mirror, seeds, tmp_path) -> None:
    bad = seeds[1]
    rep = collect(workspace, _Failing(mirror, bad, down_at=30), seeds, max_authors=60, until=CRAWL_UNTIL)
    assert rep.failed == 1 and rep.stopped_early and "503" in rep.stopped_early and rep.refined is None
    assert rep.visited_total == 28  # 29 requests answered, one of them rejected: nothing half-written
    (err,) = workspace.db.execute("SELECT author_key, code, message FROM graph_error").fetchall()
    assert err[1] == "http_status" and "400" in err[2]
    rep = collect(workspace, _Failing(mirror, bad, down_at=None), seeds, max_authors=60, until=CRAWL_UNTIL)
    assert rep.stopped_early is None and rep.visited_total == 59 and rep.failed == 1 and rep.refined
    # the same crawl with the same rejected author, uninterrupted, gives the same graph
    once = Workspace(tmp_path / "once")
    collect(once, _Failing(mirror, bad, down_at=None), seeds, max_authors=60, until=CRAWL_UNTIL)
    assert snapshot(once) == snapshot(workspace)


class _Shuffled(DiesAfter):
    """The mirror's answers in a different (seeded) order: ranking must not depend on the source's ordering."""

    def __init__(self, inner, seed: int) -> None:
        super().__init__(inner, n=-1)
        self.rng = random.Random(seed)

    def search(self, query, **kw):
        page = self.inner.search(query, **kw)
        items = list(page.items)
        self.rng.shuffle(items)
        return page.model_copy(update={"items": items})


def test_ranking_does_not_depend_on_result_order(mirror, records, seeds) -> None:
    busiest = Counter(m.authors[0].key for m in records if m.authors and m.published <= CRAWL_UNTIL)
    names = {m.authors[0].key: m.authors[0].name for m in records if m.authors}
    for key, _ in busiest.most_common(15):
        base = fetch_author(mirror, key, names[key], top_k=5, papers_per_author=100, until=CRAWL_UNTIL)
        for s in range(3):
            other = fetch_author(
                _Shuffled(mirror, s), key, names[key], top_k=5, papers_per_author=100, until=CRAWL_UNTIL
            )
            assert other.coauthors == base.coauthors
            assert {m.arxiv_id for m in other.first} == {m.arxiv_id for m in base.first}
