"""Read-only views of the refined graph for the other stages (rounds: co-author demos; stats; report).

All views read the refined graph (`graph_author.in_graph = 1`, papers kept by the popularity cap), so run
`refine` (the end of `collect` and `update` does) before using them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from pydantic import BaseModel

from academiceval.graph import store
from academiceval.store.workspace import Workspace


def has_graph(ws: Workspace) -> bool:
    """Whether a refined co-author graph exists in the workspace (some author is in it)."""
    store.ensure(ws)
    return ws.db.execute("SELECT 1 FROM graph_author WHERE in_graph=1 LIMIT 1").fetchone() is not None


def coauthors(ws: Workspace, author_key: str) -> list[str]:
    """Keys of the author's neighbours in the refined graph, strongest tie first (weight desc, then key)."""
    store.ensure(ws)
    if not _in_graph(ws, author_key):
        return []
    return [k for k, _ in sorted(_neighbours_weighted(ws, author_key), key=lambda kw: (-kw[1], kw[0]))]


def first_author_papers(ws: Workspace, author_key: str) -> list[str]:
    """The author's node features: first-author papers in the refined graph, newest first."""
    store.ensure(ws)
    return [
        r[0]
        for r in ws.db.execute(
            """SELECT p.arxiv_id FROM graph_paper p JOIN graph_author a ON a.key = p.author_key
               WHERE p.author_key = ? AND a.in_graph = 1 AND p.sampled = 1
               ORDER BY p.published DESC, p.arxiv_id""",
            (author_key,),
        )
    ]


def coauthor_papers(ws: Workspace, arxiv_id: str, k: int, *, include_self: bool = True) -> list[str]:
    """Up to k co-author demo papers for a target paper (by versionless id).

    Candidates are the first-author papers of the target's authors that are graph nodes (`include_self`, the
    original's effective behaviour) and of their co-authors in the refined graph. Never the target itself and
    never a paper submitted after the target (demos must not be newer). Ranked: the target's own authors first,
    then by tie strength (edge weight to the target's authors, desc), then newest first, then id — deterministic.
    """
    store.ensure(ws)
    conn = ws.db
    target_date = ws.published_of(arxiv_id)
    if target_date is None or k <= 0:
        return []
    authors = ws.authors_of(arxiv_id)
    nodes = [a for a in dict.fromkeys(authors) if _in_graph(ws, a)]
    rank: dict[str, tuple[int, int]] = {}  # author key -> (hop, -weight)
    if include_self:
        for a in nodes:
            rank[a] = (0, 0)
    for a in nodes:
        for b, w in _neighbours_weighted(ws, a):
            cand = (1, -w)
            if b not in rank or cand < rank[b]:
                rank[b] = cand
    if not rank:
        return []
    scored: list[tuple[tuple[int, int], str, str]] = []
    keys = sorted(rank)
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for pid, ak, pub in conn.execute(
            f"SELECT arxiv_id, author_key, published FROM graph_paper WHERE sampled=1 AND author_key IN ({marks})",
            chunk,
        ):
            if pid != arxiv_id and pub <= target_date:
                scored.append((rank[ak], pub, pid))
    scored.sort(key=lambda t: (t[0], _neg_date(t[1]), t[2]))
    return [pid for _, _, pid in scored[:k]]


def coauthor_papers_by_authorship(ws: Workspace, author_keys: Sequence[str], *, exclude: str) -> list[str]:
    """Co-author demo papers without a crawled graph: first-author papers of the given authors and of their
    co-authors (1 hop in the workspace's authorship), never `exclude`. Ranked like `coauthor_papers`: the given
    authors first, then by number of shared papers, then newest first, then id."""
    db = ws.db
    own = list(author_keys)
    if not own:
        return []
    marks = ",".join("?" * len(own))
    weight: dict[str, int] = {a: 10**9 for a in own}
    for key, n in db.execute(
        f"""SELECT b.author_key, COUNT(*) FROM authorship a JOIN authorship b ON a.arxiv_id=b.arxiv_id
            WHERE a.author_key IN ({marks}) AND b.author_key NOT IN ({marks}) GROUP BY b.author_key""",
        (*own, *own),
    ):
        weight[key] = int(n)
    keys = list(weight)
    scored: list[tuple[int, int, str]] = []
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        m = ",".join("?" * len(chunk))
        for aid, key, pub in db.execute(
            f"""SELECT a.arxiv_id, a.author_key, p.published FROM authorship a JOIN paper_meta p
                ON p.arxiv_id=a.arxiv_id WHERE a.position=0 AND a.author_key IN ({m})""",
            chunk,
        ):
            if aid != exclude:
                scored.append((-weight[key], _neg_date(pub), aid))
    scored.sort()
    return list(dict.fromkeys(aid for _, _, aid in scored))


