"""Question generation for the citation cloze, as SCALAR's generator does it, on any stored paper.

Pure functions over one question paper: its kept sections and citation spans, the candidate texts of the
references the store links to, and the options. Per paper:

1. paper filter: kept section text (no references / acknowledgements / appendix) within
   [`min_paper_chars`, `max_paper_chars`];
2. reference pool: linked references whose stored paper has text, with section text ≤ `max_candidate_tokens`
   (abstract candidates: an abstract); fewer than `n_candidates` → the paper gives no question;
3. individual citations: a citation is grouped when another citation of the same section lies within
   `group_gap` characters of it (either side), or when its marker names several references;
4. up to `refs_per_paper` pool references drawn at random, for each up to `questions_per_reference` of its
   individual citations; then the type filter (attributional / descriptive);
5. distractors from the same pool: `random` (uniform) or `nearest` (the references cited closest to the mask
   by span midpoint, other sections pushed behind by the paper's largest midpoint; chosen among references
   with text before the cap is applied, as SCALAR's code, so a capped neighbour loses the question);
6. gold slot uniform in 0..n-1 from the question's own seed (no global RNG); the one span is replaced by the
   mask, other citations of the same reference stay visible.

Every skipped paper, reference or citation is counted with its reason in `skips`.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from academiceval.families.cloze.classify import SCALAR_TYPES, JudgeClassifier, heuristic_type
from academiceval.families.cloze.models import MASK, ClozeCandidate, ClozeItem, ClozeOptions, TypeDecision
from academiceval.store.hashing import sha256_hex
from academiceval.store.paper_models import NON_BODY_ROLES, Paper, Section

CountTokens = Callable[[Sequence[str]], list[int]]


@dataclass
class CandidateSource:
    """A linked reference's stored paper, prepared once per paper (texts and the token count of its content)."""

    ref_index: int
    ref_id: str
    paper_id: str
    arxiv_id: str | None
    title: str
    abstract: str
    sections: list[tuple[str, str]]  # (heading line, text)
    link_method: str
    content_tokens: int | None = None
    published: date | None = None  # v1 date of the linked paper (the blind "newest" guesser reads it)
    ref_title: str | None = None  # the title the question paper's reference entry gives (checked against `title`)
    rendered: dict[str, tuple[str, int]] = field(default_factory=dict)  # field -> (text, tokens), per build
    section_tokens: list[int] = field(default_factory=list)  # tokens of each "## heading" block (filled once)

    @property
    def has_text(self) -> bool:
        return any(t.strip() for _, t in self.sections)

    def content(self, *, body_only: bool = False) -> str:
        parts = []
        for head, text in self.sections:
            if body_only and not self._is_body(head):
                continue
            parts.append(f"\n## {head}\n{text}\n")
        return "".join(parts)

    def _is_body(self, head: str) -> bool:
        low = head.lower()
        return "introduction" not in low and "conclusion" not in low

    def block_tokens(self, count: CountTokens) -> list[int]:
        if not self.section_tokens and self.sections:
            self.section_tokens.extend(count([f"\n## {h}\n{t}\n" for h, t in self.sections]))
        return self.section_tokens

    def count_content(self, count: CountTokens, *, additive: bool) -> int:
        if self.content_tokens is None:
            self.content_tokens = sum(self.block_tokens(count)) if additive else count([self.content()])[0]
        return self.content_tokens

    def shown(self, field: str, count: CountTokens, *, additive: bool) -> tuple[str, int]:
        """(text, tokens) of the candidate as shown. An additive tokenizer (WordPiece) sums cached per-section
        counts, since every block starts at a line break; others count the whole text."""
        if field not in self.rendered:
            text = self.render(field)
            if not additive or field == "abstract":
                n = count([text])[0]
            elif field == "body":
                blocks = self.block_tokens(count)
                n = sum(b for b, (h, _) in zip(blocks, self.sections, strict=True) if self._is_body(h))
            else:
                head = f"{self.title}\n<Abstract>\nAbstract: {self.abstract}\n</Abstract>\n<Content>\n"
                n = count([head, "\n</Content>"])
                n = n[0] + n[1] + self.count_content(count, additive=True)
            self.rendered[field] = (text, n)
        return self.rendered[field]

    def render(self, field: str) -> str:
        """The candidate as shown to the model (layout of SCALAR's candidate fields)."""
        abstract = f"\n<Abstract>\nAbstract: {self.abstract}\n</Abstract>"
        if field == "abstract":
            return f"{self.title}{abstract}"
        if field == "body":
            return self.content(body_only=True)
        return f"{self.title}{abstract}\n<Content>\n{self.content()}\n</Content>"


