"""The graph's view of names and queries: one key per person (from `sources.names`), one `au:` query per author.

Name variants ("S. H. Bryngelson" / "Spencer H. Bryngelson") become one node only on evidence: see
`sources.namemerge.EvidenceResolver` (compatible initials + a shared co-author, never two authors of one paper,
never an ambiguous short form); `graph_from_list` builds the graph of a publication list with those merges.

Why keys: arXiv's `au:` search is a loose pre-filter (it matches surnames and initials); whether a paper is
really by the author we crawl is decided locally by comparing normalised author keys.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date

import networkx as nx

from academiceval.graph import store
from academiceval.graph.refine import refine
from academiceval.sources.namemerge import EvidenceResolver, NameMerge, Refusal, names_compatible
from academiceval.sources.names import author_key
from academiceval.sources.query import and_, au, cat, or_, submitted_between
from academiceval.store.paper_models import PaperMeta
from academiceval.store.workspace import authors_by_paper

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


def window(since: date | None, until: date | None):
    """`submittedDate:[since TO until]`; an open end becomes arXiv's first day or today."""
    return submitted_between(since or ARXIV_START, until or date.today())


def window_query(since: date, until: date | None, categories: list[str]) -> str:
    """All papers submitted in the window in any of the categories (one paged query instead of one per author)."""
    return str(and_(window(since, until), or_(*[cat(c) for c in sorted(categories)])))


# ---- publication lists: a graph from one group's own list ----------------------------------------------------
# A paper with more authors than this is a collaboration paper ("hyperauthorship"; co-authorship network studies
# commonly leave papers of more than 100 authors out of pair counts): in the report below it joins its authors into
# one component and counts as a paper, but adds no co-author pairs and no degrees. Counting the distinct pairs of
# overlapping large author lists exactly is quadratic (10,000 authors: 50 million pairs); below the cut-off the
# counts are exact. The graph tables are not affected: they link each first author to every co-author.
HYPERAUTHORED = 100


@dataclass
class ListGraphReport:
    """The co-author graph of a publication list, before and after the graph's own refinement."""

    papers: int  # dated entries with at least one author
    nodes: int  # distinct people (after merges)
    edges: int  # co-author pairs (any positions) on papers of at most HYPERAUTHORED authors
    components: int
    largest_component: int
    merges: list[NameMerge] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    hubs: list[tuple[str, int]] = field(default_factory=list)  # (display name, degree), strongest first
    refined_authors: int = 0  # graph tables: authors with a first-author paper in the largest component
    refined_edges: int = 0
    refined_papers: int = 0
    hyperauthored: int = 0  # papers over HYPERAUTHORED authors: they connect their authors but add no pairs
    work: dict[str, int] = field(default_factory=dict)  # operations counted (pairs enumerated, unions, links)


def coauthor_graph(metas: list[PaperMeta]) -> nx.Graph:
    """All co-author pairs of the papers (resolved keys), edge weight = shared papers; nodes carry `name`.

    Quadratic in authors per paper (every pair becomes an edge): for small lists and tests. The import reports
    its graph with `list_graph_stats`, which is linear."""
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


def list_graph_stats(metas: list[PaperMeta], *, hyperauthored: int = HYPERAUTHORED) -> ListGraphReport:
    """People, co-author pairs, components and hubs of a list's papers, in time linear in its authorships.

    Components by union-find (each author joined to the paper's first author); pairs and degrees enumerated on
    papers of at most `hyperauthored` authors only (at most that many pairs per authorship). On such lists the
    figures equal `coauthor_graph`'s (nodes, edges, connected components, degrees; tested)."""
    names: dict[str, str] = {}
    parent: dict[str, str] = {}
    work: Counter[str] = Counter()

    def root(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    pairs: set[tuple[str, str]] = set()
    papers = hyper = 0
    for m in metas:
        keys = list(dict.fromkeys(a.key or author_key(a.name) for a in m.authors))
        if not keys:
            continue
        papers += 1
        for a in m.authors:
            k = a.key or author_key(a.name)
            if k not in names:
                names[k] = a.name
                parent[k] = k
        first = root(keys[0])
        for k in keys[1:]:
            work["unions"] += 1
            r = root(k)
            if r != first:
                parent[r] = first
        if len(keys) > hyperauthored:
            hyper += 1
            continue
        for i, x in enumerate(keys):
            for y in keys[i + 1 :]:
                work["pairs"] += 1
                pairs.add((x, y) if x < y else (y, x))
    degree: Counter[str] = Counter()
    for x, y in pairs:
        degree[x] += 1
        degree[y] += 1
    sizes = Counter(root(k) for k in names)
    hubs = sorted(((names[k], degree[k]) for k in names), key=lambda x: (-x[1], x[0]))[:5]
    return ListGraphReport(
        papers=papers,
        nodes=len(names),
        edges=len(pairs),
        components=len(sizes),
        largest_component=max(sizes.values(), default=0),
        hubs=hubs,
        hyperauthored=hyper,
        work=dict(work),
    )


def _write_links(c, links: set[tuple[str, str]]) -> int:
    """Edges first author – co-author with their weight as `graph.store.edge_weight` defines it (graph papers of
    either end, as first author, listing the other), all weights from one aggregate instead of a query per pair.
    Returns the number of links written."""
    wanted = {store.edge_key(a, b) for a, b in links if a != b}
    weight: Counter[tuple[str, str]] = Counter()
    firsts = dict(c.execute("SELECT arxiv_id, author_key FROM graph_paper").fetchall())
    for aid, keys in authors_by_paper(c, firsts).items():
        first = firsts[aid]
        for other in set(keys) - {first}:
            e = store.edge_key(first, other)
            if e in wanted:
                weight[e] += 1  # a paper has one first author: the two directions never count one paper twice
    c.executemany(
        "INSERT INTO graph_edge VALUES (?,?,?) ON CONFLICT(a, b) DO UPDATE SET weight=excluded.weight",
        [(a, b, w) for (a, b), w in sorted(weight.items()) if w > 0],
    )
    return len(weight)


def graph_from_list(
    ws,  # store.workspace.Workspace
    metas: list[PaperMeta],
    *,
    resolver: EvidenceResolver | None = None,
    hyperauthored: int = HYPERAUTHORED,
) -> ListGraphReport:
    """Write a publication list's papers into the graph tables (every author visited; a paper belongs to its
    first author, as in a crawl), refine, and report the graph. `metas` should carry resolved author keys
    (`sources.publist_import` stores them so); a resolver given here is applied first.

    Linear in authors per paper (issue 26, item 9): the edges written are first author – co-author, the only
    pairs `graph.store.edge_weight` gives a weight (the first version enumerated every pair of every paper and
    asked SQLite for each one's weight: 4.5 million queries for a 3,000-author paper, of which 2,999 mattered).
    """
    if resolver is not None:
        metas = [m.model_copy(update={"authors": resolver.apply(m.authors)}) for m in metas]
    metas = [m for m in metas if m.authors]
    store.ensure(ws)
    links: set[tuple[str, str]] = set()
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
            links.update((first, a.key or author_key(a.name)) for a in m.authors[1:])
        written = _write_links(c, links)
    rr = refine(ws)
    rep = list_graph_stats(metas, hyperauthored=hyperauthored)
    rep.work["links"] = written
    rep.merges = resolver.merges() if resolver is not None else []
    rep.refused = resolver.refused() if resolver is not None else []
    rep.refined_authors, rep.refined_edges, rep.refined_papers = rr.authors, rr.edges, rr.papers
    return rep


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
    "list_graph_stats",
    "names_compatible",
    "window",
    "window_query",
]
