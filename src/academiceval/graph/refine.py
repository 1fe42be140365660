"""Refine the crawled graph into the one rounds use.

Drop authors without a first-author paper, keep edges only between kept authors, and keep the *largest*
connected component (the original code kept the seed's component, which can be a small island). Nothing is
deleted: refine only sets `graph_author.in_graph`, so a crawl can still be resumed or extended afterwards and
refine run again.

Popularity control (AcademicEval's stated future work): very active authors would otherwise dominate the node
features; `max_papers_per_author` caps each author's papers with a sampler seeded per author, so the choice is
reproducible and does not change when other authors are added.
"""

from __future__ import annotations

import random

import networkx as nx
from pydantic import BaseModel

from academiceval.graph import store
from academiceval.store.workspace import Workspace

REFINE_OPTIONS_KEY = "graph.refine.options"


def refine_options(ws: Workspace) -> dict[str, int | None]:
    """The options of the last refine (defaults when none ran)."""
    doc = ws.get_doc(REFINE_OPTIONS_KEY)
    return dict(doc) if isinstance(doc, dict) else {"max_papers_per_author": None, "seed": 0}


class RefineReport(BaseModel):
    """Sizes before and after refinement."""

    authors_crawled: int  # visited authors
    authors_without_paper: int  # dropped: no first-author paper
    components: int  # connected components among authors with a paper
    largest_component: int
    authors: int  # kept = size of the largest component
    edges: int  # edges inside it
    papers: int  # first-author papers of kept authors (after the popularity cap)
    papers_capped: int = 0  # left out by the popularity cap


def build_nx(ws: Workspace, *, in_graph_only: bool = False) -> nx.Graph:
    """The graph as networkx (nodes = author keys with a paper; edge attribute `weight`)."""
    conn = ws.db
    g = nx.Graph()
    cond = "in_graph=1" if in_graph_only else "state='visited' AND first_papers>0"
    g.add_nodes_from(r[0] for r in conn.execute(f"SELECT key FROM graph_author WHERE {cond} ORDER BY key"))
    for a, b, w in conn.execute("SELECT a, b, weight FROM graph_edge ORDER BY a, b"):
        if a in g and b in g:
            g.add_edge(a, b, weight=w)
    return g


def largest_component(g: nx.Graph) -> set[str]:
    """Largest connected component; ties broken by the smallest member key, so the choice is stable."""
    comps = list(nx.connected_components(g))
    if not comps:
        return set()
    return min(comps, key=lambda c: (-len(c), min(c)))


def refine(ws: Workspace, *, max_papers_per_author: int | None = None, seed: int = 0) -> RefineReport:
    """Set the refined graph (largest component of authors with a first-author paper) in one transaction.

    The popularity options are remembered (`refine_options`), so a later `update` refines the same way.
    """
    store.ensure(ws)
    conn = ws.db
    ws.put_doc(REFINE_OPTIONS_KEY, {"max_papers_per_author": max_papers_per_author, "seed": seed})
    crawled = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE state='visited'")
    with ws.transaction() as c:
        c.execute(
            "UPDATE graph_author SET first_papers=(SELECT COUNT(*) FROM graph_paper p WHERE p.author_key=key) "
            "WHERE state='visited'"
        )
    g = build_nx(ws)
    keep = largest_component(g)
    capped = 0
    with ws.transaction() as c:
        c.execute("UPDATE graph_author SET in_graph=0 WHERE in_graph=1")
        c.executemany("UPDATE graph_author SET in_graph=1 WHERE key=?", [(k,) for k in sorted(keep)])
        c.execute("UPDATE graph_paper SET sampled=1 WHERE sampled=0")
        if max_papers_per_author is not None:
            capped = _cap_papers(c, max_papers_per_author, seed)
    sub = g.subgraph(keep)
    papers = store.count(
        conn,
        "SELECT COUNT(*) FROM graph_paper p JOIN graph_author a ON a.key=p.author_key "
        "WHERE a.in_graph=1 AND p.sampled=1",
    )
    return RefineReport(
        authors_crawled=crawled,
        authors_without_paper=crawled - g.number_of_nodes(),
        components=nx.number_connected_components(g) if g.number_of_nodes() else 0,
        largest_component=len(keep),
        authors=len(keep),
        edges=sub.number_of_edges(),
        papers=papers,
        papers_capped=capped,
    )


def _cap_papers(conn, cap: int, seed: int) -> int:
    """Seeded per-author sample of at most `cap` papers; returns how many papers were left out."""
    rows = conn.execute(
        "SELECT author_key, arxiv_id FROM graph_paper WHERE author_key IN "
        "(SELECT author_key FROM graph_paper GROUP BY author_key HAVING COUNT(*) > ?) ORDER BY author_key, arxiv_id",
        (cap,),
    ).fetchall()
    by_author: dict[str, list[str]] = {}
    for k, pid in rows:
        by_author.setdefault(k, []).append(pid)
    out = 0
    for k, ids in by_author.items():
        chosen = set(random.Random(f"{seed}|{k}").sample(ids, cap))
        drop = [(pid,) for pid in ids if pid not in chosen]
        conn.executemany("UPDATE graph_paper SET sampled=0 WHERE arxiv_id=?", drop)
        out += len(drop)
    return out
