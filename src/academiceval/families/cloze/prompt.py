"""Rendering a cloze item into one user message, and fitting it to a token budget.

Template: `templates/citation_cloze.j2` (paper, candidate list, answer in `<answer>…</answer>`) and
`citation_cloze_closing.j2` (the closing instruction, kept separate so truncation can never drop it). A user
directory overrides either file. Imported SCALAR items carry their published prompt and are sent verbatim.

Fitting (`fit_item`): only content is cut, from the end, in this order: the question paper's text after the
masked span, then the paper's text before it (the masked sentence itself is kept), then every candidate's text
evenly. Instructions and the closing line are never cut. SCALAR's own evaluator keeps the first N tokens of
the whole prompt, which on long items removes the last candidates and the closing instruction; a model then
sees an incomplete choice and no reminder of the answer format.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from academiceval.errors import ConfigError
from academiceval.families.cloze.models import ClozeItem
from academiceval.families.cloze.tokens import TokenCounter

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "citation_cloze.j2"
CLOSING = "citation_cloze_closing.j2"
KEEP_AROUND_MASK = 400  # characters either side of the mask that are never cut


@functools.cache
def _env(templates_dir: str | None) -> jinja2.Environment:
    search = [str(TEMPLATES)]
    if templates_dir is not None:
        if not Path(templates_dir).is_dir():
            raise ConfigError(f"templates directory {templates_dir} does not exist")
        search.insert(0, templates_dir)
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(search), undefined=jinja2.StrictUndefined, autoescape=False, auto_reload=False
    )


def template_files(templates_dir: str | Path | None = None) -> dict[str, Path]:
    out = {}
    for name in (TEMPLATE, CLOSING):
        for base in ([Path(templates_dir)] if templates_dir else []) + [TEMPLATES]:
            if (base / name).is_file():
                out[name] = base / name
                break
    return out


def closing_text(templates_dir: str | Path | None = None) -> str:
    env = _env(str(Path(templates_dir).resolve()) if templates_dir else None)
    return env.get_template(CLOSING).render().strip()


def render_item(
    item: ClozeItem,
    *,
    templates_dir: str | Path | None = None,
    paper: str | None = None,
    candidate_texts: list[str] | None = None,
) -> str:
    """The prompt of an item (imported items: their published prompt, unless content is overridden)."""
    if item.prompt and paper is None and candidate_texts is None:
        return item.prompt
    if item.prompt:  # imported: keep the published wording, replace only the content blocks
        return replace_blocks(item.prompt, paper, candidate_texts)
    env = _env(str(Path(templates_dir).resolve()) if templates_dir else None)
    texts = candidate_texts if candidate_texts is not None else [c.text for c in item.candidates]
    cands = [{"slot": c.slot, "text": t} for c, t in zip(item.candidates, texts, strict=True)]
    try:
        return (
            env.get_template(TEMPLATE)
            .render(
                mask=item.mask,
                paper=item.paper if paper is None else paper,
                candidates=cands,
                closing=closing_text(templates_dir),
            )
            .rstrip()
            + "\n"
        )
    except jinja2.TemplateError as exc:
        raise ConfigError(
            f"template {TEMPLATE} failed to render: {exc}", hint="variables: mask, paper, candidates, closing"
        ) from exc


_PAPER_BLOCK = re.compile(r"(<Paper>\n)(.*?)(</Paper>\s*<References>)", re.DOTALL)
_CANDIDATE_BLOCK = re.compile(r"(<Candidate>\s*Candidate \[(\d+)\]:\n?)(.*?)(</Candidate>)", re.DOTALL)


def replace_blocks(prompt: str, paper: str | None, candidate_texts: list[str] | None) -> str:
    """A published prompt with its paper and/or candidate contents replaced (wording and order untouched)."""
    out = prompt
    if paper is not None:
        out = _PAPER_BLOCK.sub(lambda m: m.group(1) + paper + m.group(3), out, count=1)
    if candidate_texts is not None:
        texts = candidate_texts

        def sub(m: re.Match[str]) -> str:
            k = int(m.group(2))
            return m.group(1) + (texts[k] if k < len(texts) else m.group(3)) + m.group(4)

        out = _CANDIDATE_BLOCK.sub(sub, out)
    return out


def render_sample(sample: Any, *, templates_dir: str | Path | None = None) -> str:
    """The prompt of a cloze round sample (`families.cloze.samples`): what `rounds.prompts.render_prompt` returns
    for task citation_cloze."""
    from academiceval.families.cloze.samples import sample_to_item

    return render_item(sample_to_item(sample), templates_dir=templates_dir)


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Fitted:
    prompt: str
    tokens: int
    cut_tokens: int  # tokens removed from content (0 when it fitted)
    paper_cut: bool
    candidates_cut: bool
    over_budget: bool  # even fully cut content did not fit (prompt returned as cut as possible)


def fit_item(item: ClozeItem, budget: int, counter: TokenCounter, *, templates_dir: str | Path | None = None) -> Fitted:
    """The item's prompt within `budget` tokens, cutting only content (see module docstring)."""
    full = render_item(item, templates_dir=templates_dir)
    n_full = counter.count(full)
    if n_full <= budget:
        return Fitted(full, n_full, 0, False, False, False)
    if item.prompt and not _PAPER_BLOCK.search(item.prompt):  # a prompt without blocks: head + closing
        closing = full.rstrip().rsplit("\n", 1)[-1]
        body = full.rstrip()[: len(full.rstrip()) - len(closing)]
        cut = counter.prefix(body, max(0, budget - counter.count(closing) - 1)) + "\n" + closing + "\n"
        n = counter.count(cut)
        return Fitted(cut, n, max(0, n_full - n), True, False, n > budget)
    paper = item.paper
    at = paper.find(item.mask)
    texts = [c.text for c in item.candidates]

    def size(p: str, ts: list[str]) -> int:
        return counter.count(render_item(item, templates_dir=templates_dir, paper=p, candidate_texts=ts))

    # 1) paper text after the mask, 2) before it (keeping a window around the mask)
    keep_from = max(0, at - KEEP_AROUND_MASK) if at >= 0 else 0
    keep_to = at + len(item.mask) + KEEP_AROUND_MASK if at >= 0 else len(paper)
    head, core, tail = paper[:keep_from], paper[keep_from:keep_to], paper[keep_to:]
    over = size(paper, texts) - budget
    paper_cut = cand_cut = False
    if over > 0 and tail:
        tail_tokens = counter.count(tail)
        tail = counter.prefix(tail, max(0, tail_tokens - over - 8))
        paper_cut = True
        over = size(head + core + tail, texts) - budget
    if over > 0 and head:
        head_tokens = counter.count(head)
        head = counter.prefix(head, max(0, head_tokens - over - 8))
        paper_cut = True
        over = size(head + core + tail, texts) - budget
    p = head + core + tail
    rounds = 0
    while over > 0 and rounds < 12:  # 3) candidates evenly, from their ends (steps grow if counts disagree)
        rounds += 1
        per = (over // max(1, len(texts)) + 8) * rounds
        texts = [counter.prefix(t, max(0, counter.count(t) - per)) for t in texts]
        cand_cut = True
        over = size(p, texts) - budget
    final = render_item(item, templates_dir=templates_dir, paper=p, candidate_texts=texts)
    n = counter.count(final)
    return Fitted(final, n, max(0, n_full - n), paper_cut, cand_cut, n > budget)
