"""Name variants merged on evidence, and the co-author graph of the real lab publication list."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.graph.names import coauthor_graph, graph_from_list
from academiceval.sources.namemerge import EvidenceResolver, name_parts, names_compatible
from academiceval.sources.publist import read_bibtex


@pytest.fixture(scope="module")
def lab_entries(corpus: Path):  # type: ignore[no-untyped-def]
    return read_bibtex(corpus / "lab_publications" / "comp-physics" / "ref.bib").entries


@pytest.fixture(scope="module")
def resolver(lab_entries) -> EvidenceResolver:  # type: ignore[no-untyped-def]
    r = EvidenceResolver()
    for e in lab_entries:
        r.observe(e.paper_id, e.authors)
    return r.solve()


def test_compatibility_rules() -> None:
    assert name_parts("h a le berre") == (("h", "a"), "le berre")
    assert names_compatible("s h bryngelson", "spencer h bryngelson")
    assert names_compatible("h le berre", "h a le berre")  # a missing middle initial
    assert names_compatible("spencer bryngelson", "s h bryngelson")
    assert not names_compatible("jon estrada", "jonathan b estrada")  # two full given names that differ
    assert not names_compatible("steve abbott", "stephen abbott")
    assert not names_compatible("h a le berre", "h b le berre")
    assert not names_compatible("j doe", "j roe")


def test_lab_head_and_le_berre_are_one_node_each(resolver: EvidenceResolver) -> None:
    head = {resolver.resolve(k) for k in ("s h bryngelson", "spencer h bryngelson")}
    assert head == {"spencer h bryngelson"}
    assert {resolver.resolve(k) for k in ("h le berre", "h a le berre", "henry le berre")} == {"henry le berre"}
    merges = {m.canonical: m for m in resolver.merges()}
    m = merges["henry le berre"]
    assert set(m.strings) == {"H. Le Berre", "H. A. Le Berre", "Henry Le Berre"}
    assert set(m.keys) == {"henry le berre", "h le berre", "h a le berre"}
    # evidence: each merged spelling shares named co-authors with the person it joined
    assert m.evidence["h le berre"] and m.evidence["h a le berre"]
    assert "S. H. Bryngelson" in merges["spencer h bryngelson"].strings


def test_ambiguous_initials_stay_apart(resolver: EvidenceResolver) -> None:
    # "J. Estrada" fits both "Jon Estrada" and "Jonathan B. Estrada", which do not fit each other: no merge
    assert resolver.resolve("j estrada") == "j estrada"
    assert resolver.resolve("jon estrada") != resolver.resolve("jonathan b estrada")
    reasons = {r.key: r.reason for r in resolver.refused()}
    assert reasons["j estrada"].startswith("ambiguous") and reasons["s abbott"].startswith("ambiguous")


def test_no_merge_without_shared_evidence() -> None:
    r = EvidenceResolver()
    r.observe("p1", ["J. Smith", "A. Alpha"])
    r.observe("p2", ["John Smith", "B. Beta"])
    r.observe("p3", ["Jane Doe", "J. Doe"])  # two authors of one paper are two people
    r.observe("p4", ["J. Doe", "C. Gamma"])
    r.observe("p5", ["Jane Doe", "C. Gamma"])
    r.solve()
    assert r.resolve("j smith") == "j smith" and r.mapping() == {}
    reasons = {(x.key, x.reason) for x in r.refused()}
    assert ("j smith", "no shared co-author") in reasons
    assert ("j doe", "co-authors of one paper") in reasons


def test_merge_with_shared_coauthor_under_another_spelling() -> None:
    r = EvidenceResolver()
    r.observe("p1", ["S. H. Bryngelson", "B. Wilfong"])
    r.observe("p2", ["Spencer H. Bryngelson", "Benjamin Wilfong"])
    r.solve()
    assert r.mapping() == {"s h bryngelson": "spencer h bryngelson", "b wilfong": "benjamin wilfong"}
    assert r.merges()[0].evidence


def test_lab_graph(resolver: EvidenceResolver, lab_entries, workspace) -> None:  # type: ignore[no-untyped-def]
    metas = [e.to_meta(category="comp-physics") for e in lab_entries]
    for m in metas:
        m.authors = resolver.apply(m.authors)
    workspace.upsert_meta(metas)
    raw = coauthor_graph([e.to_meta() for e in lab_entries])
    rep = graph_from_list(workspace, metas, resolver=resolver)
    assert rep.papers == 168 and rep.components == 1 and rep.largest_component == rep.nodes
    assert rep.nodes == raw.number_of_nodes() - sum(len(m.keys) - 1 for m in rep.merges)
    assert "spencer h bryngelson" in coauthor_graph(metas) and "s h bryngelson" not in coauthor_graph(metas)
    assert rep.hubs[0][1] == rep.nodes - 1  # the lab head co-authored with everyone
    row = workspace.db.execute("SELECT in_graph FROM graph_author WHERE key='spencer h bryngelson'").fetchone()
    assert row is not None and row[0] == 1
    assert rep.refined_authors >= 30 and rep.refined_edges >= 50
