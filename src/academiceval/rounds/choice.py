"""Multiple choice, once for every family: an item's view, its prompt, and fitting it to a token budget.

A family whose tasks have prompt kind "choice" (citation cloze, ElaipBench, …) implements one port,
`ChoicePort.choice_item(sample) -> ChoiceItem`: the sample seen as a context, an optional question, options
(key, title, text), the gold keys, single or multi answer, and an optional *anchor* (the cloze mask) that fitting
keeps in view. Everything else is here or in the layers above, the same for every family: rendering (this
module), baselines (`models.baselines`), answer parsing (`scores.mcq`), the report's examples view
(`report.choice`).

Rendering: one jinja template per task, named by the item (`template`), found first in the round's copied
templates or a `--templates` directory, then in the family's packaged templates (`template_dir`). Variables:
`context`, `question`, `options` (each `key`, `title`, `text`), `anchor`, `multi`, and `closing` — the
`<template>_closing.j2` partial rendered with the same variables, kept apart so that fitting never cuts it. The
template's text is the prompt, verbatim (its final newline included). An item that carries a published prompt
(imported SCALAR questions) is sent verbatim; when it must be cut, its context and option texts, which occur in
it verbatim, are replaced by their cut versions and nothing else changes.

Fitting (`fit_choice`): only content is cut, from the end, in this order: the context after the anchor's window,
the context before it (no anchor: the context from its end), then every option's text evenly. The question,
the instructions, the option keys and the closing are never cut.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

import jinja2
from pydantic import BaseModel, Field

from academiceval.errors import ConfigError
from academiceval.rounds.templating import PromptEnvironment
from academiceval.store.models import Sample
from academiceval.store.tasks import family_for, task_spec

KEEP_AROUND_ANCHOR = 400  # characters either side of the anchor that are never cut
MAX_OPTION_ROUNDS = 12  # rounds of even option cuts (each cuts more when token counts disagree)


class ChoiceOption(BaseModel):
    key: str  # what the model answers for it: "0".."3" or "A".."D"
    title: str = ""  # a short name for display (a reference's title)
    text: str = ""  # its content as the prompt shows it (cut evenly when over budget)
    published: date | None = None  # when the option's work appeared, if known (the blind "newest" guesser)


class ChoiceItem(BaseModel):
    """A multiple-choice sample as core code sees it (built by the family's `choice_item` port)."""

    item_id: str  # the sample id (seeds the random baseline)
    template: str  # template file name, e.g. "citation_cloze.j2"
    template_dir: str  # the family's packaged templates
    context: str = ""  # the long text the question is about (a masked paper, retrieved passages)
    question: str = ""
    options: list[ChoiceOption] = Field(default_factory=list)
    gold: list[str] = Field(default_factory=list)  # keys of the correct options
    multi: bool = False  # several options may be correct
    anchor: str = ""  # a marker in the context fitting keeps in view (the cloze mask)
    prompt: str = ""  # a published prompt, sent verbatim
    caption: str = ""  # one line that says what the item is (report)


class ChoicePort(Protocol):
    """What a family of multiple-choice tasks implements (its port "choice_item")."""

    def __call__(self, sample: Sample) -> ChoiceItem: ...


def choice_item(sample: Sample) -> ChoiceItem:
    """The multiple-choice view of a sample, from its family (ConfigError when its task is not multiple choice)."""
    port: ChoicePort | None = family_for(sample.task).port("choice_item")
    if task_spec(sample.task).prompt_kind != "choice" or port is None:
        raise ConfigError(f"sample {sample.sample_id} is not a multiple-choice item (task {sample.task!r})")
    return port(sample)


@functools.cache
def _env(override: str | None, packaged: str) -> jinja2.Environment:
    search = [packaged]
    if override is not None:
        if not Path(override).is_dir():
            raise ConfigError(f"templates directory {override} does not exist", hint="pass a directory of .j2 files")
        search.insert(0, override)
    return PromptEnvironment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,  # the template's text is the prompt, its final newline included
        auto_reload=False,  # templates are read once per process
    )


def environment(item: ChoiceItem, templates_dir: str | Path | None = None) -> jinja2.Environment:
    return _env(str(Path(templates_dir).resolve()) if templates_dir is not None else None, item.template_dir)


def closing_name(template: str) -> str:
    return f"{template.removesuffix('.j2')}_closing.j2"


def template_files(template: str, packaged: str | Path, templates_dir: str | Path | None = None) -> dict[str, Path]:
    """The files a template and its closing resolve to (the override directory first), to copy into a round."""
    out: dict[str, Path] = {}
    for name in (template, closing_name(template)):
        for base in ([Path(templates_dir)] if templates_dir else []) + [Path(packaged)]:
            if (base / name).is_file():
                out[name] = base / name
                break
    return out


def closing_text(item: ChoiceItem, templates_dir: str | Path | None = None) -> str:
    """The closing instruction an item's prompt ends with (never cut by fitting)."""
    env = environment(item, templates_dir)
    name = closing_name(item.template)
    return env.get_template(name).render(**_variables(item, item.context, [o.text for o in item.options])).strip()


