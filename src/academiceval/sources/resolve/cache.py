"""The resolution cache and the per-link record, both tables of this stage in the workspace.

`resolve_cache` keeps what each outside look-up answered — an arXiv `id_list` entry, an arXiv title query, an
OpenAlex DOI or title search — *before* matching (the candidates, or nothing), so a rerun asks nothing twice and a
change of the matching rules needs no new request. `reference_resolution` keeps, per citing paper and reference,
the method, score and work of each link (and the reason of each miss), so every link can be reviewed and the
report (`scripts/resolution_report.py`) counts methods without resolving again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from academiceval.sources.resolve.models import Resolution, ResolvedWork
from academiceval.store.workspace import Workspace, now_iso, register_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS resolve_cache (
    key TEXT PRIMARY KEY,  -- "arxiv-api:id:<id>", "arxiv-api:title:<t>", "openalex:doi:<doi>", "openalex:title:<t>|<y>"
    json TEXT NOT NULL,            -- list of candidate works (ResolvedWork JSON); [] when the look-up found nothing
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reference_resolution (
    paper_id TEXT NOT NULL,        -- the citing paper (parsed_paper.paper_id)
    ref_index INTEGER NOT NULL,    -- Reference.index in that paper
    method TEXT,                   -- sources.resolve.models.METHODS, NULL when unresolved
    score REAL NOT NULL,
    work_id TEXT,                  -- arXiv id, "doi:…" or "openalex:W…"
    title TEXT,
    has_abstract INTEGER NOT NULL,
    query TEXT NOT NULL,
    reason TEXT,                   -- why unresolved
    at TEXT NOT NULL,
    PRIMARY KEY (paper_id, ref_index)
);
CREATE INDEX IF NOT EXISTS reference_resolution_method ON reference_resolution(method);
"""
register_schema("sources_resolve", SCHEMA)


class LookupCache:
    """Candidates per outside look-up key (misses are cached too)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> list[ResolvedWork] | None:
        row = self.ws.db.execute("SELECT json FROM resolve_cache WHERE key=?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return [ResolvedWork.model_validate(d) for d in json.loads(row[0])]

    def put_many(self, items: dict[str, list[ResolvedWork]]) -> None:
        if not items:
            return
        at = now_iso()
        with self.ws.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO resolve_cache VALUES (?,?,?)",
                [(k, json.dumps([w.model_dump(mode="json") for w in v]), at) for k, v in items.items()],
            )


def record_resolutions(ws: Workspace, paper_id: str, pairs: Sequence[tuple[int, Resolution]]) -> None:
    """Replace the stored links of `paper_id` for these reference indices."""
    at = now_iso()
    rows = [
        (
            paper_id,
            idx,
            r.method,
            r.score,
            r.work.work_id if r.work else None,
            r.work.title if r.work else None,
            int(bool(r.work and r.work.abstract.strip())),
            r.query,
            r.reason,
            at,
        )
        for idx, r in pairs
    ]
    with ws.transaction() as conn:
        conn.executemany("INSERT OR REPLACE INTO reference_resolution VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


def resolutions_of(ws: Workspace, paper_id: str) -> dict[int, Resolution]:
    """The stored links of one citing paper, by reference index."""
    out: dict[int, Resolution] = {}
    for idx, method, score, work_id, title, has_abs, query, reason in ws.db.execute(
        "SELECT ref_index, method, score, work_id, title, has_abstract, query, reason FROM reference_resolution "
        "WHERE paper_id=?",
        (paper_id,),
    ):
        work = None
        if work_id:
            arxiv = None if work_id.startswith(("doi:", "openalex:")) else work_id
            work = ResolvedWork(
                arxiv_id=arxiv,
                doi=work_id[4:] if work_id.startswith("doi:") else None,
                openalex_id=work_id[9:] if work_id.startswith("openalex:") else None,
                title=title or "",
                abstract="(stored)" if has_abs else "",
            )
        out[int(idx)] = Resolution(method=method, score=float(score), work=work, query=query, reason=reason)
    return out


def method_counts(ws: Workspace, paper_ids: Sequence[str] | None = None) -> Counter[str]:
    """How many stored links each method made (unresolved under "unresolved: <reason>")."""
    out: Counter[str] = Counter()
    rows = ws.db.execute("SELECT paper_id, method, reason FROM reference_resolution")
    wanted = set(paper_ids) if paper_ids is not None else None
    for pid, method, reason in rows:
        if wanted is None or pid in wanted:
            out[method or f"unresolved: {reason}"] += 1
    return out
