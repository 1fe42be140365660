"""`academiceval leval import|run`: L-Eval's task files as a round, run with any backend into L-Eval prediction
files (then `academiceval score-predictions --format leval` / `judge-predictions`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, at_least_one, console, err_console, fail, summary_table

app = typer.Typer(help="L-Eval tasks: import them as a round, run a model on it.", no_args_is_help=True)


@app.command("import")
def import_(
    data_dir: Annotated[Path, typer.Argument(help="L-Eval's LEval-data directory (or one of its subfolders).")],
    round_name: Annotated[
        str | None, typer.Option("--round", help="Round name: written to <home>/rounds/NAME.")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Round directory to write instead of <home>/rounds/NAME.")] = None,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids (default: every file).")] = None,
    home: HomeOption = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the round if it exists (a round, nothing else).")
    ] = False,
) -> None:
    """One item per (instruction, reference) pair; evaluation tag kept; task id = file stem (an unknown id is
    refused). The round holds ordinary Samples: `academiceval run/score/report` and `leval run` all read it."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.leval.items import read_task_dir
    from academiceval.families.leval.round import write_round
    from academiceval.families.leval.samples import check_task
    from academiceval.store.artifacts import Layout
    from academiceval.store.publisher import check_destination
    from academiceval.store.workspace import resolve_home

    if not data_dir.is_dir():
        raise fail(f"{data_dir} is not a directory")
    root = resolve_home(home)
    wanted = [t.strip() for t in tasks.split(",")] if tasks else None
    try:
        if out is None:
            if not round_name:
                raise fail("give --round NAME (or --out DIR)")
            out = Layout.of(root).round_dir(round_name)
        check_destination(out, force=force, home=root, protect=[data_dir])  # refused before reading
        for t in wanted or []:
            check_task(t)
        items = read_task_dir(data_dir, round_name=out.name, tasks=wanted)
        if not items:
            raise fail(f"no L-Eval task files found under {data_dir}")
        write_round(items, out, source=str(data_dir), force=force, home=root, protect=[data_dir])
    except AcademicEvalError as e:
        raise fail(e) from None
    except (OSError, ValueError) as e:  # an unreadable or malformed task file
        raise fail(f"{type(e).__name__}: {e}") from None
    counts: dict[str, int] = {}
    for it in items:
        counts[it.task] = counts.get(it.task, 0) + 1
    console.print(summary_table(f"L-Eval round {out}", ["task", "items"], sorted(counts.items())))


@app.command("run")
def run(
    round_dir: Annotated[Path, typer.Argument(help="A round written by `academiceval leval import`.")],
    model: Annotated[str, typer.Option(help="Model spec (openai/NAME, hf/PATH, or baseline/leval-lead).")],
    out: Annotated[Path, typer.Option(help="Directory for <task>.pred.jsonl files.")],
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL.")] = None,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids (default: all).")] = None,
    length_instruction: Annotated[
        bool, typer.Option(help="Add L-Eval's length instruction to open-ended items (LIE).")
    ] = True,
    budget_tokens: Annotated[
        int | None,
        typer.Option(
            callback=at_least_one,
            help="Fit prompts to this many tokens of the model's tokenizer (run --context-length N+512); only the "
            "document is cut, L-Eval's way.",
        ),
    ] = None,
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer for --budget-tokens (as `run --tokenizer`).")] = None,
    concurrency: Annotated[int, typer.Option(callback=at_least_one, help="Requests in flight.")] = 4,
    home: HomeOption = None,
) -> None:
    """Alias (kept for one release) of `academiceval run ROUND` + `academiceval export RUN_DIR --format leval`:
    temperature 0, 512 new tokens, cached and resumable in the workspace (--home); the files in --out are replaced,
    as before. Failed requests are reported (exit 1), never written as empty predictions."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.leval.items import MAX_NEW_TOKENS
    from academiceval.runs.config import RunConfig
    from academiceval.runs.export import export_run
    from academiceval.runs.runner import run_round
    from academiceval.store.workspace import resolve_home

    try:
        config = RunConfig(
            model=model,
            base_url=base_url,
            tasks=["leval"],
            settings=[t.strip() for t in tasks.split(",")] if tasks else None,
            splits=None,
            length_instruction=length_instruction,
            context_length=budget_tokens + MAX_NEW_TOKENS if budget_tokens else None,
            tokenizer=tokenizer,
            max_connections=concurrency,
        )
        summary = run_round(resolve_home(home), round_dir, config)
        if (incomplete := summary.incomplete()) is not None:
            raise incomplete
        written = export_run(summary.run_dir, "leval", out, force=True, round_dir=round_dir)
    except AcademicEvalError as e:
        raise fail(e) from None
    err_console.print(f"records in {summary.run_dir} (`leval run` = `run` + `export --format leval`)")
    for name, path in sorted(written.files.items()):
        err_console.print(f"{name.removesuffix('.pred.jsonl')}: {path}")
