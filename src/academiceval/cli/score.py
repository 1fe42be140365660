"""`academiceval score`: re-score saved runs (ROUGE, BERTScore, LLM judge) without regenerating."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, err_console, fail, progress, summary_table


def per_epoch(spread: object) -> str:
    values = getattr(spread, "per_epoch", None) or []
    return ", ".join("-" if v is None else f"{v:.4f}" for v in values)


def score(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (runs/ROUND/MODEL) to score.")],
    metrics: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: rouge-l, rouge-1, rouge-2, rouge-lsum, bertscore, judge, accuracy, leval, "
            "squad-f1, leval-rouge. Default: rouge-l,bertscore (+ judge with --judge); accuracy for multiple-choice "
            "(citation-cloze, ElaipBench) runs; leval (L-Eval's own per-task metric) for L-Eval runs."
        ),
    ] = None,
    mcq_parser: Annotated[
        str, typer.Option(help="How accuracy reads <answer>: 'strict' (one option) or 'lenient' (see scores.mcq).")
    ] = "strict",
    leval_protocol: Annotated[
        str,
        typer.Option(help="The leval metric's protocol: 'leval-compatible' (L-Eval's numbers) or 'strict'."),
    ] = "leval-compatible",
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge model spec for the judge metric, e.g. openai/gpt-4o-mini.")
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option(help="Base URL of the judge's OpenAI-compatible server (default $OPENAI_BASE_URL).")
    ] = None,
    against: Annotated[
        str,
        typer.Option(help="What the judge compares each output with: 'reference' (the paper's text) or a RUN_DIR."),
    ] = "reference",
    bertscore_model: Annotated[
        str,
        typer.Option(help="BERTScore model: all-MiniLM-L6-v2 (packaged, offline), or a local path / cached name."),
    ] = "all-MiniLM-L6-v2",
    layer: Annotated[int | None, typer.Option(help="BERTScore layer (default: the model's usual layer).")] = None,
    idf: Annotated[bool, typer.Option(help="Weight BERTScore tokens by idf over the run's references.")] = False,
    baseline: Annotated[
        Path | None, typer.Option(help="BERTScore baseline file (LAYER,P,R,F) for rescaling.", exists=True)
    ] = None,
    long_inputs: Annotated[
        str,
        typer.Option(
            help="BERTScore inputs longer than the model window: 'window' (default, nothing cut) or 'truncate'"
            " (bert-score's first 510 tokens; cut tokens recorded per pair)."
        ),
    ] = "window",
    round_dir: Annotated[
        Path | None, typer.Option(help="Round directory with the labels (default: found from run.json).")
    ] = None,
    after: Annotated[
        str | None, typer.Option(help="Summarize only papers first submitted after this date (YYYY-MM-DD).")
    ] = None,
    after_cutoff: Annotated[
        str | None, typer.Option(help="Summarize only papers after this model's knowledge cutoff (see --model-info).")
    ] = None,
    model_info: Annotated[
        Path | None,
        typer.Option(help="Extra YAML of model release/cutoff dates ($ACADEMICEVAL_MODEL_INFO).", exists=True),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Score saved runs and append per-sample scores to RUN_DIR/scores.jsonl (resumable; nothing regenerated)."""
    from rich.markup import escape

    from academiceval.errors import AcademicEvalError
    from academiceval.report.leaderboard import fmt, fmt_spread
    from academiceval.runs.summary import failed_requests
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.scores.windows import resolve_window
    from academiceval.store.artifacts import load_run

    names = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    try:
        window = resolve_window(after, after_cutoff, model_info=model_info)
        config = ScoreConfig(
            metrics=names,
            judge=judge if names is None or "judge" in names else None,
            mcq_parser=mcq_parser,
            leval_protocol=leval_protocol,
            judge_base_url=judge_base_url,
            against=against,
            bertscore_model=bertscore_model,
            layer=layer,
            idf=idf,
            baseline=baseline,
            long_inputs=long_inputs,
            after=window.after,
        )
        with progress() as bar:
            tasks: dict[str, int] = {}

            def report(desc: str, done: int, total: int) -> None:
                if desc not in tasks:
                    tasks[desc] = bar.add_task(desc, total=total)
                bar.update(tasks[desc], completed=done, total=total)

            results = score_runs(run_dirs, config, round_dir=round_dir, home=home, progress=report)
    except AcademicEvalError as e:
        raise fail(e) from None
    rows = []
    for res in results:
        for m in res.summary:
            v = m.main
            if v.mean is None:
                shown = "-"
            elif m.primary == "win_rate":
                shown = f"win {v.mean:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}] ({v.n} judged)"
            else:
                shown = fmt(v, 4)
            rows.append((escape(res.label or res.model), m.metric, m.task, m.setting, m.n, m.errors, shown))
    console.print(
        summary_table(
            f"Scores ({window.describe()}; mean F or win rate, 95% bootstrap CI)",
            ["run", "metric", "task", "setting", "n", "errors", "score"],
            rows,
        )
    )
    # repeated runs (`run --epochs N`): each value's mean ± sd across epochs (ElaipBench's number), one line each
    for res in results:
        for m in res.summary:
            if m.epochs < 2:
                continue
            console.print(
                f"{escape(res.label or res.model)} · {m.metric} · {m.task}/{m.setting}: across {m.epochs} epochs "
                "(mean ± sd of the per-epoch means; the score above averages each sample over its epochs)",
                soft_wrap=True,
            )
            for key, sp in m.by_epoch.items():
                console.print(f"  {key}: {fmt_spread(sp, 4)}  (per epoch {per_epoch(sp)})", soft_wrap=True)
    incomplete = False
    for res in results:
        new = sum(res.written.values())
        err_console.print(
            f"{res.run_dir}: {new} new score records, {sum(res.skipped.values())} already scored, "
            f"{sum(res.errors.values())} with errors"
        )
        failed = failed_requests(load_run(res.run_dir, scores=False).epoch_records.values())
        if failed:  # failed requests are no answers: left out of every mean above, never scored as wrong
            incomplete = True
            n = sum(failed.values())
            what = ", ".join(f"{code} {k}" for code, k in failed.items())
            err_console.print(
                f"[bold red]incomplete:[/] {res.run_dir}: {n} answer{'s' if n != 1 else ''} missing (the request "
                f"failed: {what}); the scores above leave them out. Rerun `academiceval run` with the same options "
                "to ask them again, then score again.",
                soft_wrap=True,
            )
    if incomplete:
        raise typer.Exit(1)
