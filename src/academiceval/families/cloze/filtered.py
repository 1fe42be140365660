"""The filtered construction (the default): questions a model has to read to answer, for every level of a paper.

Differences from SCALAR's construction (`generate.generate_for_paper`, kept for `--preset scalar`):

1. texts: the question paper and every candidate go through the project's one cleaner (`papers.clean`); the
   paper is cleaned piece by piece between its citation spans, so every span still points at its citation;
2. the pool: one candidate per work — references linked to the same stored paper, or with the same normalised
   title or text, form one group (the gold's group-mates are never its distractors); a reference whose entry
   title disagrees with the linked paper's title is not used; a "body only" candidate that names its own title
   is not used at that level;
3. citations: the span is widened to the whole printed citation (`defects.whole_citation`), and a citation is
   grouped by the gap rule, by the source's own annotation, or when it shares its bracket with another citation
   (`defects.in_group`); only individual ones are masked;
4. every pool reference gives at most one question per level, and a masked citation serves one level only
   (medium and hard both take descriptive citations: each is assigned to one of them);
5. distractors are matched on surface cues with a balanced target rank and checked (`balance`), once every
   paper's questions are known (the surface signal is fit on them);
6. at most `max_per_paper` questions per paper and level (`balance.cap_per_paper`).
Everything skipped is counted with its reason.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from rapidfuzz import fuzz

from academiceval.families.cloze.classify import JudgeClassifier
from academiceval.families.cloze.defects import in_group, name_fragment, shows_own_title, whole_citation
from academiceval.families.cloze.generate import (
    CandidateSource,
    CountTokens,
    PaperResult,
    PaperTokens,
    Span,
    decide_type,
    kept_sections,
    make_item,
    mark_groups,
    paper_spans,
    question_seed,
)
from academiceval.families.cloze.models import MASK, ClozeItem, ClozeOptions, TypeDecision
from academiceval.families.cloze.pool import PoolText, pool_centrality
from academiceval.models.choice_guessers import OptionView, anchor_context, shown_title, word_before
from academiceval.models.rag.retrievers import terms
from academiceval.papers.clean import clean_text, vocabulary
from academiceval.papers.links import normalise_title
from academiceval.store.paper_models import Paper

TITLE_AGREEMENT = 80.0  # rapidfuzz token_set_ratio of an entry's title and the linked paper's title, below: unused


@dataclass
class Context:
    """What the generator needs besides the paper (one per build)."""

    seed: int
    round_name: str
    tokenizer: str
    count_tokens: CountTokens
    additive: bool = False
    judge: JudgeClassifier | None = None
    mask: str = MASK
    texts: dict[tuple[str, str], tuple[PoolText, OptionView]] = field(default_factory=dict)  # (paper, field) → view


def clean_paper(paper: Paper) -> Paper:
    """The paper with every section cleaned (`papers.clean.clean_text` for its source) piece by piece between
    citation spans, which keep their text and move with it."""
    vocab = vocabulary([s.text for s in paper.sections])
    by_section: dict[int, list[int]] = {}
    for k, c in enumerate(paper.citations):
        by_section.setdefault(c.section_index, []).append(k)
    sections, citations = [], list(paper.citations)
    for si, s in enumerate(paper.sections):
        idx = sorted(by_section.get(si, []), key=lambda k: (paper.citations[k].start, paper.citations[k].end))
        out, cursor, moved = [], 0, {}
        for k in idx:
            c = paper.citations[k]
            if c.start < cursor or not (0 <= c.start < c.end <= len(s.text)):
                continue  # overlapping or out of range: left where it was, unused (its text no longer matches)
            out.append(clean_text(s.text[cursor : c.start], vocab, source=paper.source).text)
            at = sum(map(len, out))
            out.append(s.text[c.start : c.end])
            moved[k] = (at, at + c.end - c.start)
            cursor = c.end
        out.append(clean_text(s.text[cursor:], vocab, source=paper.source).text)
        text = "".join(out)
        sections.append(s.model_copy(update={"text": text}))
        for k in idx:
            if k in moved:
                citations[k] = paper.citations[k].model_copy(update={"start": moved[k][0], "end": moved[k][1]})
            else:
                citations[k] = paper.citations[k].model_copy(update={"section_index": -1})
    return paper.model_copy(update={"sections": sections, "citations": [c for c in citations if c.section_index >= 0]})


def _view(src: CandidateSource, fieldname: str, ctx: Context) -> tuple[PoolText, OptionView]:
    key = (src.paper_id, fieldname)
    hit = ctx.texts.get(key)
    if hit is None:
        text, _ = src.shown(fieldname, ctx.count_tokens, additive=ctx.additive)
        counts = Counter(terms([text])[0]) if text.strip() else Counter()
        title = shown_title(src.title, text)
        title_terms = frozenset(terms([title])[0]) if title else frozenset()
        n = sum(counts.values())
        hit = (PoolText(counts, n, title_terms), OptionView(counts, n, len(text.split()), title_terms, src.published))
        ctx.texts[key] = hit
    return hit


def pool_groups(sources: dict[int, CandidateSource], fieldname: str, ctx: Context) -> dict[int, int]:
    """Reference → its group's representative (the lowest reference index of one work)."""
    parent = {r: r for r in sources}

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    seen: dict[tuple[str, str], int] = {}
    for r in sorted(sources):
        s = sources[r]
        text = s.shown(fieldname, ctx.count_tokens, additive=ctx.additive)[0]
        for key in (("paper", s.paper_id), ("title", normalise_title(s.title)), ("text", " ".join(text.split()))):
            if not key[1] or (key[0] == "title" and len(key[1]) < 12):
                continue
            if key in seen:
                a, b = find(seen[key]), find(r)
                parent[max(a, b)] = min(a, b)
            else:
                seen[key] = r
    return {r: find(r) for r in sources}