@dataclass
class Span:
    section_index: int
    start: int
    end: int
    text: str
    ref_index: int | None
    multi: bool
    labels: dict[str, str]
    grouped: bool = False
    source_grouped: bool = False  # the source's own annotation (SCALAR's `single_citation` false, a PDF group)

    @property
    def mid(self) -> int:
        return (self.start + self.end) // 2


@dataclass
class PaperResult:
    items: list[ClozeItem] = field(default_factory=list)
    skips: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)  # what was done but skipped nothing (a set replaced)
    types: list[TypeDecision] = field(default_factory=list)  # every classified citation (agreement stats)


def kept_sections(paper: Paper) -> list[int]:
    return [i for i, s in enumerate(paper.sections) if s.role not in NON_BODY_ROLES and s.text.strip()]


def heading_line(s: Section) -> str:
    return f"{s.number} {s.heading}".strip() if s.number else s.heading


def mark_groups(spans: list[Span], gap: int) -> None:
    """A span is grouped when a neighbour in its section is closer than `gap` characters, or it is multi-ref."""
    by_sec: dict[int, list[Span]] = {}
    for s in spans:
        by_sec.setdefault(s.section_index, []).append(s)
    for lst in by_sec.values():
        lst.sort(key=lambda s: (s.start, s.end))
        for a, b in itertools.pairwise(lst):
            if b.start - a.end < gap:
                a.grouped = b.grouped = True
        for s in lst:
            if s.multi:
                s.grouped = True


def paper_spans(paper: Paper, kept: set[int]) -> list[Span]:
    out = []
    for c in paper.citations:
        if c.section_index not in kept:
            continue
        out.append(
            Span(
                c.section_index,
                c.start,
                c.end,
                c.text,
                c.reference_indices[0] if c.reference_indices else None,
                len(set(c.reference_indices)) > 1,
                dict(c.source_labels),
                source_grouped=c.grouped,
            )
        )
    return out


def nearest_refs(target: Span, spans: list[Span], eligible: set[int], k: int) -> list[int]:
    """Reference indices cited nearest to `target` (SCALAR's position rule), among `eligible`, distinct."""
    max_pos = max((s.mid for s in spans), default=0)
    ranked = sorted(
        (
            abs(target.mid - s.mid) + (0 if s.section_index == target.section_index else max_pos),
            i,
            s.ref_index,
        )
        for i, s in enumerate(spans)
        if s.ref_index is not None and s.ref_index != target.ref_index and s.ref_index in eligible
    )
    out: list[int] = []
    for _, _, r in ranked:
        if r not in out:
            out.append(r)
        if len(out) == k:
            break
    return out


def question_seed(seed: int, paper_id: str, ref_index: int, section_index: int, start: int) -> int:
    h = sha256_hex(f"{seed}:{paper_id}:{ref_index}:{section_index}:{start}")
    return int(h[:12], 16)


def render_paper(paper: Paper, kept: list[int], span: Span, mask: str, paper_field: str) -> str:
    def section_block(i: int) -> str:
        s = paper.sections[i]
        text = s.text
        if i == span.section_index:
            text = text[: span.start] + mask + text[span.end :]
        return f"\n\n## {heading_line(s)}\n{text}"

    if paper_field == "section":
        return section_block(span.section_index)
    head = f"\n{paper.title}\n\nAbstract: {paper.abstract}\n"
    return head + "".join(section_block(i) for i in kept)


