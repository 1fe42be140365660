"""The co-author graph's own tables in the workspace.

Why tables and not a pickle: every crawl step is one SQLite transaction, so a crawl killed at any moment resumes
exactly where it stopped, and the graph can be queried (co-authors, demos) without loading it whole.

Tables (all keyed by the normalised author key from `sources.names.author_key`):
    graph_author   one row per author ever queued: display name, crawl state, depth, queue position,
                   `in_graph` (set by refine: member of the largest connected component).
    graph_paper    node features: a paper belongs to its *first* author only. `sampled` is the popularity
                   control (0 = left out by the seeded cap).
    graph_edge     undirected co-authorship (a < b) with its weight = number of graph papers listing both.
    graph_update   one row per live update: dates, what was added and pruned, API calls.
    graph_error    recorded per-author failures (the crawl goes on).
The paper metadata itself lives in the core `paper_meta` / `authorship` tables (`Workspace.upsert_meta`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from academiceval.store.workspace import now_iso, register_schema

GRAPH_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_author (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    state TEXT NOT NULL,                 -- queued | visited | failed | pruned
    depth INTEGER NOT NULL,
    queue_pos INTEGER NOT NULL,          -- FIFO order of the breadth-first crawl
    first_papers INTEGER NOT NULL DEFAULT 0,
    in_graph INTEGER NOT NULL DEFAULT 0, -- member of the refined graph (largest component)
    visited_at TEXT,
    added_by TEXT,                       -- who queued it: 'crawl' or 'update:<id>'
    visited_in TEXT                      -- who visited it: 'crawl' or 'update:<id>'
);
CREATE UNIQUE INDEX IF NOT EXISTS graph_author_queue ON graph_author(queue_pos);
CREATE INDEX IF NOT EXISTS graph_author_state ON graph_author(state, queue_pos);
CREATE TABLE IF NOT EXISTS graph_paper (
    arxiv_id TEXT PRIMARY KEY,
    author_key TEXT NOT NULL,            -- the first author
    published TEXT NOT NULL,             -- v1 date, ISO
    sampled INTEGER NOT NULL DEFAULT 1,  -- 0 = left out by the popularity cap
    added_by TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_paper_author ON graph_paper(author_key);
CREATE TABLE IF NOT EXISTS graph_edge (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    weight INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS graph_edge_b ON graph_edge(b);
CREATE TABLE IF NOT EXISTS graph_update (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    since TEXT NOT NULL,
    until TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    papers_added INTEGER NOT NULL DEFAULT 0,
    authors_added INTEGER NOT NULL DEFAULT 0,
    edges_added INTEGER NOT NULL DEFAULT 0,
    authors_pruned INTEGER NOT NULL DEFAULT 0,
    papers_pruned INTEGER NOT NULL DEFAULT 0,
    api_calls INTEGER NOT NULL DEFAULT 0,
    json TEXT                            -- the full UpdateReport
);
CREATE TABLE IF NOT EXISTS graph_error (
    author_key TEXT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (author_key, code)
);
"""

register_schema("graph", GRAPH_SCHEMA)

CRAWL_OPTIONS_KEY = "graph.crawl.options"


def ensure(ws) -> None:
    """Create the graph tables on a workspace whose connection opened before this module was imported.

    Done once per Workspace object (the DDL is idempotent but `executescript` would commit an open transaction).
    """
    if not getattr(ws, "_graph_schema_ready", False):
        ws.ensure_schema(GRAPH_SCHEMA)
        ws._graph_schema_ready = True


def edge_key(a: str, b: str) -> tuple[str, str]:
    """Undirected edges are stored once, smaller key first."""
    return (a, b) if a < b else (b, a)


def next_queue_pos(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT COALESCE(MAX(queue_pos), -1) + 1 FROM graph_author").fetchone()
    return int(row[0])


def enqueue(conn: sqlite3.Connection, key: str, name: str, depth: int, added_by: str = "crawl") -> bool:
    """Queue an author unless already known (in any state). Returns True when newly queued."""
    if conn.execute("SELECT 1 FROM graph_author WHERE key=?", (key,)).fetchone():
        return False
    conn.execute(
        "INSERT INTO graph_author(key, name, state, depth, queue_pos, added_by) VALUES (?,?,?,?,?,?)",
        (key, name, "queued", depth, next_queue_pos(conn), added_by),
    )
    return True


def edge_weight(conn: sqlite3.Connection, a: str, b: str) -> int:
    """Co-authorship weight: graph papers (of either endpoint, as first author) on which the other appears."""
    row = conn.execute(
        """SELECT COUNT(DISTINCT gp.arxiv_id) FROM graph_paper gp
           JOIN authorship au ON au.arxiv_id = gp.arxiv_id
           WHERE (gp.author_key = ? AND au.author_key = ?) OR (gp.author_key = ? AND au.author_key = ?)""",
        (a, b, b, a),
    ).fetchone()
    return int(row[0])


def add_edges(conn: sqlite3.Connection, pairs: Iterable[tuple[str, str]]) -> int:
    """Insert (or refresh the weight of) co-authorship edges; returns how many were new."""
    new = 0
    for x, y in pairs:
        if x == y:
            continue
        a, b = edge_key(x, y)
        w = edge_weight(conn, a, b)
        if w == 0:  # an edge must be supported by a graph paper listing both authors
            continue
        cur = conn.execute("INSERT OR IGNORE INTO graph_edge VALUES (?,?,?)", (a, b, w))
        if cur.rowcount:
            new += 1
        else:
            conn.execute("UPDATE graph_edge SET weight=? WHERE a=? AND b=?", (w, a, b))
    return new


def refresh_weights(conn: sqlite3.Connection, keys: Iterable[str] | None = None) -> int:
    """Recompute edge weights (all edges, or those touching `keys`); drop edges no paper supports any more.

    Returns the number of edges removed.
    """
    if keys is None:
        rows = conn.execute("SELECT a, b FROM graph_edge").fetchall()
    else:
        ks = sorted(set(keys))
        rows = []
        for i in range(0, len(ks), 500):
            chunk = ks[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows += conn.execute(
                f"SELECT a, b FROM graph_edge WHERE a IN ({marks}) OR b IN ({marks})", (*chunk, *chunk)
            ).fetchall()
    removed = 0
    for a, b in {(r[0], r[1]) for r in rows}:
        w = edge_weight(conn, a, b)
        if w == 0:
            conn.execute("DELETE FROM graph_edge WHERE a=? AND b=?", (a, b))
            removed += 1
        else:
            conn.execute("UPDATE graph_edge SET weight=? WHERE a=? AND b=?", (w, a, b))
    return removed


def record_error(conn: sqlite3.Connection, author_key: str, code: str, message: str) -> None:
    conn.execute("INSERT OR REPLACE INTO graph_error VALUES (?,?,?,?)", (author_key, code, message, now_iso()))


def count(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])
