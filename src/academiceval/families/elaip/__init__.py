"""ElaipBench-format multiple-choice questions as a task family: import, retrieval settings, generation.

This module is the family's declaration for the registry (`store.tasks`; kept light): task `elaipbench`
(setting = the retrieval setting), multiple choice with lettered options, 32 new tokens, scored by accuracy.
`items` (rows → items, retrieval settings, the item as core multiple choice), `samples` (an item as a round
`Sample`; the multiple-choice port), `retrieval` (the rag-* settings' retriever), `presets` (ElaipBench's run
protocols), `scoring` (one answer's strict set match), `generate` (ElaipBench-style questions and their filter),
`cli` (`elaip import|run|generate`).
"""

from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name="elaipbench",
    title="ElaipBench",
    prompt_kind="choice",
    input_fields=("question", "context", "question_type", "item"),
    max_new_tokens=32,  # ElaipBench's base setting: the letters in their tags
    default_metrics=("accuracy",),
    choice_form="letters",
)

family = Family(
    "elaip",
    (SPEC,),
    ports={"choice_item": "academiceval.families.elaip.samples:choice_item"},
    command="elaip",
    cli_app="academiceval.families.elaip.cli:app",
    extensions={"run_presets": ("academiceval.families.elaip.presets",)},
)
