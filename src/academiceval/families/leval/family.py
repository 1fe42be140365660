"""The L-Eval family as the registry sees it: its task spec and its long-document QA port."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from academiceval.families.leval.items import FAMILY, MAX_NEW_TOKENS
from academiceval.families.leval.round import build_prompt
from academiceval.families.leval.samples import TEXT_FIELDS, sample_to_item
from academiceval.rounds.models import Sample
from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name=FAMILY,
    title="L-Eval",
    prompt_kind="document_qa",
    input_fields=TEXT_FIELDS,
    max_new_tokens=MAX_NEW_TOKENS,
    default_metrics=("leval",),
    length_instruction=True,  # L-Eval's LIE on open-ended items
)


class LEvalFamily(Family):
    def document_prompt(
        self,
        sample: Sample,
        *,
        length_instruction: bool,
        budget_tokens: int | None = None,
        count: Callable[[str], int] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """L-Eval's prompt (system text, document, question or instruction; LIE when asked), its document cut
        to `budget_tokens` L-Eval's way (`items.fit_document`)."""
        prompt, meta = build_prompt(
            sample_to_item(sample), length_instruction=length_instruction, budget_tokens=budget_tokens, count=count
        )
        return prompt, {**meta, "policy": "document-cut-leval"} if budget_tokens is not None else meta


family = LEvalFamily("leval", (SPEC,), command="leval", cli_app="academiceval.families.leval.cli:app")
