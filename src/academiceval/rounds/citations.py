"""The Related-Work citation corpus: the papers a target cites inside its related-work section.

Each cited reference is resolved to a title and abstract: first by the arXiv id written in the reference (the
workspace, then the source's batched `id_list`), else by its title (the workspace's titles, then a `ti:` query to
the source) accepted only at ≥0.9 normalised similarity (rapidfuzz). Lookups, including misses, are cached in the
workspace so a rebuild costs no API calls. The corpus is shuffled per sample (the original listed the true
citations first, leaking them by position) and may be padded with distractor papers.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from rapidfuzz import fuzz, process

from academiceval.errors import AcademicEvalError
from academiceval.papers.models import Paper, Reference, SectionRole
from academiceval.rounds.models import CitedPaper
from academiceval.sources.models import PaperMeta
from academiceval.store.workspace import Workspace, now_iso, register_schema

CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS round_citation_cache (
    key TEXT PRIMARY KEY,       -- "id:<arxiv id>" or "title:<normalised title>"
    json TEXT,                  -- PaperMeta as JSON, NULL when the lookup found nothing
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS round_token_cache (
    key TEXT PRIMARY KEY,       -- sha256 of the texts counted (WordPiece, bert-base-uncased)
    counts TEXT NOT NULL        -- JSON list of token counts
);
"""
register_schema("rounds", CACHE_SCHEMA)

MATCH_THRESHOLD = 0.9
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


def _title_queries(nt: str) -> list[str]:
    """The exact title phrase first; then ANDs of long title words leaving out, in turn, the longest and the
    second-longest word (so one misprinted word does not hide the paper). At most three calls per title."""
    from academiceval.sources.query import and_, ti

    out = [str(ti(nt))]
    words = sorted({w for w in nt.split() if len(w) > 3}, key=lambda w: (-len(w), w))[:4]
    if len(words) >= 3:
        for skip in (0, 1):
            group = [w for i, w in enumerate(words) if i != skip]
            out.append(str(and_(*(ti(w) for w in group))))
    return out


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
    resolved: Counter[str] = field(default_factory=Counter)  # how: id-workspace, id-source, title-…
    unresolved: Counter[str] = field(default_factory=Counter)  # why


class CitationResolver:
    """Resolves references to PaperMeta through the workspace, a cache table and (optionally) a source."""

    def __init__(self, ws: Workspace, source: object | None = None, *, threshold: float = MATCH_THRESHOLD) -> None:
        self.ws = ws
        self.source = source
        self.threshold = threshold
        self._titles: tuple[list[str], list[str]] | None = None
        self.errors: Counter[str] = Counter()

    # ---- cache ------------------------------------------------------------------------------------
    def _cached(self, key: str) -> tuple[bool, PaperMeta | None]:
        row = self.ws.db.execute("SELECT json FROM round_citation_cache WHERE key=?", (key,)).fetchone()
        if row is None:
            return False, None
        return True, PaperMeta.model_validate_json(row[0]) if row[0] else None

    def _store(self, key: str, meta: PaperMeta | None) -> None:
        self.ws.db.execute(
            "INSERT OR REPLACE INTO round_citation_cache VALUES (?,?,?)",
            (key, meta.model_dump_json() if meta else None, now_iso()),
        )

    # ---- lookups ----------------------------------------------------------------------------------
    def _title_index(self) -> tuple[list[str], list[str]]:
        if self._titles is None:
            ids, titles = [], []
            for r in self.ws.db.execute("SELECT arxiv_id, title FROM paper_meta"):
                ids.append(r[0])
                titles.append(norm_title(r[1]))
            self._titles = (ids, titles)
        return self._titles

    def by_ids(self, ids: Sequence[str]) -> dict[str, tuple[PaperMeta, str]]:
        found: dict[str, tuple[PaperMeta, str]] = {}
        missing: list[str] = []
        for i in dict.fromkeys(ids):
            m = self.ws.get_meta(i)
            if m is not None:
                found[i] = (m, "id-workspace")
                continue
            hit, cm = self._cached(f"id:{i}")
            if hit:
                if cm is not None:
                    found[i] = (cm, "id-source")
            else:
                missing.append(i)
        if missing and self.source is not None:
            try:
                metas = self.source.fetch_ids(missing)  # type: ignore[attr-defined]
            except AcademicEvalError as exc:
                self.errors[exc.code] += 1
                return found
            got = {m.arxiv_id: m for m in metas}
            for i in missing:
                self._store(f"id:{i}", got.get(i))
                if i in got:
                    found[i] = (got[i], "id-source")
        return found

    def by_title(self, title: str) -> tuple[PaperMeta | None, str]:
        nt = norm_title(title)
        if len(nt) < 8:
            return None, "title too short to match"
        ids, titles = self._title_index()
        if titles:
            best = process.extractOne(nt, titles, scorer=fuzz.ratio, score_cutoff=self.threshold * 100)
            if best is not None:
                m = self.ws.get_meta(ids[best[2]])
                if m is not None:
                    return m, "title-workspace"
        hit, cm = self._cached(f"title:{nt}")
        if hit:
            return (cm, "title-source") if cm else (None, "no title match")
        if self.source is None:
            return None, "no title match (no source to query)"
        meta = None
        for query in _title_queries(nt):
            try:
                page = self.source.search(query, max_results=10, sort_by="relevance")  # type: ignore[attr-defined]
            except AcademicEvalError as exc:
                self.errors[exc.code] += 1
                return None, f"source error ({exc.code})"
            best = max(page.items, key=lambda m: title_similarity(m.title, title), default=None)
            if best is not None and title_similarity(best.title, title) >= self.threshold:
                meta = best
                break
        self._store(f"title:{nt}", meta)
        return (meta, "title-source") if meta else (None, "no title match")

    def resolve(self, refs: Sequence[Reference], *, exclude: str | None = None) -> tuple[list[PaperMeta], CorpusStats]:
        """Resolve the references of one paper; `exclude` drops the target itself (self-citation of a version)."""
        stats = CorpusStats(cited=len(refs))
        by_id = self.by_ids([r.arxiv_id for r in refs if r.arxiv_id])
        out: dict[str, PaperMeta] = {}
        for r in refs:
            meta, how = None, ""
            if r.arxiv_id and r.arxiv_id in by_id:
                meta, how = by_id[r.arxiv_id]
            elif r.title:
                meta, how = self.by_title(r.title)
            elif r.arxiv_id:
                how = "arXiv id not found" + ("" if self.source is not None else " (no source to query)")
            else:
                how = "no arXiv id or title in the reference"
            if meta is None:
                stats.unresolved[how] += 1
            elif meta.arxiv_id == exclude:
                stats.unresolved["cites the target itself"] += 1
            elif meta.arxiv_id in out:
                stats.unresolved["duplicate of another reference"] += 1
            else:
                if not meta.abstract.strip():
                    # metadata without an abstract (listings, some Atom records): the stored parse may have one
                    paper = self.ws.get_paper_by_arxiv(meta.arxiv_id)
                    if paper is not None and paper.abstract.strip():
                        meta = meta.model_copy(update={"abstract": " ".join(paper.abstract.split())})
                        stats.resolved["abstract from the stored parse"] += 1
                    else:
                        stats.resolved["title only (no abstract anywhere in the store)"] += 1
                out[meta.arxiv_id] = meta
                stats.resolved[how] += 1
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
