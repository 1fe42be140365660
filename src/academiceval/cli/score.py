"""`academiceval score`: re-score saved runs (ROUGE, BERTScore, LLM judge) without regenerating."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from academiceval.cli.common import (
    METRIC_SPELLING,
    METRICS_TO_COMPUTE,
    HomeOption,
    at_least_one,
    console,
    err_console,
    fail,
    metric_names,
    positive_seconds,
    progress,
    summary_table,
)


def per_epoch(spread: object) -> str:
    values = getattr(spread, "per_epoch", None) or []
    return ", ".join("-" if v is None else f"{v:.4f}" for v in values)


def score(
    run_dirs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="Runs to score: run directories (or directories holding several), or ROUND/RUN under <home>/runs "
            "as `compare` takes them.",
        ),
    ],
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            *METRICS_TO_COMPUTE,
            help="What to compute, comma-separated or repeated "
            + METRIC_SPELLING
            + ": rouge-l, rouge-1, rouge-2, rouge-lsum, bertscore, judge, citation-precision, "
            "citation-recall, citation-unlisted, reference-coverage, organisation, nugget-coverage, claim-support, "
            "accuracy, leval, squad-f1, leval-rouge (`academiceval metrics` says what each measures). Default: "
            "rouge-l,bertscore (+ judge with --judge); for Related Work runs also the citation metrics and "
            "reference-coverage (+ organisation, nugget-coverage, claim-support with --judge); accuracy for "
            "multiple-choice (citation-cloze, ElaipBench) runs; leval (L-Eval's own per-task metric) for L-Eval runs.",
        ),
    ] = None,
    metric_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--metric-arg",
            help="A metric's option as METRIC.OPTION=VALUE (repeatable), e.g. bertscore.layer=9, judge.against=RUN_DIR,"
            " bertscore.baseline=store (raw and, beside it, rescaled so that 0 = unrelated texts of the task),"
            " accuracy.parser=lenient, leval.protocol=strict, bertscore.long_inputs=truncate. Options per metric:"
            " bertscore (model, layer, idf, baseline, long_inputs, window_stride), judge (against, template),"
            " accuracy (parser),"
            " leval (protocol).",
        ),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge model spec for the judge metric, e.g. openai/gpt-4o-mini.")
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option(help="Base URL of the judge's OpenAI-compatible server (default $OPENAI_BASE_URL).")
    ] = None,
    judge_api_key_env: Annotated[
        str, typer.Option(help="The environment variable holding the judge server's API key.")
    ] = "OPENAI_API_KEY",
    against: Annotated[
        str | None,
        typer.Option(help="judge.against: 'reference' (the paper's text, default) or a RUN_DIR (pairwise)."),
    ] = None,
    judge_template: Annotated[
        str | None,
        typer.Option(
            help="judge.template: 'ours' (default) or leval:PATH — L-Eval's own judge prompt and [[A]]/[[B]]/[[C]] "
            "verdict rule, read from L-Eval's Evaluation/llm_eval.py (long-document QA items; records named …-leval).",
        ),
    ] = None,
    min_judged: Annotated[
        int | None,
        typer.Option(
            callback=at_least_one,
            help="Judge rows show no win rate from fewer readable judgements than this (default 10).",
        ),
    ] = None,
    # the flags of earlier versions, each the same as a --metric-arg (kept working; shown in --help as such)
    mcq_parser: Annotated[str | None, typer.Option(help="= --metric-arg accuracy.parser=…")] = None,
    leval_protocol: Annotated[str | None, typer.Option(help="= --metric-arg leval.protocol=…")] = None,
    bertscore_model: Annotated[
        str | None, typer.Option(help="= --metric-arg bertscore.model=… (all-MiniLM-L6-v2, a local path)")
    ] = None,
    layer: Annotated[int | None, typer.Option(help="= --metric-arg bertscore.layer=…")] = None,
    idf: Annotated[bool | None, typer.Option("--idf", help="= --metric-arg bertscore.idf=true")] = None,
    baseline: Annotated[
        Path | None, typer.Option(help="= --metric-arg bertscore.baseline=FILE (LAYER,P,R,F)", exists=True)
    ] = None,
    long_inputs: Annotated[
        str | None, typer.Option(help="= --metric-arg bertscore.long_inputs=window|truncate")
    ] = None,
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
    wait: Annotated[
        float | None,
        typer.Option(
            callback=positive_seconds,
            help="Another `score` of the same run holds its scores: wait this many seconds for it (default: refuse).",
        ),
    ] = None,
    home: HomeOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summaries as JSON (per run: every metric × task × setting with n, errors and the "
            "estimates; records written/skipped, the labels scored against) instead of the table.",
        ),
    ] = False,
) -> None:
    """Score saved runs and append per-sample scores to RUN_DIR/scores.jsonl (resumable; nothing regenerated)."""
    from rich.markup import escape

    from academiceval.errors import AcademicEvalError
    from academiceval.report.leaderboard import fmt, fmt_spread
    from academiceval.runs.summary import failed_requests
    from academiceval.scores.config import MIN_JUDGED, ScoreConfig, parse_metric_args
    from academiceval.scores.judge_templates import resolve_template
    from academiceval.scores.rescore import score_runs
    from academiceval.scores.windows import resolve_window
    from academiceval.store.artifacts import Layout, load_run
    from academiceval.store.workspace import resolve_home

    names = metric_names(metrics)
    min_judged = MIN_JUDGED if min_judged is None else min_judged
    try:
        window = resolve_window(after, after_cutoff, model_info=model_info)
        resolve_template(judge_template)  # a bad --judge-template is refused before any run is read
        config = ScoreConfig(
            metrics=names,
            judge=judge if names is None or "judge" in names else None,
            judge_base_url=judge_base_url,
            judge_api_key_env=judge_api_key_env,
            after=window.after,
            options=_with_template(parse_metric_args(metric_arg), judge_template),
            # earlier flags, mapped onto their metric's namespace (None: not given)
            mcq_parser=mcq_parser,
            leval_protocol=leval_protocol,
            against=against,
            bertscore_model=bertscore_model,
            layer=layer,
            idf=idf,
            baseline=baseline,
            long_inputs=long_inputs,
        )
        with progress() as bar:
            tasks: dict[str, int] = {}

            def report(desc: str, done: int, total: int) -> None:
                if desc not in tasks:
                    tasks[desc] = bar.add_task(desc, total=total)
                bar.update(tasks[desc], completed=done, total=total)

            layout = Layout.of(resolve_home(home))
            paths = [layout.find_run(r) for r in run_dirs]
            results = score_runs(paths, config, round_dir=round_dir, home=home, progress=report, wait_s=wait or 0.0)
    except AcademicEvalError as e:
        raise fail(e) from None
    if as_json:
        out = [
            {
                "run_dir": str(res.run_dir),
                "model": res.model,
                "label": res.label,
                "written": res.written,
                "skipped": res.skipped,
                "errors": res.errors,
                "scored_against": res.scored_against,
                "notes": res.notes,
                "summary": [m.model_dump(mode="json") for m in res.summary],
            }
            for res in results
        ]
        typer.echo(json.dumps(out, indent=2, default=str))
    rows = []
    for res in results if not as_json else []:
        for m in res.summary:
            v = m.main
            if m.metric.startswith("judge") and (v.mean is None or v.n < min_judged):  # issue 28: too few judged
                shown = f"- ({v.n} judged < {min_judged}; {m.failures} unreadable or failed)"
            elif v.mean is None:
                shown = "-"
            elif m.primary == "win_rate":
                ci = f" [{v.ci_low:.3f}, {v.ci_high:.3f}]" if v.ci_low is not None and v.ci_high is not None else ""
                shown = f"win {v.mean:.3f}{ci} ({v.n} judged, {m.failures} failed)"
            else:
                shown = fmt(v, 4)
                if "f_rescaled" in m.values:  # bertscore.baseline=store: 0 = unrelated texts of the task
                    shown += f" · rescaled {fmt(m.values['f_rescaled'], 4)}"
            rows.append((escape(res.label or res.model), m.metric, m.task, m.setting, m.n, m.errors, shown))
    if not as_json:
        console.print(
            summary_table(
                f"Scores ({window.describe()}; mean F or win rate, 95% bootstrap CI)",
                ["run", "metric", "task", "setting", "n", "errors", "score"],
                rows,
            )
        )
    # repeated runs (`run --epochs N`): each value's mean ± sd across epochs (ElaipBench's number), one line each
    for res in results if not as_json else []:
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
        for against, n in res.scored_against.items():  # the labels used, in every score record too (issue 28.2)
            err_console.print(f"  scored against {escape(against)}: {n} records", soft_wrap=True)
        for note in res.notes:
            err_console.print(f"  [yellow]note:[/] {escape(note)}", soft_wrap=True)
        if any(m.startswith("judge") for m in res.written):
            _judge_lines(res.run_dir, home, min_judged)
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


def _with_template(options: dict[str, dict[str, Any]], template: str | None) -> dict[str, dict[str, Any]]:
    """`--judge-template X` = `--metric-arg judge.template=X`."""
    if template is not None:
        options.setdefault("judge", {})["template"] = template
    return options


def _judge_lines(run_dir: Path, home: Path | None, min_judged: int) -> None:
    """Per judge metric of the run: W/T/L, unreadable and failed judgements, and the rate (or why there is none)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.scores.winrate import run_judge_summaries

    try:
        summaries = run_judge_summaries(run_dir, home=home, min_judged=min_judged)
    except AcademicEvalError as e:  # e.g. the round is only reachable through --round-dir
        err_console.print(f"  (no judge summary: {e.message})")
        return
    for metric, w in summaries.items():
        rate = w.note or f"win rate {100 * w.win_rate:.2f} %, length-controlled {w.shown(w.lc_win_rate)} %"
        err_console.print(
            f"  {metric}: {w.judged} judged (W {w.wins} / T {w.ties} / L {w.losses}), {w.unreadable} unreadable, "
            f"{w.failed} failed; {rate}"
        )