class PaperTokens:
    """Token counts of a question paper as shown, per block, so each item re-counts only its masked section
    (additive tokenizers only; others count the whole rendered paper)."""

    def __init__(self, paper: Paper, kept: list[int], count: CountTokens, additive: bool) -> None:
        self.paper, self.kept, self.count, self.additive = paper, kept, count, additive
        self._blocks: dict[int, int] | None = None
        self._head: int | None = None

    def _block(self, i: int, text: str) -> str:
        return f"\n\n## {heading_line(self.paper.sections[i])}\n{text}"

    def of(self, rendered: str, span: Span, mask: str, paper_field: str) -> int:
        if not self.additive:
            return self.count([rendered])[0]
        text = self.paper.sections[span.section_index].text
        masked = self.count([self._block(span.section_index, text[: span.start] + mask + text[span.end :])])[0]
        if paper_field == "section":
            return masked
        if self._blocks is None:
            p = self.paper
            counts = self.count(
                [f"\n{p.title}\n\nAbstract: {p.abstract}\n"] + [self._block(i, p.sections[i].text) for i in self.kept]
            )
            self._head, self._blocks = counts[0], dict(zip(self.kept, counts[1:], strict=True))
        assert self._head is not None
        return self._head + sum(self._blocks.values()) - self._blocks[span.section_index] + masked


def decide_type(paper: Paper, span: Span, options: ClozeOptions, judge: JudgeClassifier | None) -> TypeDecision:
    text = paper.sections[span.section_index].text
    h, rule = heuristic_type(text, span.start, span.end)
    d = TypeDecision(heuristic=h, heuristic_rule=rule, decided_by=options.type_decider)
    src = span.labels.get("scalar_citation_type")
    if src in SCALAR_TYPES:
        d.source = SCALAR_TYPES[src]
    if judge is not None:
        d.judge = judge.classify(text, span.start, span.end, paper_id=paper.paper_id)
        d.judge_model = judge.model
    d.decided = {"heuristic": d.heuristic, "judge": d.judge, "source": d.source}[options.type_decider]
    return d


def generate_for_paper(
    paper: Paper,
    published: date | None,
    sources: dict[int, CandidateSource],
    options: ClozeOptions,
    *,
    seed: int,
    preset: str,
    round_name: str,
    tokenizer: str,
    count_tokens: CountTokens,
    judge: JudgeClassifier | None = None,
    mask: str = MASK,
    additive: bool = False,
) -> PaperResult:
    """Questions of one paper. `sources` maps reference index → its linked stored paper (any that has a link)."""
    res = PaperResult()
    kept = kept_sections(paper)
    chars = sum(len(paper.sections[i].text) for i in kept)
    if not options.min_paper_chars <= chars <= options.max_paper_chars:
        res.skips[f"paper text outside {options.min_paper_chars:,}-{options.max_paper_chars:,} characters"] += 1
        return res
    # --- the reference pool -------------------------------------------------------------------------------------
    with_text = {r for r, s in sources.items() if s.has_text}
    pool: dict[int, CandidateSource] = {}
    for r, src in sorted(sources.items()):
        if options.candidate_field == "abstract":
            if src.abstract.strip():
                pool[r] = src
            else:
                res.skips["reference: linked paper has no abstract"] += 1
            continue
        if not src.has_text:
            res.skips["reference: linked paper has no section text"] += 1
            continue
        if src.count_content(count_tokens, additive=additive) > options.max_candidate_tokens:
            res.skips["reference: candidate over the token cap"] += 1
            continue
        pool[r] = src
    if len(pool) < options.n_candidates:
        res.skips[f"paper: fewer than {options.n_candidates} usable references"] += 1
        return res
    # --- citations ---------------------------------------------------------------------------------------------
    spans = paper_spans(paper, set(kept))
    mark_groups(spans, options.group_gap)
    individual: dict[int, list[Span]] = {}
    for s in spans:
        if s.ref_index is None:
            res.skips["citation: unresolved marker"] += 1
        elif s.grouped:
            res.skips["citation: grouped"] += 1
        elif s.ref_index not in sources:
            res.skips["citation: no linked stored paper"] += 1
        elif s.ref_index not in pool:
            res.skips["citation: linked paper unusable (no text / over cap)"] += 1
        else:
            individual.setdefault(s.ref_index, []).append(s)
    rng = random.Random(f"{seed}:{paper.paper_id}")
    paper_tokens = PaperTokens(paper, kept, count_tokens, additive)
    refs = sorted(pool)
    chosen_refs = rng.sample(refs, min(len(refs), options.refs_per_paper or len(refs)))
    for r in chosen_refs:
        occ = individual.get(r, [])
        if not occ:
            res.skips["reference drawn: no individual citation of it"] += 1
            continue
        for span in rng.sample(occ, min(len(occ), options.questions_per_reference)):
            decision = decide_type(paper, span, options, judge)
            res.types.append(decision)
            if decision.decided is None:
                res.skips[f"citation: no {options.type_decider} type"] += 1
                continue
            if options.citation_type != "any" and decision.decided != options.citation_type:
                res.skips[f"citation: type {decision.decided} (level wants {options.citation_type})"] += 1
                continue
            k = options.n_candidates - 1
            if options.distractors == "nearest":
                near = nearest_refs(span, spans, with_text, k)
                distract = [x for x in near if x in pool]
                if len(distract) < k:
                    res.skips["citation: fewer nearest distractors than needed after the cap"] += 1
                    continue
            else:
                distract = rng.sample([x for x in refs if x != r], k)
            qseed = question_seed(seed, paper.paper_id, r, span.section_index, span.start)
            slot = random.Random(qseed).randrange(options.n_candidates)
            order = list(distract)
            order.insert(slot, r)
            res.items.append(
                make_item(
                    paper,
                    published,
                    kept,
                    span,
                    decision,
                    [pool[x] for x in order],
                    slot,
                    qseed,
                    options,
                    preset=preset,
                    round_name=round_name,
                    tokenizer=tokenizer,
                    count_tokens=count_tokens,
                    additive=additive,
                    mask=mask,
                    paper_tokens=paper_tokens,
                )
            )
    return res


