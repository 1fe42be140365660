"""`academiceval export ROUND OUT --format lm-eval`: a round as an lm-evaluation-harness task folder (thin wrapper
over `integrations.lmeval.export.export_round`), called by the one `export` verb (`cli/export.py`).

`ROUND_FORMATS` names the formats that export a *round* (this module); the other formats export a *run*
(`export RUN_DIR --format leval`).
"""

from __future__ import annotations

from pathlib import Path

from academiceval.cli.common import console, err_console, fail, summary_table

ROUND_FORMATS = ("lm-eval",)


def export_round(
    round_ref: str,
    out: Path,
    fmt: str,
    *,
    split: str = "test",
    config: list[str] | None = None,
    metrics: list[str] | None = None,
    force: bool = False,
    home: Path | None = None,
) -> None:
    """Write ROUND as lm-evaluation-harness tasks: prompts and output lengths as `academiceval run` sends them,
    answers scored by academiceval's own metrics (lm-eval's numbers = `academiceval score`'s)."""
    from academiceval.errors import AcademicEvalError

    if fmt not in ROUND_FORMATS:
        raise fail(f"unknown --format {fmt!r} for a round; supported: {', '.join(ROUND_FORMATS)}")
    from academiceval.integrations.lmeval.export import export_round as export

    try:
        res = export(round_ref, out, split=split, configs=config, metrics=metrics, force=force, home=home)
    except AcademicEvalError as e:
        raise fail(e) from None
    m = res.manifest
    # the config is the task's alias (lm-eval's table shows it) and the end of its name: not repeated here
    rows = [
        (c.task_name, c.docs, c.max_gen_toks, ", ".join(c.metrics) if not m.labels_withheld else "-") for c in m.configs
    ]
    title = f"round {m.round} ({m.split}) as lm-eval tasks → {res.out}"
    console.print(summary_table(title, ["lm-eval task", "docs", "max tokens", "metrics"], rows))
    checked = sum(c.prompts_checked for c in m.configs)
    unchecked = sum(c.prompts_unchecked for c in m.configs)
    err_console.print(
        f"prompts: {checked} equal to the round's prompt_sha256"
        + (f", {unchecked} without a recorded hash (not compared)" if unchecked else ""),
        soft_wrap=True,
    )
    for name, why in res.skipped_configs.items():
        err_console.print(f"[yellow]skipped[/] {name}: {why}", soft_wrap=True)
    if m.labels_withheld:
        err_console.print(
            f"[yellow]labels withheld:[/] the {m.split} split of this release has no references; the tasks record "
            "answers only (score them later with `academiceval lm-eval import` + `academiceval score --round-dir`)",
            soft_wrap=True,
        )
    console.print(
        f"run it: lm_eval --model local-chat-completions --model_args base_url=URL/v1/chat/completions,model=MODEL "
        f"--include_path {res.out} --tasks {m.tags[0]} --apply_chat_template --log_samples --output_path OUT",
        soft_wrap=True,
    )
