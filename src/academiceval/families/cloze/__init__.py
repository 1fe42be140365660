"""Citation cloze (SCALAR) as a task family built live from the paper store.

This module is the family's declaration for the registry (`store.tasks`; kept light: it is imported for every
lookup): task `citation_cloze`, multiple choice with indexed options, scored by accuracy. Entry points:
`build.build_cloze_round` (store → round), `importer.import_scalar` (SCALAR's published questions → round),
`export.load_items` (round → items), `prompt.render_item` / `prompt.fit_item` (item → prompt within a budget),
`prompt.choice_item` (the multiple-choice port), `models.PRESETS` (easy / medium / hard as SCALAR's code sets
them), `cli` (`academiceval cloze build|import`).
"""

from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name="citation_cloze",
    title="Citation cloze",
    prompt_kind="choice",
    input_fields=("paper",),  # + candidate_k and item, written per item (families.cloze.samples)
    max_new_tokens=512,
    default_metrics=("accuracy",),
    choice_form="indices",
)

family = Family(
    "cloze",
    (SPEC,),
    ports={"choice_item": "academiceval.families.cloze.prompt:choice_item"},
    command="cloze",
    cli_app="academiceval.families.cloze.cli:app",
)