def usable(src: CandidateSource, options: ClozeOptions, ctx: Context) -> str | None:
    """Why a linked reference cannot be a candidate at this level (None when it can)."""
    if options.candidate_field == "abstract":
        return None if src.abstract.strip() else "reference: linked paper has no abstract"
    if not src.has_text:
        return "reference: linked paper has no section text"
    if src.count_content(ctx.count_tokens, additive=ctx.additive) > options.max_candidate_tokens:
        return "reference: candidate over the token cap"
    entry, linked = normalise_title(src.ref_title or ""), normalise_title(src.title)
    if entry and linked and fuzz.token_set_ratio(entry, linked) < TITLE_AGREEMENT:
        return "reference: entry title disagrees with the linked paper's title"
    if options.candidate_field == "body":
        body = src.shown("body", ctx.count_tokens, additive=ctx.additive)[0]
        if not body.strip():
            return "reference: no body left without introduction and conclusion"
        if shows_own_title(src.title, body):
            return "reference: its body names its own title"
    return None


def repaired_spans(paper: Paper, kept: list[int], options: ClozeOptions) -> list[Span]:
    """Citation spans widened to the whole citation, then marked grouped by the gap rule, by the source, or by
    sharing a bracket with another citation."""
    spans = paper_spans(paper, set(kept))
    for s in spans:
        text = paper.sections[s.section_index].text
        s.start, s.end = whole_citation(text, s.start, s.end)
        s.text = text[s.start : s.end]
    mark_groups(spans, options.group_gap)
    for s in spans:
        if s.source_grouped or in_group(paper.sections[s.section_index].text, s.start, s.end):
            s.grouped = True
    return spans


def generate_filtered(
    paper: Paper,
    published: date | None,
    sources: dict[int, CandidateSource],
    levels: dict[str, ClozeOptions],
    ctx: Context,
) -> tuple[dict[str, PaperResult], list[Pending]]:
    """The filtered construction's questions of one paper for every level at once (see the module docstring),
    still without distractors: `balance.select` chooses them once every paper's questions are known."""
    res = {lv: PaperResult() for lv in levels}
    pending: list[Pending] = []
    first = next(iter(levels.values()))
    paper = clean_paper(paper) if any(o.clean for o in levels.values()) else paper
    kept = kept_sections(paper)
    chars = sum(len(paper.sections[i].text) for i in kept)
    if not first.min_paper_chars <= chars <= first.max_paper_chars:
        for pr in res.values():
            pr.skips[f"paper text outside {first.min_paper_chars:,}-{first.max_paper_chars:,} characters"] += 1
        return res, pending
    pools: dict[str, dict[int, CandidateSource]] = {}
    groups: dict[str, dict[int, int]] = {}
    for lv, o in levels.items():
        pool = {}
        for r, src in sorted(sources.items()):
            why = usable(src, o, ctx)
            if why is None:
                pool[r] = src
            else:
                res[lv].skips[why] += 1
        groups[lv] = pool_groups(pool, o.candidate_field, ctx)
        if len(set(groups[lv].values())) < o.n_candidates:
            res[lv].skips[f"paper: fewer than {o.n_candidates} distinct usable references"] += 1
            pool = {}
        pools[lv] = pool
    if not any(pools.values()):
        return res, pending
    spans = repaired_spans(paper, kept, first)
    individual: dict[int, list[Span]] = {}
    for s in spans:
        reason = None
        if s.ref_index is None:
            reason = "citation: unresolved marker"
        elif s.grouped:
            reason = "citation: grouped"
        elif s.ref_index not in sources:
            reason = "citation: no linked stored paper"
        if reason is not None:
            for pr in res.values():
                pr.skips[reason] += 1
        else:
            individual.setdefault(s.ref_index, []).append(s)
    decisions = {}
    for occ in individual.values():
        for s in occ:
            decisions[id(s)] = decide_type(paper, s, first, ctx.judge)
            for pr in res.values():
                pr.types.append(decisions[id(s)])
    # ---- one citation per level, one question per reference and level ----------------------------------------
    rng = random.Random(f"{ctx.seed}:{paper.paper_id}:filtered")
    order = sorted(individual)
    rng.shuffle(order)
    used: set[int] = set()
    wanted: list[tuple[str, int, Span]] = []
    for r in order:
        lvs = list(levels)
        rng.shuffle(lvs)
        for lv in lvs:
            o = levels[lv]
            if r not in pools[lv]:
                continue
            fits = [s for s in individual[r] if id(s) not in used and _type_fits(decisions[id(s)].decided, o)]
            if not fits:
                continue
            s = rng.choice(fits)
            used.add(id(s))
            wanted.append((lv, r, s))
    paper_tokens = PaperTokens(paper, kept, ctx.count_tokens, ctx.additive)
    centrality: dict[str, dict[int, float]] = {}
    for lv, r, span in wanted:
        o = levels[lv]
        q = _pending(paper, published, kept, span, r, decisions[id(span)], pools[lv], groups[lv], o, lv, ctx)
        if isinstance(q, str):
            res[lv].skips[q] += 1
            continue
        if lv not in centrality:
            centrality[lv] = pool_centrality({x: _view(src, o.candidate_field, ctx)[1] for x, src in pools[lv].items()})
        q.centrality = centrality[lv]
        q.paper_tokens = paper_tokens
        pending.append(q)
    return res, pending