def _neg_date(iso: str) -> int:
    return -date.fromisoformat(iso).toordinal()


def _in_graph(ws: Workspace, key: str) -> bool:
    return ws.db.execute("SELECT 1 FROM graph_author WHERE key=? AND in_graph=1", (key,)).fetchone() is not None


def _neighbours_weighted(ws: Workspace, key: str) -> list[tuple[str, int]]:
    rows = ws.db.execute(
        """SELECT e.b, e.weight FROM graph_edge e JOIN graph_author x ON x.key=e.b WHERE e.a=? AND x.in_graph=1
           UNION ALL
           SELECT e.a, e.weight FROM graph_edge e JOIN graph_author x ON x.key=e.a WHERE e.b=? AND x.in_graph=1""",
        (key, key),
    ).fetchall()
    return [(r[0], int(r[1])) for r in rows]


class GraphStats(BaseModel):
    """Sizes of the crawl and of the refined graph (what `collect`/`update`/`stats` print)."""

    authors: int  # in the refined graph
    edges: int  # between refined authors
    papers: int  # first-author papers of refined authors (after the popularity cap)
    components: int  # among crawled authors with a paper (1 component is kept)
    avg_degree: float
    visited: int
    queued: int
    failed: int
    pruned: int
    first_paper: date | None = None
    last_paper: date | None = None
    updates: int = 0


def stats(ws: Workspace) -> GraphStats:
    """Current sizes, read from the tables (cheap; no networkx except for the component count)."""
    import networkx as nx

    from academiceval.graph.refine import build_nx  # networkx import only when asked

    store.ensure(ws)
    conn = ws.db
    authors = store.count(conn, "SELECT COUNT(*) FROM graph_author WHERE in_graph=1")
    edges = store.count(
        conn,
        """SELECT COUNT(*) FROM graph_edge e JOIN graph_author x ON x.key=e.a JOIN graph_author y ON y.key=e.b
           WHERE x.in_graph=1 AND y.in_graph=1""",
    )
    prow = conn.execute(
        """SELECT COUNT(*), MIN(p.published), MAX(p.published) FROM graph_paper p
           JOIN graph_author a ON a.key=p.author_key WHERE a.in_graph=1 AND p.sampled=1"""
    ).fetchone()
    g = build_nx(ws)
    by_state = dict(conn.execute("SELECT state, COUNT(*) FROM graph_author GROUP BY state").fetchall())
    return GraphStats(
        authors=authors,
        edges=edges,
        papers=int(prow[0]),
        components=nx.number_connected_components(g) if g.number_of_nodes() else 0,
        avg_degree=round(2 * edges / authors, 3) if authors else 0.0,
        visited=int(by_state.get("visited", 0)),
        queued=int(by_state.get("queued", 0)),
        failed=int(by_state.get("failed", 0)),
        pruned=int(by_state.get("pruned", 0)),
        first_paper=date.fromisoformat(prow[1]) if prow[1] else None,
        last_paper=date.fromisoformat(prow[2]) if prow[2] else None,
        updates=store.count(conn, "SELECT COUNT(*) FROM graph_update WHERE finished_at IS NOT NULL"),
    )


def snapshot(ws: Workspace) -> dict[str, list[tuple[object, ...]]]:
    """The whole crawl state as sorted tuples: equal snapshots mean identical graphs (resume/kill checks)."""
    store.ensure(ws)
    conn = ws.db
    return {
        "authors": [
            tuple(r)
            for r in conn.execute(
                "SELECT key, name, state, depth, queue_pos, first_papers FROM graph_author ORDER BY key"
            )
        ],
        "papers": [
            tuple(r) for r in conn.execute("SELECT arxiv_id, author_key, published FROM graph_paper ORDER BY 1")
        ],
        "edges": [tuple(r) for r in conn.execute("SELECT a, b, weight FROM graph_edge ORDER BY a, b")],
    }
