"""The citation-cloze family as the registry sees it: its task spec and its multiple-choice port."""

from __future__ import annotations

from academiceval.families.cloze.models import TASK
from academiceval.families.cloze.prompt import choice_of
from academiceval.families.cloze.samples import TEXT_FIELDS, sample_to_item
from academiceval.rounds.choice import ChoiceItem
from academiceval.rounds.models import Sample
from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name=TASK,
    title="Citation cloze",
    prompt_kind="choice",
    input_fields=TEXT_FIELDS,
    max_new_tokens=512,
    default_metrics=("accuracy",),
    choice_form="indices",
)


class ClozeFamily(Family):
    def choice_item(self, sample: Sample) -> ChoiceItem:
        return choice_of(sample_to_item(sample))


family = ClozeFamily("cloze", (SPEC,), command="cloze", cli_app="academiceval.families.cloze.cli:app")