def render_choice(
    item: ChoiceItem,
    *,
    templates_dir: str | Path | None = None,
    context: str | None = None,
    option_texts: Sequence[str] | None = None,
) -> str:
    """The prompt of an item, optionally with its context and/or option texts replaced (cut versions)."""
    if item.prompt:
        return _published(item, context, option_texts)
    env = environment(item, templates_dir)
    texts = list(option_texts) if option_texts is not None else [o.text for o in item.options]
    variables = _variables(item, item.context if context is None else context, texts)
    try:
        closing = closing_name(item.template)
        variables["closing"] = env.get_template(closing).render(**variables).strip() if _has(env, closing) else ""
        return env.get_template(item.template).render(**variables)
    except jinja2.TemplateError as exc:
        raise ConfigError(
            f"template {item.template} failed to render: {exc}",
            hint="variables: context, question, options (key, title, text), anchor, multi, closing",
        ) from exc


def _variables(item: ChoiceItem, context: str, texts: Sequence[str]) -> dict[str, object]:
    options = [{"key": o.key, "title": o.title, "text": t} for o, t in zip(item.options, texts, strict=True)]
    return {
        "context": context,
        "question": item.question,
        "options": options,
        "anchor": item.anchor,
        "multi": item.multi,
        # the names the first citation-cloze templates used: rounds built before carry such templates
        "mask": item.anchor,
        "paper": context,
        "candidates": [{"slot": o["key"], "text": o["text"]} for o in options],
    }


def _has(env: jinja2.Environment, name: str) -> bool:
    try:
        env.get_template(name)
    except jinja2.TemplateNotFound:
        return False
    return True


def _published(item: ChoiceItem, context: str | None, option_texts: Sequence[str] | None) -> str:
    """A published prompt with its context and option texts replaced where they occur (in order)."""
    out, cursor = item.prompt, 0
    if item.context:
        at = out.find(item.context)
        if at >= 0:
            new = item.context if context is None else context
            out = out[:at] + new + out[at + len(item.context) :]
            cursor = at + len(new)
    if option_texts is None:
        return out
    for option, new in zip(item.options, option_texts, strict=True):
        if not option.text:
            continue
        at = out.find(option.text, cursor)
        if at < 0:
            continue
        out = out[:at] + new + out[at + len(option.text) :]
        cursor = at + len(new)
    return out


class TokenCounter(Protocol):
    """What fitting needs from a tokenizer (e.g. `families.cloze.tokens.WordPieceCounter`)."""

    name: str

    def count(self, text: str) -> int: ...

    def prefix(self, text: str, n: int) -> str: ...


@dataclass
class Fitted:
    prompt: str
    tokens: int
    cut_tokens: int  # tokens removed from content (0 when it fitted)
    context_cut: bool
    options_cut: bool
    over_budget: bool  # even fully cut content did not fit (the prompt is returned as cut as it could be)

    @property
    def policy(self) -> str:
        """What a run record says was cut: "context-cut", "options-cut", both joined by "+", or "none"."""
        cuts = [p for p, on in (("context-cut", self.context_cut), ("options-cut", self.options_cut)) if on]
        return "+".join(cuts) or "none"


def fit_choice(
    item: ChoiceItem, budget: int, counter: TokenCounter, *, templates_dir: str | Path | None = None
) -> Fitted:
    """The item's prompt within `budget` tokens, cutting only content (see the module docstring)."""
    full = render_choice(item, templates_dir=templates_dir)
    n_full = counter.count(full)
    if n_full <= budget:
        return Fitted(full, n_full, 0, False, False, False)
    if item.prompt and not (item.context and item.context in item.prompt):
        # a published prompt whose content cannot be located: its head, then its last line (the closing)
        closing = full.rstrip().rsplit("\n", 1)[-1]
        body = full.rstrip()[: len(full.rstrip()) - len(closing)]
        cut = counter.prefix(body, max(0, budget - counter.count(closing) - 1)) + "\n" + closing + "\n"
        n = counter.count(cut)
        return Fitted(cut, n, max(0, n_full - n), True, False, n > budget)
    ctx = item.context
    at = ctx.find(item.anchor) if item.anchor else -1
    texts = [o.text for o in item.options]

    def size(c: str, ts: list[str]) -> int:
        return counter.count(render_choice(item, templates_dir=templates_dir, context=c, option_texts=ts))

    # 1) the context after the anchor's window (no anchor: the whole context is cut from its end), 2) before it
    keep_from = max(0, at - KEEP_AROUND_ANCHOR) if at >= 0 else 0
    keep_to = at + len(item.anchor) + KEEP_AROUND_ANCHOR if at >= 0 else 0
    head, core, tail = ctx[:keep_from], ctx[keep_from:keep_to], ctx[keep_to:]
    over = n_full - budget
    context_cut = options_cut = False
    if over > 0 and tail:
        tail = counter.prefix(tail, max(0, counter.count(tail) - over - 8))
        context_cut = True
        over = size(head + core + tail, texts) - budget
    if over > 0 and head:
        head = counter.prefix(head, max(0, counter.count(head) - over - 8))
        context_cut = True
        over = size(head + core + tail, texts) - budget
    ctx = head + core + tail
    rounds = 0
    while over > 0 and rounds < MAX_OPTION_ROUNDS and any(texts):  # 3) options evenly, from their ends
        rounds += 1
        per = (over // max(1, len(texts)) + 8) * rounds  # steps grow when the counts disagree
        cut = [counter.prefix(t, max(0, counter.count(t) - per)) for t in texts]
        now = size(ctx, cut) - budget
        if now >= over:  # the template does not show the option texts: cutting them gains nothing
            break
        texts, over, options_cut = cut, now, True
    final = render_choice(item, templates_dir=templates_dir, context=ctx, option_texts=texts)
    n = counter.count(final)
    return Fitted(final, n, max(0, n_full - n), context_cut, options_cut, n > budget)
