"""A cloze item as the core multiple-choice view (`rounds.choice`), and its prompt within a token budget.

Template: `templates/citation_cloze.j2` (paper, candidate list, answer in `<answer>…</answer>`) and its closing
`citation_cloze_closing.j2` (kept separate so truncation can never drop it); a user directory overrides either
file. Imported SCALAR items carry their published prompt and are sent verbatim.

Fitting is the core's (`rounds.choice.fit_choice`) with the mask as the anchor: only content is cut, from the
end — the question paper's text after the masked span, then the text before it (the masked sentence itself is
kept), then every candidate's text evenly. Instructions and the closing line are never cut. SCALAR's own
evaluator keeps the first N tokens of the whole prompt, which on long items removes the last candidates and the
closing instruction; a model then sees an incomplete choice and no reminder of the answer format.
"""

from __future__ import annotations

from pathlib import Path

from academiceval.families.cloze.models import ClozeItem
from academiceval.families.cloze.samples import sample_to_item
from academiceval.families.cloze.tokens import TokenCounter
from academiceval.rounds import choice
from academiceval.rounds.choice import ChoiceItem, ChoiceOption, Fitted
from academiceval.store.models import Sample

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "citation_cloze.j2"


def choice_of(item: ClozeItem) -> ChoiceItem:
    """The item as core multiple choice: the masked paper is the context, the mask its anchor, the candidates
    (key = slot) the options."""
    return ChoiceItem(
        item_id=item.sample_id,
        template=TEMPLATE,
        template_dir=str(TEMPLATES),
        context=item.paper,
        options=[
            ChoiceOption(key=str(c.slot), title=c.title or c.ref_id, text=c.text, published=c.published)
            for c in item.candidates
        ],
        gold=[item.label],
        anchor=item.mask,
        prompt=item.prompt,
        caption=f"{item.preset} · section {item.section} · masked: {item.citation_text}",
    )


def choice_item(sample: Sample) -> ChoiceItem:
    """The family's multiple-choice port (`rounds.choice.ChoicePort`): a round sample as core multiple choice."""
    return choice_of(sample_to_item(sample))


def template_files(templates_dir: str | Path | None = None) -> dict[str, Path]:
    return choice.template_files(TEMPLATE, TEMPLATES, templates_dir)


def closing_text(templates_dir: str | Path | None = None) -> str:
    blank = ChoiceItem(item_id="", template=TEMPLATE, template_dir=str(TEMPLATES))
    return choice.closing_text(blank, templates_dir)


def render_item(
    item: ClozeItem,
    *,
    templates_dir: str | Path | None = None,
    paper: str | None = None,
    candidate_texts: list[str] | None = None,
) -> str:
    """The prompt of an item (imported items: their published prompt, unless content is overridden)."""
    return choice.render_choice(
        choice_of(item), templates_dir=templates_dir, context=paper, option_texts=candidate_texts
    )


def fit_item(item: ClozeItem, budget: int, counter: TokenCounter, *, templates_dir: str | Path | None = None) -> Fitted:
    """The item's prompt within `budget` tokens, cutting only content (see the module docstring)."""
    return choice.fit_choice(choice_of(item), budget, counter, templates_dir=templates_dir)
