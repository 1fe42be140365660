"""How multiple-choice (citation cloze) samples appear on the examples page: the masked sentence, the four
candidates with the gold one marked, and, for each run, the option it picked."""

from __future__ import annotations

from typing import Any

from academiceval.families.cloze.samples import is_cloze_sample, sample_to_item
from academiceval.scores.mcq import parse_answer

CONTEXT_CHARS = 300


def is_choice(sample: Any) -> bool:
    return is_cloze_sample(sample)


def question_text(sample: Any) -> str:
    """The masked passage and the candidate list (gold marked) of a cloze sample, for display."""
    item = sample_to_item(sample)
    at = item.paper.find(item.mask)
    ctx = item.paper[max(0, at - CONTEXT_CHARS) : at + len(item.mask) + CONTEXT_CHARS] if at >= 0 else ""
    ctx = " ".join(ctx.split())
    lines = [f"{item.preset} · section {item.section} · masked: {item.citation_text}", f"… {ctx} …", ""]
    for c in item.candidates:
        mark = "✓" if str(c.slot) == item.label else " "
        lines.append(f"{mark} [{c.slot}] {c.title or c.ref_id}")
    return "\n".join(lines)


def pick_text(sample: Any, output: str) -> str:
    """ "picked [k] <title> ✓/✗", or "unparsed" when the answer has no readable <answer>."""
    item = sample_to_item(sample)
    p = parse_answer(output, n_choices=len(item.candidates))
    if p.choice is None:
        return "unparsed (no readable <answer>)"
    title = next((c.title for c in item.candidates if str(c.slot) == p.choice), "")
    return f"picked [{p.choice}] {title} {'✓' if p.choice == item.label else '✗'}"
