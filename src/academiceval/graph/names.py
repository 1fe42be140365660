"""The graph's view of names and queries: one key per person (from `sources.names`), one `au:` query per author.

Name variants ("S. H. Bryngelson" / "Spencer H. Bryngelson") become one node only on evidence: see
`sources.namemerge.EvidenceResolver` (compatible initials + a shared co-author, never two authors of one paper,
never an ambiguous short form); `graph_from_list` builds the graph of a publication list with those merges.

Why keys: arXiv's `au:` search is a loose pre-filter (it matches surnames and initials); whether a paper is
really by the author we crawl is decided locally by comparing normalised author keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import networkx as nx

from academiceval.sources.models import PaperMeta
from academiceval.sources.namemerge import EvidenceResolver, NameMerge, Refusal, names_compatible
from academiceval.sources.names import author_key
from academiceval.sources.query import and_, au, cat, or_, submitted_between

ARXIV_START = date(1991, 8, 1)  # no paper on arXiv is older: the open lower end of a window


def key_of(name: str) -> str:
    return author_key(name)


def fill_keys(meta: PaperMeta) -> PaperMeta:
    """Loaders fill `Author.key`; a source that did not gets it filled here, so matching never sees blanks."""
    if all(a.key for a in meta.authors):
        return meta
    authors = [a if a.key else a.model_copy(update={"key": author_key(a.name)}) for a in meta.authors]
    return meta.model_copy(update={"authors": authors})


def author_query(name: str, *, since: date | None = None, until: date | None = None) -> str:
    """`au:` query for one author, optionally restricted to a v1 submission window."""
    if since or until:
        return str(and_(au(name), window(since, until)))
    return str(au(name))


def window(since: date | None, until: date | None):  # type: ignore[no-untyped-def]
    """`submittedDate:[since TO until]`; an open end becomes arXiv's first day or today."""
    return submitted_between(since or ARXIV_START, until or date.today())


def window_query(since: date, until: date | None, categories: list[str]) -> str:
    """All papers submitted in the window in any of the categories (one paged query instead of one per author)."""
    return str(and_(window(since, until), or_(*[cat(c) for c in sorted(categories)])))


# ---- publication lists: a graph from one group's own list ----------------------------------------------------
@dataclass
class ListGraphReport:
    """The co-author graph of a publication list, before and after the graph's own refinement."""

    papers: int  # dated entries with at least one author
    nodes: int  # distinct people (after merges)
    edges: int  # co-author pairs (any positions)
    components: int
    largest_component: int
    merges: list[NameMerge] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    hubs: list[tuple[str, int]] = field(default_factory=list)  # (display name, degree), strongest first
    refined_authors: int = 0  # graph tables: authors with a first-author paper in the largest component
    refined_edges: int = 0
    refined_papers: int = 0


def coauthor_graph(metas: list[PaperMeta]) -> nx.Graph:
    """All co-author pairs of the papers (resolved keys), edge weight = shared papers; nodes carry `name`."""
    g = nx.Graph()
    for m in metas:
        keys = list(dict.fromkeys(a.key or author_key(a.name) for a in m.authors))
        for a in m.authors:
            k = a.key or author_key(a.name)
            if k not in g:
                g.add_node(k, name=a.name, papers=0)
            g.nodes[k]["papers"] += 1
        for i, x in enumerate(keys):
            for y in keys[i + 1 :]:
                w = g.edges[x, y]["weight"] + 1 if g.has_edge(x, y) else 1
                g.add_edge(x, y, weight=w)
    return g


def graph_from_list(ws, metas: list[PaperMeta], *, resolver: EvidenceResolver | None = None) -> ListGraphReport:  # type: ignore[no-untyped-def]
    """Write a publication list's papers into the graph tables (every author visited; a paper belongs to its
    first author, as in a crawl), refine, and report the graph. `metas` should carry resolved author keys
    (`sources.publist_import` stores them so); a resolver given here is applied first."""
    from academiceval.graph import store
    from academiceval.graph.refine import refine

    if resolver is not None:
        metas = [m.model_copy(update={"authors": resolver.apply(m.authors)}) for m in metas]
    metas = [m for m in metas if m.authors]
    store.ensure(ws)
    with ws.transaction() as c:
        for m in metas:
            for pos, a in enumerate(m.authors):
                k = a.key or author_key(a.name)
                store.enqueue(c, k, a.name, 0 if pos == 0 else 1, added_by="publist")
                c.execute(
                    "UPDATE graph_author SET state='visited', visited_at=COALESCE(visited_at, ?), "
                    "visited_in=COALESCE(visited_in, 'publist') WHERE key=?",
                    (m.published.isoformat(), k),
                )
            first = m.authors[0].key or author_key(m.authors[0].name)
            c.execute(
                "INSERT OR REPLACE INTO graph_paper(arxiv_id, author_key, published, sampled, added_by) "
                "VALUES (?,?,?,1,'publist')",
                (m.arxiv_id, first, m.published.isoformat()),
            )
        pairs = set()
        for m in metas:
            keys = [a.key or author_key(a.name) for a in m.authors]
            pairs.update((x, y) for i, x in enumerate(keys) for y in keys[i + 1 :] if x != y)
        store.add_edges(c, sorted(pairs))
    rr = refine(ws)
    g = coauthor_graph(metas)
    comps = list(nx.connected_components(g))
    hubs = sorted(((g.nodes[k]["name"], d) for k, d in g.degree()), key=lambda x: (-x[1], x[0]))[:5]
    return ListGraphReport(
        papers=len(metas),
        nodes=g.number_of_nodes(),
        edges=g.number_of_edges(),
        components=len(comps),
        largest_component=max((len(c) for c in comps), default=0),
        merges=resolver.merges() if resolver is not None else [],
        refused=resolver.refused() if resolver is not None else [],
        hubs=hubs,
        refined_authors=rr.authors,
        refined_edges=rr.edges,
        refined_papers=rr.papers,
    )


__all__ = [
    "EvidenceResolver",
    "ListGraphReport",
    "NameMerge",
    "Refusal",
    "author_query",
    "coauthor_graph",
    "fill_keys",
    "graph_from_list",
    "key_of",
    "names_compatible",
    "window",
    "window_query",
]