def _type_fits(decided: str | None, o: ClozeOptions) -> bool:
    return decided is not None and (o.citation_type == "any" or decided == o.citation_type)


@dataclass
class Pending:
    """A question whose distractors are still to be chosen (`balance.select`): the masked citation, the gold,
    and the other works of the pool as the guessers would see them."""

    level: str
    paper: Paper
    published: date | None
    kept: list[int]
    span: Span
    gold: int  # reference index
    decision: TypeDecision
    options: ClozeOptions
    qseed: int
    context: list[str]  # terms around the mask
    before: list[str]  # terms of the word before it
    pool: dict[int, CandidateSource]
    others: list[int]  # one reference per other work
    views: dict[int, tuple[PoolText, OptionView]]
    centrality: dict[int, float] = field(default_factory=dict)
    paper_tokens: PaperTokens | None = None

    def make(self, order: list[int], slot: int, ctx: Context) -> ClozeItem:
        assert self.paper_tokens is not None
        return make_item(
            self.paper,
            self.published,
            self.kept,
            self.span,
            self.decision,
            [self.pool[x] for x in order],
            slot,
            self.qseed,
            self.options,
            preset=self.level,
            round_name=ctx.round_name,
            tokenizer=ctx.tokenizer,
            count_tokens=ctx.count_tokens,
            additive=ctx.additive,
            mask=ctx.mask,
            paper_tokens=self.paper_tokens,
        )


def _pending(
    paper: Paper,
    published: date | None,
    kept: list[int],
    span: Span,
    r: int,
    decision: TypeDecision,
    pool: dict[int, CandidateSource],
    groups: dict[int, int],
    o: ClozeOptions,
    lv: str,
    ctx: Context,
) -> Pending | str:
    """The question of `span` with its pool prepared, or the reason it cannot be asked."""
    text = paper.sections[span.section_index].text
    masked = text[: span.start] + ctx.mask + text[span.end :]
    if name_fragment(masked, ctx.mask, span.text) is not None:  # "Beltagy et al. [3]": the authors stay in the prose
        return "citation: its authors are named right before it"
    others = sorted({groups[x] for x in pool if groups[x] != groups[r]})
    if len(others) < o.n_candidates - 1:
        return "question: fewer than 3 other works in the pool"
    return Pending(
        level=lv,
        paper=paper,
        published=published,
        kept=kept,
        span=span,
        gold=r,
        decision=decision,
        options=o,
        qseed=question_seed(ctx.seed, paper.paper_id, r, span.section_index, span.start),
        context=terms([anchor_context(masked, ctx.mask)])[0],
        before=word_before(masked, ctx.mask),
        pool=pool,
        others=others,
        views={x: _view(pool[x], o.candidate_field, ctx) for x in [r, *others]},
    )


__all__ = ["Context", "Pending", "clean_paper", "generate_filtered", "pool_groups", "repaired_spans", "usable"]
