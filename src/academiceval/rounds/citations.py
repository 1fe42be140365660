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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from rapidfuzz import fuzz

from academiceval.papers.bibliography import clean_title
from academiceval.papers.bibliography import norm_title as title_key
from academiceval.sources.resolve import resolve_references, resolver_for
from academiceval.store.models import CitedPaper
from academiceval.store.paper_models import Paper, PaperMeta, Reference, SectionRole
from academiceval.store.workspace import Workspace, register_schema

CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS round_token_cache (
    key TEXT PRIMARY KEY,       -- sha256 of the texts counted (WordPiece, bert-base-uncased)
    counts TEXT NOT NULL        -- JSON list of token counts
);
"""
register_schema("rounds", CACHE_SCHEMA)


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
    return [by_index[i] for i in mentions_in_related_work(paper)]


def mentions_in_related_work(paper: Paper) -> Counter[int]:
    """How many in-text citations inside the related-work sections name each reference (by `Reference.index`, in
    order of first citation): how much the section leans on a work."""
    known = {r.index for r in paper.references}
    out: Counter[int] = Counter()
    for c in paper.citations:
        if not (0 <= c.section_index < len(paper.sections)):
            continue
        if paper.sections[c.section_index].role != SectionRole.related_work:
            continue
        for i in dict.fromkeys(c.reference_indices):
            if i in known:
                out[i] += 1
    return out


@dataclass
class CorpusStats:
    cited: int = 0  # references the related-work section cites
    resolved: Counter[str] = field(default_factory=Counter)  # how: sources.resolve METHODS (id-workspace, …)
    unresolved: Counter[str] = field(default_factory=Counter)  # why
    listed: int = 0  # distinct cited works in the list (resolved or not)
    with_abstract: int = 0  # of those, shown with an abstract
    title_only: int = 0  # of those, shown by title, authors and year only (unresolved, or no abstract anywhere)
    not_shown: int = 0  # unresolved references with no title to show (nothing the model could read)

    @property
    def abstract_fraction(self) -> float:
        """The share of listed cited works shown with an abstract (the resolved-fraction rule's measure)."""
        return self.with_abstract / self.listed if self.listed else 0.0


# How one reference of the section ended up in the list (`CitedList.by_ref`): what the label paragraphs are judged by.
ABSTRACT, TITLE_ONLY, NOT_SHOWN, SAME_WORK = "abstract", "title-only", "not shown", "same work"


@dataclass
class CitedList:
    """The cited works of one target as the list shows them, and how each reference of the section fared."""

    items: list[CitedPaper]
    stats: CorpusStats
    by_ref: dict[int, str] = field(default_factory=dict)  # Reference.index -> ABSTRACT / TITLE_ONLY / NOT_SHOWN / …


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


class CitationResolver:
    """Resolves a target's cited references through `sources.resolve` (the resolver the build's source implies)."""

    def __init__(self, ws: Workspace, source: object | None = None) -> None:
        self.ws = ws
        self.resolver = resolver_for(ws, source)

    @property
    def errors(self) -> Counter[str]:
        return self.resolver.errors

    def listed(
        self,
        refs: Sequence[Reference],
        *,
        exclude: str | None = None,
        paper_id: str | None = None,
        mentions: Mapping[int, int] | None = None,
    ) -> CitedList:
        """Every distinct work the references name, as the list shows it: a resolved work with its record's title,
        authors, year and abstract; an unresolved one with its reference's own title, authors and year and no
        abstract (`resolved=False`) — only a reference without a title is left out (`not shown`). `exclude` drops
        the target itself (a self-citation of a version); `paper_id` records each link in the workspace; `mentions`
        (`mentions_in_related_work`) counts each work's in-text citations (references naming one work add up)."""
        counts = mentions or {}
        stats = CorpusStats(cited=len(refs))
        items: dict[str, CitedPaper] = {}
        titles: set[str] = set()
        by_ref: dict[int, str] = {}
        for ref, res in zip(refs, resolve_references(self.resolver, refs, paper_id=paper_id), strict=True):
            if res.work is not None:
                meta = res.work.to_meta()
                key, title = meta.arxiv_id, clean_title(meta.title) or _clean(meta.title)
                item = CitedPaper(
                    arxiv_id=meta.arxiv_id,
                    title=_clean(title),
                    abstract=_clean(meta.abstract),
                    authors=[a.name for a in meta.authors],
                    year=res.work.year or (meta.published.year if meta.published.year > 1 else None),
                    found_by=res.method or "",
                )
            else:
                title = clean_title(ref.title)
                if not title:
                    stats.unresolved[res.reason or "unresolved"] += 1
                    stats.not_shown += 1
                    by_ref[ref.index] = NOT_SHOWN
                    continue
                key = ref.arxiv_id or (f"doi:{ref.doi}" if ref.doi else f"title:{title_key(title)}")
                item = CitedPaper(
                    arxiv_id=ref.arxiv_id or (f"doi:{ref.doi}" if ref.doi else None),
                    title=_clean(title),
                    authors=list(ref.authors),
                    year=ref.year,
                    resolved=False,
                )
            if (meta_id := item.arxiv_id) is not None and meta_id == exclude:
                stats.unresolved["cites the target itself"] += 1
                by_ref[ref.index] = SAME_WORK
                continue
            if key in items or title_key(item.title) in titles:
                stats.unresolved["duplicate of another reference"] += 1
                prior = items.get(key) or next(c for c in items.values() if title_key(c.title) == title_key(item.title))
                prior.mentions += counts.get(ref.index, 0)
                by_ref[ref.index] = ABSTRACT if prior.abstract else TITLE_ONLY
                continue
            item.mentions = counts.get(ref.index, 0)
            items[key] = item
            titles.add(title_key(item.title))
            if item.resolved:
                stats.resolved[res.method or ""] += 1
                if res.work is not None and res.work.abstract_from_parse:
                    stats.resolved["abstract from the stored parse"] += 1
                if not item.abstract:
                    stats.resolved["title only (no abstract anywhere in the store)"] += 1
            else:
                stats.unresolved[res.reason or "unresolved"] += 1
            by_ref[ref.index] = ABSTRACT if item.abstract else TITLE_ONLY
        stats.listed = len(items)
        stats.with_abstract = sum(1 for c in items.values() if c.abstract)
        stats.title_only = stats.listed - stats.with_abstract
        return CitedList(list(items.values()), stats, by_ref)

    def resolve(
        self, refs: Sequence[Reference], *, exclude: str | None = None, paper_id: str | None = None
    ) -> tuple[list[PaperMeta], CorpusStats]:
        """The resolved works only, as metadata (what the list held before unresolved works were kept)."""
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


def _archive(category: str | None) -> str | None:
    """ "cs" of "cs.CL", "astro-ph" of "astro-ph.GA"; None for a category without a sub-field."""
    return category.split(".", 1)[0] if category and "." in category else None


def distractor_pool(
    ws: Workspace,
    *,
    category: str | None,
    before: date,
    exclude: set[str],
    n: int,
    rng: random.Random,
    exclude_titles: set[str] | None = None,
) -> list[tuple[PaperMeta, str]]:
    """n works the target does not cite, each with an abstract, published strictly before the target: from its
    own primary category first ("same-category"), then its archive ("same-archive": cs.* for cs.CL), then any
    ("any-category") — each tier shuffled with `rng`. Returns (work, tier) pairs. `exclude_titles` are normalised
    titles of the cited works (an unresolved cited work has no id to exclude it by)."""
    if n <= 0:
        return []
    skip_titles = exclude_titles or set()
    picked: list[tuple[PaperMeta, str]] = []
    seen = set(exclude)
    archive = _archive(category)
    tiers = (
        ("same-category", {"category": category}, bool(category)),
        ("same-archive", {"archive": archive}, archive is not None),
        ("any-category", {}, True),
    )
    for tier, where, usable in tiers:
        if not usable:
            continue
        ids = ws.ids_published_before(before, **where)
        ids = [i for i in ids if i not in seen]
        rng.shuffle(ids)
        for aid in ids:
            seen.add(aid)
            meta = ws.get_meta(aid)
            if meta is None or not meta.abstract.strip() or title_key(meta.title) in skip_titles:
                continue
            picked.append((meta, tier))
            if len(picked) >= n:
                return picked
    return picked


def distractor_items(
    pool: Sequence[tuple[PaperMeta, str]], *, abstract_share: float, rng: random.Random
) -> list[CitedPaper]:
    """The distractors as list entries. A share `1 - abstract_share` of them is shown without its abstract
    (`abstract_withheld`), as many as the cited works that have none: otherwise "no abstract available" would
    mark an entry as a real citation."""
    keep = round(abstract_share * len(pool))
    order = list(range(len(pool)))
    rng.shuffle(order)
    with_abstract = set(order[:keep])
    out = []
    for i, (m, tier) in enumerate(pool):
        shown = i in with_abstract
        out.append(
            CitedPaper(
                arxiv_id=m.arxiv_id,
                title=_clean(clean_title(m.title) or m.title),
                abstract=_clean(m.abstract) if shown else "",
                distractor=True,
                authors=[a.name for a in m.authors],
                year=m.published.year,
                found_by=tier,
                abstract_withheld=not shown,
            )
        )
    return out


def build_corpus(
    cited: Sequence[PaperMeta | CitedPaper], distractors: Sequence[PaperMeta | CitedPaper], rng: random.Random
) -> list[CitedPaper]:
    """Cited works plus distractors, in a seeded random order (position must not reveal which are cited)."""
    items = [c if isinstance(c, CitedPaper) else _from_meta(c) for c in cited]
    items += [
        c if isinstance(c, CitedPaper) else _from_meta(c).model_copy(update={"distractor": True}) for c in distractors
    ]
    rng.shuffle(items)
    return items


def _from_meta(m: PaperMeta) -> CitedPaper:
    return CitedPaper(
        arxiv_id=m.arxiv_id,
        title=_clean(m.title),
        abstract=_clean(m.abstract),
        authors=[a.name for a in m.authors],
        year=m.published.year if m.published.year > 1 else None,
    )
