"""The ElaipBench family as the registry sees it: its task spec and its multiple-choice port."""

from __future__ import annotations

from academiceval.families.elaip.items import FAMILY, choice_of
from academiceval.families.elaip.samples import TEXT_FIELDS, sample_to_item
from academiceval.rounds.choice import ChoiceItem
from academiceval.rounds.models import Sample
from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name=FAMILY,
    title="ElaipBench",
    prompt_kind="choice",
    input_fields=TEXT_FIELDS,
    max_new_tokens=32,  # ElaipBench's base setting: the letters in their tags
    default_metrics=("accuracy",),
    choice_form="letters",
)


class ElaipFamily(Family):
    def choice_item(self, sample: Sample) -> ChoiceItem:
        item, context = sample_to_item(sample)
        return choice_of(item, context, sample.sample_id)


family = ElaipFamily("elaip", (SPEC,), command="elaip", cli_app="academiceval.families.elaip.cli:app")
