"""L-Eval (long-document QA) as a task family: its task files as a round, its prompts and truncation.

This module is the family's declaration for the registry (`store.tasks`; kept light): task `leval` (setting =
L-Eval's task id), prompt kind document_qa, 512 new tokens, LIE on by default, scored by the `leval` metric.
`items` (task files → items, prompts, LIE, L-Eval's truncation), `round` (items ↔ a round; the document port),
`samples` (an item as a round `Sample`), `scoring` (L-Eval's numbers for prediction rows), `metrics` (the `leval`
metric), `export` (a run as L-Eval prediction files), `predictions` (prediction files imported as a run),
`agreement` (prediction files as metric rows), `cli` (`leval import|run`).
"""

from academiceval.store.tasks import Family, TaskSpec

SPEC = TaskSpec(
    name="leval",
    title="L-Eval",
    prompt_kind="document_qa",
    input_fields=("document", "instruction", "item"),
    max_new_tokens=512,  # L-Eval generates 512 new tokens for every task
    default_metrics=("leval",),
    length_instruction=True,  # L-Eval's LIE on its open-ended items
)

family = Family(
    "leval",
    (SPEC,),
    ports={"document_prompt": "academiceval.families.leval.round:document_prompt"},
    command="leval",
    cli_app="academiceval.families.leval.cli:app",
    extensions={
        "metrics": ("academiceval.families.leval.metrics",),
        "export_formats": ("academiceval.families.leval.export",),
    },
)
