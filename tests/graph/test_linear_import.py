"""`academiceval import` is linear in authors per paper and in entries per list (issue 26, finding 6 / item 9).

Before: a 3,000-author entry took 155 s and 1.8 GB (every author got the set of all its co-authors, and the graph
asked SQLite for the weight of every pair of every paper); 10,000 authors did not finish in 10 minutes. The
tests count what the code looks at (`EvidenceResolver.work`, `list_graph_stats(...).work`, links written) on real
lists — no timing — and check that the decisions are those of the first version (kept in `first_namemerge.py`).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import networkx as nx
import pytest
from first_namemerge import EvidenceResolver as FirstResolver

from academiceval.graph import store
from academiceval.graph.names import coauthor_graph, graph_from_list, list_graph_stats
from academiceval.sources.namemerge import EVIDENCE_KEPT, EvidenceResolver
from academiceval.sources.publist import PubEntry, read_bibtex, read_list
from academiceval.testing.publists import collaboration_bib, entries_bib, real_people


@pytest.fixture(scope="module")
def lab_bib(corpus: Path) -> Path:
    return corpus / "lab_publications" / "comp-physics" / "ref.bib"


@pytest.fixture(scope="module")
def lab_entries(lab_bib: Path) -> list[PubEntry]:
    return read_bibtex(lab_bib).entries


def solved(cls, entries: list[PubEntry]):  # type: ignore[no-untyped-def]
    r = cls()
    for e in entries:
        r.observe(e.paper_id, e.authors)
    return r.solve()


def assert_same_decisions(entries: list[PubEntry]) -> EvidenceResolver:
    new, old = solved(EvidenceResolver, entries), solved(FirstResolver, entries)
    assert new.mapping() == old.mapping()
    assert [(r.key, r.other, r.reason) for r in new.refused()] == [(r.key, r.other, r.reason) for r in old.refused()]
    first = {m.canonical: m for m in old.merges()}
    assert [m.canonical for m in new.merges()] == [m.canonical for m in old.merges()]
    for m in new.merges():
        was = first[m.canonical]
        assert (m.keys, m.strings, m.name) == (was.keys, was.strings, was.name)
        for k, shared in m.evidence.items():
            if len(was.evidence[k]) <= EVIDENCE_KEPT:
                assert shared == was.evidence[k], k
            else:  # EVIDENCE_KEPT of them, each one a shared co-author the first version named too
                assert len(shared) == EVIDENCE_KEPT and set(shared) <= set(was.evidence[k]), k
    return new


def with_resolved(entries: list[PubEntry], r: EvidenceResolver) -> list:  # type: ignore[type-arg]
    return [e.to_meta().model_copy(update={"authors": r.apply(e.authors)}) for e in entries]


# ---- the same decisions as the first version ------------------------------------------------------------------
def test_same_decisions_on_the_lab_list(lab_entries: list[PubEntry]) -> None:
    r = assert_same_decisions(lab_entries)
    assert len(r.merges()) >= 10 and r.resolve("s h bryngelson") == "spencer h bryngelson"


def test_same_decisions_on_a_collaboration_written_twice(corpus: Path, lab_bib: Path, tmp_path: Path) -> None:
    """The lab list + a 120-author entry of real names + its initials-only twin: a hundred candidates."""
    entries = read_list(collaboration_bib(corpus, 120, tmp_path / "c", base=lab_bib) / "ref.bib").entries
    r = assert_same_decisions(entries)
    assert len(r.merges()) > 80  # most initial forms join their full form, on the shared co-authors


def test_same_decisions_on_1000_real_listing_entries(corpus: Path, tmp_path: Path) -> None:
    entries = read_list(entries_bib(corpus, 1000, tmp_path / "e") / "ref.bib").entries
    r = assert_same_decisions(entries)
    assert r.merges() and r.refused()


# ---- what is looked at grows linearly ---------------------------------------------------------------------------
def growth(values: list[int]) -> list[float]:
    return [round(b / a, 2) for a, b in pairwise(values)]


def test_work_is_linear_in_authors_per_paper(corpus: Path, lab_bib: Path, tmp_path: Path) -> None:
    """500 → 4,000 real authors on one entry and on its initials-only twin: every count at most doubles when the
    authors double (the first version looked at Σ|paper|² co-author entries: ×4 per doubling)."""
    sizes = [500, 1000, 2000, 4000]
    real_people(corpus, sizes[-1])  # read once (cached by the OS for the next calls)
    resolver_work, graph_work, first_version = [], [], []
    for n in sizes:
        entries = read_list(collaboration_bib(corpus, n, tmp_path / f"a{n}", base=lab_bib) / "ref.bib").entries
        r = solved(EvidenceResolver, entries)
        resolver_work.append(sum(r.work.values()))
        g = list_graph_stats(with_resolved(entries, r))
        graph_work.append(sum(g.work.values()))
        first_version.append(sum(len(e.authors) ** 2 for e in entries))
    print("resolver", resolver_work, growth(resolver_work), "graph", graph_work, growth(graph_work))
    assert all(x <= 2.2 for x in growth(resolver_work)), (resolver_work, growth(resolver_work))
    assert all(x <= 2.2 for x in growth(graph_work)), (graph_work, growth(graph_work))
    assert all(x >= 3.5 for x in growth(first_version))  # what the counts would have been
    assert resolver_work[-1] < 10 * 2 * sizes[-1]  # a few looks per author, not per pair


def test_work_is_linear_in_entries_of_one_group(lab_entries: list[PubEntry]) -> None:
    """The lab list 1×, 2×, 4×, 8× (the same people over more years): the same merges, linear counts."""
    base = solved(EvidenceResolver, lab_entries)
    work = []
    for times in (1, 2, 4, 8):
        entries = [replace(e, key=f"{e.key}-{i}", arxiv_id=None) for i in range(times) for e in lab_entries]
        r = solved(EvidenceResolver, entries)
        assert r.mapping() == base.mapping()
        work.append(sum(r.work.values()))
    print("entries", work, growth(work))
    assert all(x <= 2.2 for x in growth(work)), (work, growth(work))


# ---- the graph ------------------------------------------------------------------------------------------------
def test_list_stats_equal_the_full_coauthor_graph(lab_entries: list[PubEntry], corpus: Path, tmp_path: Path) -> None:
    listing = read_list(entries_bib(corpus, 1000, tmp_path / "e") / "ref.bib").entries
    for entries in (lab_entries, listing):
        metas = [e.to_meta() for e in entries]
        g, stats = coauthor_graph(metas), list_graph_stats(metas, hyperauthored=10**9)
        comps = sorted(len(c) for c in nx.connected_components(g))
        assert (stats.nodes, stats.edges, stats.components, stats.largest_component) == (
            g.number_of_nodes(), g.number_of_edges(), len(comps), comps[-1])  # fmt: skip
        top = sorted(((g.nodes[k]["name"], d) for k, d in g.degree()), key=lambda x: (-x[1], x[0]))[:5]
        assert stats.hubs == top and stats.hyperauthored == 0
    # a paper over the cut-off joins its authors but adds no pairs
    big = max(listing, key=lambda e: len(e.authors))
    metas = [e.to_meta() for e in listing]
    capped = list_graph_stats(metas, hyperauthored=len(big.authors) - 1)
    full = list_graph_stats(metas, hyperauthored=10**9)
    assert capped.hyperauthored >= 1 and capped.edges < full.edges
    assert (capped.nodes, capped.components, capped.largest_component) == (
        full.nodes, full.components, full.largest_component)  # fmt: skip


def test_graph_tables_hold_exactly_the_weighted_pairs(lab_entries: list[PubEntry], workspace) -> None:  # type: ignore[no-untyped-def]
    """Every co-listed pair that `graph.store.edge_weight` gives a weight, with that weight — and nothing else —
    although only first author – co-author links are written."""
    r = solved(EvidenceResolver, lab_entries)
    metas = with_resolved(lab_entries, r)
    for m in metas:
        m.primary_category = "lab"
    workspace.upsert_meta(metas)
    rep = graph_from_list(workspace, metas)
    c = workspace.db
    want = {}
    for m in metas:
        keys = [a.key for a in m.authors]
        for i, x in enumerate(keys):
            for y in keys[i + 1 :]:
                if x != y and (w := store.edge_weight(c, *store.edge_key(x, y))):
                    want[store.edge_key(x, y)] = w
    have = {(a, b): w for a, b, w in c.execute("SELECT a, b, weight FROM graph_edge")}
    assert have == want and rep.work["links"] >= len(want)
    assert rep.refined_authors >= 30 and rep.refined_edges >= 50


def test_a_10000_author_entry_is_imported(corpus: Path, lab_bib: Path, tmp_path: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    """The size that did not finish in 10 minutes: imported, graphed, with a link per co-author."""
    from academiceval.sources.publist_import import import_publist

    folder = collaboration_bib(corpus, 10_000, tmp_path / "a10k", base=lab_bib, twin=False)
    rep = import_publist(workspace, folder, parse=False)
    metas = list(workspace.iter_meta("source='publist'"))
    assert max(len(m.authors) for m in metas) == 10_000
    g = graph_from_list(workspace, metas)
    assert g.hyperauthored == 1 and g.largest_component >= 10_000
    n_edges = workspace.db.execute("SELECT COUNT(*) FROM graph_edge").fetchone()[0]
    assert n_edges >= 9_999 and rep.entries == 169