def make_item(
    paper: Paper,
    published: date | None,
    kept: list[int],
    span: Span,
    decision: TypeDecision,
    shown_sources: list[CandidateSource],
    slot: int,
    qseed: int,
    options: ClozeOptions,
    *,
    preset: str,
    round_name: str,
    tokenizer: str,
    count_tokens: CountTokens,
    additive: bool,
    mask: str,
    paper_tokens: PaperTokens,
) -> ClozeItem:
    """The item that masks `span` and shows `shown_sources` in slot order (the gold at `slot`)."""
    shown = [src.shown(options.candidate_field, count_tokens, additive=additive) for src in shown_sources]
    cands = [
        ClozeCandidate(
            slot=i,
            ref_index=src.ref_index,
            ref_id=src.ref_id,
            paper_id=src.paper_id,
            arxiv_id=src.arxiv_id,
            title=src.title,
            text=shown[i][0],
            tokens=shown[i][1],
            link_method=src.link_method,
            published=src.published,
        )
        for i, src in enumerate(shown_sources)
    ]
    gold = shown_sources[slot]
    sec = paper.sections[span.section_index]
    key = paper.arxiv_id or paper.paper_id
    shown_paper = render_paper(paper, kept, span, mask, options.paper_field)
    return ClozeItem(
        sample_id=f"citation_cloze/{preset}/{key}/{gold.ref_index}/{span.section_index}:{span.start}",
        round=round_name,
        preset=preset,
        arxiv_id=paper.arxiv_id,
        paper_id=paper.paper_id,
        published=published,
        title=paper.title,
        section=heading_line(sec),
        citation_text=span.text,
        citation_start=span.start,
        citation_end=span.end,
        citation_type=decision,
        mask=mask,
        paper=shown_paper,
        paper_tokens=paper_tokens.of(shown_paper, span, mask, options.paper_field),
        candidates=cands,
        label=str(slot),
        reference_ids=[c.ref_id for c in cands],
        gold_ref_id=gold.ref_id,
        seed=qseed,
        tokenizer=tokenizer,
        options=options.model_dump(),
    )


def cap_items(items: list[ClozeItem], limit: int | None, seed: int, preset: str) -> list[ClozeItem]:
    """At most `limit` items, a seeded uniform draw (SCALAR samples 100 per level), kept in id order."""
    if limit is None or len(items) <= limit:
        return sorted(items, key=lambda x: x.sample_id)
    rng = random.Random(f"{seed}:{preset}:cap")
    return sorted(rng.sample(items, limit), key=lambda x: x.sample_id)
