"""academiceval rounds as inspect_ai tasks (`pip install academiceval[inspect]`).

    inspect eval academiceval/title -T round=demo --model openai/gpt-4o-mini
    inspect eval academiceval/abstract -T round=demo -T setting=random:1 -T home=academiceval-data

One task per task of the writing family (`title`, `abstract`, `introduction`, `related_work`); the round,
setting, split and workspace home are task parameters (without `-T round=`, the workspace's only round; with
several, the error names them). Prompts are the round's own templates rendered by
`rounds.prompts.render_prompt` (as `academiceval run` does without a context budget), answers are cleaned by
`models.postprocess` as the runner does, and the scorers are our registry's metrics, so an inspect log scores the
same as `academiceval score` on the same outputs. `log_to_run` turns an inspect log back into an academiceval run
directory (then `academiceval score` / `report` work on it).

inspect_ai is imported only by `tasks` and `_registry`, never by this package's `__init__`.
"""
