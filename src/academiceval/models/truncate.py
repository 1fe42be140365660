"""Fitting a prompt into a token budget by cutting paper content only, re-rendering after every cut.

Order (the project's policy, DESIGN "Truncation is explicit"): retrieved chunks from the lowest rank, then
demonstrations (whole ones from the end, then the body of the last one kept), then the tail of the target body,
then whole citation entries from the end of the (shuffled) citation list. The instruction, title, abstract and
the citation list header are never touched: they live in the template or in protected fields. Every cut
re-renders the full prompt and re-counts it, like HELMET cuts only its context field and re-renders, so the
count is exact for the final text rather than an estimate from the pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from academiceval.models.tokenize import Tokenizer
from academiceval.store.models import CitedPaper, Demo

# Fields that are required inputs of a task and therefore never cut.
PROTECTED_FIELDS = frozenset({"title", "abstract", "instruction", "question"})
# Preferred names of the cuttable paper-content field, in order.
CONTENT_FIELDS = ("body", "content", "main_content", "text", "paper")
# A shortened demonstration keeps at least this many content tokens, else it is dropped whole.
MIN_DEMO_TOKENS = 32


@dataclass(frozen=True)
class Parts:
    """The variable inputs of one rendering."""

    fields: dict[str, str]
    demos: list[Demo] = field(default_factory=list)
    citations: list[CitedPaper] = field(default_factory=list)
    retrieved: list[str] | None = None


@dataclass
class FitResult:
    prompt: str
    parts: Parts
    input_tokens: int
    full_tokens: int  # tokens of the untruncated rendering
    steps: list[str] = field(default_factory=list)
    fits: bool = True
    demos_dropped: int = 0
    citations_dropped: int = 0
    chunks_dropped: int = 0

    @property
    def tokens_cut(self) -> int:
        return max(0, self.full_tokens - self.input_tokens)

    @property
    def policy(self) -> str:
        return "+".join(self.steps) if self.steps else "none"


def content_field(fields: dict[str, str]) -> str | None:
    """The paper-content field that may be cut: a known name, else the longest unprotected field."""
    for name in CONTENT_FIELDS:
        if name in fields:
            return name
    free = [k for k in fields if k not in PROTECTED_FIELDS]
    return max(free, key=lambda k: len(fields[k])) if free else None


def shrink_text(
    text: str,
    make_prompt: Callable[[str], str],
    tok: Tokenizer,
    budget: int,
    *,
    min_keep: int = 0,
    count_prompt: Callable[[str], int] | None = None,
) -> tuple[str, str, int] | None:
    """Longest token-prefix of `text` whose re-rendered prompt fits; returns (kept text, prompt, tokens).

    Starts from the exact excess and re-counts after each cut (token boundaries at the joins can shift a
    count by one or two); None if even `min_keep` tokens do not fit.
    """
    count = count_prompt or tok.count_prompt
    ends = tok.token_ends(text)
    total = count(make_prompt(text))
    keep = len(ends) - (total - budget)
    while keep > min_keep:
        cut = text[: ends[keep - 1]].rstrip() if keep < len(ends) else text
        prompt = make_prompt(cut)
        total = count(prompt)
        if total <= budget:
            return cut, prompt, total
        keep -= max(1, total - budget)
    return None


class Fitter:
    """Applies the cutting order to one sample's parts (render: Parts -> prompt text)."""

    def __init__(self, render: Callable[[Parts], str], tok: Tokenizer, budget: int) -> None:
        self.render = render
        self.tok = tok
        self.budget = budget
        self._counts: dict[str, int] = {}  # the search revisits renderings; long prompts are costly to count

    def count(self, prompt: str) -> int:
        if prompt not in self._counts:
            self._counts[prompt] = self.tok.count_prompt(prompt)
        return self._counts[prompt]

    def measure(self, parts: Parts) -> tuple[str, int]:
        prompt = self.render(parts)
        return prompt, self.count(prompt)

    def fit(self, parts: Parts) -> FitResult:
        prompt, tokens = self.measure(parts)
        result = FitResult(prompt=prompt, parts=parts, input_tokens=tokens, full_tokens=tokens)
        for step in (self._cut_chunks, self._cut_demos, self._cut_body, self._cut_citations):
            if result.input_tokens <= self.budget:
                return result
            step(result)
        result.fits = result.input_tokens <= self.budget
        return result

    # -- steps -------------------------------------------------------------------------------------------------

    def _largest_fitting(self, n: int, build: Callable[[int], Parts]) -> tuple[int, str, int]:
        """Binary search for the largest k in [0, n) with build(k) fitting (length grows with k)."""
        lo, hi = 0, n - 1
        best: tuple[int, str, int] | None = None
        while lo <= hi:
            mid = (lo + hi) // 2
            prompt, tokens = self.measure(build(mid))
            if tokens <= self.budget:
                best, lo = (mid, prompt, tokens), mid + 1
            else:
                hi = mid - 1
        if best is None:
            prompt, tokens = self.measure(build(0))
            best = (0, prompt, tokens)
        return best

    def _apply(self, r: FitResult, parts: Parts, prompt: str, tokens: int, step: str) -> None:
        r.parts, r.prompt, r.input_tokens = parts, prompt, tokens
        if step not in r.steps:
            r.steps.append(step)

    def _cut_chunks(self, r: FitResult) -> None:
        chunks = r.parts.retrieved
        if not chunks:
            return
        k, prompt, tokens = self._largest_fitting(len(chunks), lambda k: replace(r.parts, retrieved=chunks[:k]))
        r.chunks_dropped = len(chunks) - k
        self._apply(r, replace(r.parts, retrieved=chunks[:k]), prompt, tokens, "chunks-dropped")

    def _cut_demos(self, r: FitResult) -> None:
        demos = r.parts.demos
        if not demos:
            return
        k, prompt, tokens = self._largest_fitting(len(demos), lambda k: replace(r.parts, demos=demos[:k]))
        kept = replace(r.parts, demos=demos[:k])
        if tokens <= self.budget:
            # Room is left: give it to the next demonstration, shortened, rather than wasting it.
            shortened = self._shorten_demo(kept, demos[k])
            if shortened is not None:
                parts, prompt, tokens = shortened
                r.demos_dropped = len(demos) - k - 1
                if r.demos_dropped:
                    self._apply(r, parts, prompt, tokens, "demos-dropped")
                self._apply(r, parts, prompt, tokens, "demo-shortened")
                return
        r.demos_dropped = len(demos) - k
        self._apply(r, kept, prompt, tokens, "demos-dropped")

    def _shorten_demo(self, kept: Parts, demo: Demo) -> tuple[Parts, str, int] | None:
        name = content_field(demo.fields)
        if name is None or not demo.fields[name]:
            return None

        def with_text(text: str) -> Parts:
            cut = demo.model_copy(update={"fields": {**demo.fields, name: text}})
            return replace(kept, demos=[*kept.demos, cut])

        found = shrink_text(
            demo.fields[name],
            lambda t: self.render(with_text(t)),
            self.tok,
            self.budget,
            min_keep=MIN_DEMO_TOKENS,
            count_prompt=self.count,
        )
        if found is None:
            return None
        text, prompt, tokens = found
        return with_text(text), prompt, tokens

    def _cut_body(self, r: FitResult) -> None:
        name = content_field(r.parts.fields)
        if name is None or not r.parts.fields[name]:
            return
        fields = r.parts.fields

        def with_text(text: str) -> Parts:
            return replace(r.parts, fields={**fields, name: text})

        found = shrink_text(
            fields[name], lambda t: self.render(with_text(t)), self.tok, self.budget, count_prompt=self.count
        )
        if found is None:  # even an empty body is too long: cut it all and let citations go next
            empty = with_text("")
            prompt, tokens = self.measure(empty)
            self._apply(r, empty, prompt, tokens, "body-tail-cut")
            return
        text, prompt, tokens = found
        self._apply(r, with_text(text), prompt, tokens, "body-tail-cut")

    def _cut_citations(self, r: FitResult) -> None:
        cites = r.parts.citations
        if not cites:
            return
        k, prompt, tokens = self._largest_fitting(len(cites), lambda k: replace(r.parts, citations=cites[:k]))
        r.citations_dropped = len(cites) - k
        self._apply(r, replace(r.parts, citations=cites[:k]), prompt, tokens, "citations-dropped")
