"""How multiple-choice samples appear on the examples page, for every family: what the item is (its caption),
the context around its anchor (the masked sentence of a cloze item) or its question, the options with the gold
ones marked, and, for each run, the option(s) it picked (read as `scores.mcq` reads them)."""

from __future__ import annotations

from academiceval.rounds.choice import ChoiceItem, choice_item
from academiceval.scores.mcq import score_response
from academiceval.store.models import Sample
from academiceval.store.tasks import find_spec

CONTEXT_CHARS = 300


def choice_view(sample: Sample) -> ChoiceItem | None:
    """The multiple-choice view of a sample, or None when its task is not multiple choice."""
    spec = find_spec(sample.task)
    return choice_item(sample) if spec is not None and spec.prompt_kind == "choice" else None


def question_text(item: ChoiceItem) -> str:
    """The item for display: caption, the context around the anchor (else the question), the options (gold ✓)."""
    lines = [item.caption] if item.caption else []
    at = item.context.find(item.anchor) if item.anchor else -1
    if at >= 0:
        ctx = item.context[max(0, at - CONTEXT_CHARS) : at + len(item.anchor) + CONTEXT_CHARS]
        lines.append(f"… {' '.join(ctx.split())} …")
    elif item.question:
        lines.append(item.question)
    lines.append("")
    for o in item.options:
        mark = "✓" if o.key in item.gold else " "
        lines.append(f"{mark} [{o.key}] {o.title}".rstrip())
    return "\n".join(lines)


def pick_text(item: ChoiceItem, output: str) -> str:
    """ "picked [k] <title> ✓/✗", or "unparsed" when the answer has no readable <answer>."""
    got = score_response(item.item_id, output, ",".join(item.gold), n_choices=len(item.options))
    if got.choice is None:
        return "unparsed (no readable <answer>)"
    title = next((o.title for o in item.options if o.key == got.choice), "")
    return " ".join(x for x in (f"picked [{got.choice}]", title, "✓" if got.value == 1.0 else "✗") if x)
