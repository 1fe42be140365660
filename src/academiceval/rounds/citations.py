"""The Related-Work citation corpus: the papers a target cites inside its related-work section.

Each cited reference is resolved to a work (title and abstract) by `sources.resolve` — in layers: its arXiv id or
DOI in the workspace, fuzzy title + first author + year against the workspace and a local mirror, then online the
arXiv API and OpenAlex — with the method and score of every link recorded in the workspace and every outside
look-up cached there, so a rebuild costs no API calls. The corpus is shuffled per sample (the original listed the
true citations first, leaking them by position) and may be padded with distractor papers.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from rapidfuzz import fuzz

from academiceval.papers.models import Paper, Reference, SectionRole
from academiceval.rounds.models import CitedPaper
from academiceval.sources.models import PaperMeta
from academiceval.sources.resolve import resolve_references, resolver_for
from academiceval.store.workspace import Workspace, register_schema

CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS round_token_cache (
    key TEXT PRIMARY KEY,       -- sha256 of the texts counted (WordPiece, bert-base-uncased)
    counts TEXT NOT NULL        -- JSON list of token counts
);
"""
register_schema("rounds", CACHE_SCHEMA)

# A Related-Work sample needs at least this share of the works its related-work section cites, resolved to a
# title and abstract: below it the model is asked to write about papers it is not shown (notes/rounds.md).
MIN_RESOLVED_FRACTION = 0.5


class WorkspaceTokenCache:
    """Token counts memoised in the workspace, so monthly rebuilds do not re-tokenise unchanged papers."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def get(self, key: str) -> list[int] | None:
        row = self.ws.db.execute("SELECT counts FROM round_token_cache WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, counts: list[int]) -> None:
        self.ws.db.execute("INSERT OR REPLACE INTO round_token_cache VALUES (?,?)", (key, json.dumps(counts)))


def norm_title(title: str) -> str:
    """Lower-case words only: what fuzzy title matching compares."""
    return " ".join(re.sub(r"[^\w]+", " ", title.casefold()).split())


def title_similarity(a: str, b: str) -> float:
    return fuzz.ratio(norm_title(a), norm_title(b)) / 100.0


def cited_in_related_work(paper: Paper) -> list[Reference]:
    """References cited inside related-work sections, unique, in order of first citation."""
    by_index = {r.index: r for r in paper.references}
    out: dict[int, Reference] = {}
    for c in paper.citations:
        if not (0 <= c.section_index < len(paper.sections)):
            continue
        if paper.sections[c.section_index].role != SectionRole.related_work:
            continue
        for i in c.reference_indices:
            if i in by_index and i not in out:
                out[i] = by_index[i]
    return list(out.values())


@dataclass
class CorpusStats:
    cited: int = 0
    resolved: Counter[str] = field(default_factory=Counter)  # how: sources.resolve METHODS (id-workspace, …)
    unresolved: Counter[str] = field(default_factory=Counter)  # why


class CitationResolver:
    """Resolves a target's cited references through `sources.resolve` (the resolver the build's source implies)."""

    def __init__(self, ws: Workspace, source: object | None = None) -> None:
        self.ws = ws
        self.resolver = resolver_for(ws, source)

    @property
    def errors(self) -> Counter[str]:
        return self.resolver.errors

    def resolve(
        self, refs: Sequence[Reference], *, exclude: str | None = None, paper_id: str | None = None
    ) -> tuple[list[PaperMeta], CorpusStats]:
        """Resolve the references of one paper; `exclude` drops the target itself (self-citation of a version);
        `paper_id` records each link (method, score, work) in the workspace."""
        stats = CorpusStats(cited=len(refs))
        out: dict[str, PaperMeta] = {}
        for res in resolve_references(self.resolver, refs, paper_id=paper_id):
            if res.work is None:
                stats.unresolved[res.reason or "unresolved"] += 1
                continue
            meta = res.work.to_meta()
            if meta.arxiv_id == exclude:
                stats.unresolved["cites the target itself"] += 1
            elif meta.arxiv_id in out:
                stats.unresolved["duplicate of another reference"] += 1
            else:
                out[meta.arxiv_id] = meta
                stats.resolved[res.method or ""] += 1
                if res.work.abstract_from_parse:
                    stats.resolved["abstract from the stored parse"] += 1
                if not meta.abstract.strip():
                    stats.resolved["title only (no abstract anywhere in the store)"] += 1
        return list(out.values()), stats


def distractor_pool(
    ws: Workspace, *, category: str | None, before: date, exclude: set[str], n: int, rng: random.Random
) -> list[PaperMeta]:
    """n papers not cited by the target, same primary category first, never newer than the target."""
    if n <= 0:
        return []
    picked: list[str] = []
    for where, params in (
        ("primary_category=? AND published<=?", (category, before.isoformat())),
        ("published<=?", (before.isoformat(),)),
    ):
        if where.startswith("primary") and not category:
            continue
        ids = [r[0] for r in ws.db.execute(f"SELECT arxiv_id FROM paper_meta WHERE {where} ORDER BY arxiv_id", params)]
        ids = [i for i in ids if i not in exclude and i not in picked]
        rng.shuffle(ids)
        picked += ids[: n - len(picked)]
        if len(picked) >= n:
            break
    metas = [ws.get_meta(i) for i in picked]
    return [m for m in metas if m is not None]


def build_corpus(cited: Sequence[PaperMeta], distractors: Sequence[PaperMeta], rng: random.Random) -> list[CitedPaper]:
    """Cited papers plus distractors, in a seeded random order (position must not reveal which are cited)."""
    items = [
        CitedPaper(arxiv_id=m.arxiv_id, title=" ".join(m.title.split()), abstract=" ".join(m.abstract.split()))
        for m in cited
    ]
    items += [
        CitedPaper(
            arxiv_id=m.arxiv_id, title=" ".join(m.title.split()), abstract=" ".join(m.abstract.split()), distractor=True
        )
        for m in distractors
    ]
    rng.shuffle(items)
    return items
