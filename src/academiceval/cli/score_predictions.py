"""`academiceval score-predictions` / `judge-predictions`: prediction files made elsewhere (L-Eval's format)
imported as runs (`families.leval.predictions`) and scored through `score_runs` like any run — thin front doors to
`score` (the `leval` metric; the judge metric against the reference file's run)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, at_least_one, console, err_console, fail, summary_table


@contextmanager
def _workspace(home: Path | None) -> Iterator[tuple[Path, bool]]:
    """The workspace the files are imported into: `--home` (kept: the runs can be reported, compared, re-scored),
    or a temporary one removed afterwards (the commands then leave nothing behind, as before)."""
    if home is not None:
        yield Path(home), True
        return
    with tempfile.TemporaryDirectory(prefix="academiceval-predictions-") as tmp:
        yield Path(tmp), False


def score_predictions(
    files: Annotated[list[str], typer.Argument(help="Prediction files (*.pred.jsonl); the task id is the file stem.")],
    fmt: Annotated[str, typer.Option("--format", help="Input format. Only 'leval' for now.")] = "leval",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print ONE JSON object: each FILE as given → its metrics.")
    ] = False,
    protocol: Annotated[
        str, typer.Option(help="'leval-compatible' (L-Eval's numbers, quirks included) or 'strict'.")
    ] = "leval-compatible",
    task: Annotated[
        str | None, typer.Option(help="Task id for every FILE (default: each file's stem, e.g. 'quality').")
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            envvar="ACADEMICEVAL_HOME",
            help="Workspace to import the files into as runs (runs/pred-…/MODEL, scored there: report/compare "
            "see them). Default: a temporary workspace, removed afterwards.",
        ),
    ] = None,
) -> None:
    """Score L-Eval prediction files (query, gt, *_pred, evaluation) with L-Eval's metric names and units.

    Each file is imported as a run (`families.leval.predictions`) and scored with the `leval` metric like any run; the
    numbers printed are L-Eval's file-level aggregation of that run. Metrics are percentages: exact_match; f1;
    rouge/rouge1, rouge/rouge2, rouge/rougeL, rouge/geometric_mean; topic retrieval
    first_{1,2,3}_sentence_retrieval/exact_match and average_1st_2nd_3rd/exact_match. Each file's entry also names
    the protocol, the task id used, and how many answers could not be parsed.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.families.leval.predictions import import_prediction_file, leval_file_summary, task_known
    from academiceval.families.leval.scoring import PROTOCOLS, display_keys
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs

    if fmt != "leval":
        raise fail(f"unknown --format {fmt!r}; supported: leval")
    if protocol not in PROTOCOLS:
        raise fail(f"unknown --protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    out: dict[str, dict] = {}
    failed = 0
    with _workspace(home) as (ws, _kept):
        config = ScoreConfig(metrics=["leval"], options={"leval": {"protocol": protocol}})
        for name in files:
            try:
                imported = import_prediction_file(name, ws, task=task)
                if imported.run_dir is not None and task_known(imported.task):  # the per-answer records
                    score_runs([imported.run_dir], config, home=ws)
                result = leval_file_summary(imported, protocol)
            except (OSError, ValueError) as e:
                out[name] = {"error": f"{type(e).__name__}: {e}", "protocol": protocol}
                failed += 1
                continue
            except AcademicEvalError as e:
                out[name] = {"error": e.message, "protocol": protocol}
                failed += 1
                continue
            meta = result.summary()
            metrics = meta.pop("metrics")
            out[name] = {**metrics, **meta, "display_keys": display_keys(result)}
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    else:
        rows = []
        for name, entry in out.items():
            if "error" in entry:
                rows.append((name, "-", "-", "-", "error", entry["error"]))
                continue
            for i, key in enumerate(entry["display_keys"]):
                head = (name, entry["task"], entry["scored"], entry["unparsed"]) if i == 0 else ("", "", "", "")
                rows.append((*head, key, f"{entry[key]:.2f}"))
        table = summary_table(
            f"L-Eval scores ({protocol}, percent)", ["file", "task", "n", "unparsed", "metric", "value"], rows
        )
        table.columns[0].overflow = "fold"
        console.print(table)
    if failed:
        first = next(n for n, e in out.items() if "error" in e)
        raise fail(
            f"{failed} of {len(files)} files could not be scored (first: {first}: {out[first]['error']}); "
            "the others are scored above: fix or drop those files and score them again",
            code=1,
        )


def judge_predictions(
    files: Annotated[list[str], typer.Argument(help="Candidate L-Eval prediction files.")],
    against: Annotated[str, typer.Option(help="The reference run's prediction file (L-Eval: turbo-16k-0613).")],
    judge: Annotated[str, typer.Option(help="Judge model spec, e.g. openai/gpt-4o.")],
    judge_base_url: Annotated[
        str | None, typer.Option(help="Judge server base URL (default $OPENAI_BASE_URL).")
    ] = None,
    judge_api_key_env: Annotated[
        str, typer.Option(help="The environment variable holding the judge server's API key.")
    ] = "OPENAI_API_KEY",
    protocol: Annotated[
        str,
        typer.Option(
            help="Kept for compatibility: 'leval-compatible' or 'strict' are both accepted; the verdict is always "
            "read from the judge's own final VERDICT line (a verdict quoted from an answer never counts)."
        ),
    ] = "leval-compatible",
    concurrency: Annotated[int, typer.Option(callback=at_least_one, help="Judge requests in flight.")] = 8,
    cache: Annotated[
        Path | None, typer.Option(help="Response cache file (SQLite): a re-run never asks the judge twice.")
    ] = None,
    judge_template: Annotated[
        str,
        typer.Option(
            help="ours (default) or leval:PATH — L-Eval's own judge prompt and [[A]]/[[B]]/[[C]] rule, read from "
            "L-Eval's Evaluation/llm_eval.py (as `score --judge-template`).",
        ),
    ] = "ours",
    min_judged: Annotated[
        int | None,
        typer.Option(
            callback=at_least_one,
            help="No win rate from fewer readable judgements than this (default 10).",
        ),
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            envvar="ACADEMICEVAL_HOME",
            help="Workspace to import the files into (kept; its response cache is used unless --cache). Default: a "
            "temporary workspace, removed afterwards.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print ONE JSON object: each FILE → its win rates.")] = False,
) -> None:
    """Judge candidate prediction files against a reference run, both orders, L-Eval style.

    The same as importing the files as runs and `academiceval score CAND_RUN --metrics judge --against
    REFERENCE_RUN`: reports wins/ties/losses, unreadable and failed judgements, the win rate (wins + ½ ties) /
    judged and the length-controlled win rate (none from fewer than --min-judged judgements)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.leval.predictions import import_prediction_file
    from academiceval.models.cache import ResponseCache
    from academiceval.scores.config import MIN_JUDGED, ScoreConfig
    from academiceval.scores.judge import TEMPLATE_SHA256
    from academiceval.scores.judge_templates import resolve_template
    from academiceval.scores.rescore import score_runs
    from academiceval.scores.winrate import run_judge_summaries
    from academiceval.store.artifacts import read_run_records

    if protocol not in ("leval-compatible", "strict"):
        raise fail(f"unknown --protocol {protocol!r}")
    min_judged = MIN_JUDGED if min_judged is None else min_judged
    out: dict[str, dict] = {}
    response_cache = ResponseCache(cache) if cache else None
    try:
        template = resolve_template(judge_template)  # refused before any file is imported
        with _workspace(home) as (ws, _kept):
            reference = import_prediction_file(against, ws)
            if reference.run_dir is None:
                raise fail(f"{against}: no predictions to judge against")
            base_ids = set(read_run_records(reference.run_dir))
            config = ScoreConfig(
                metrics=["judge"],
                judge=judge,
                judge_base_url=judge_base_url,
                judge_api_key_env=judge_api_key_env,
                options={
                    "judge": {"against": str(reference.run_dir), "concurrency": concurrency, "template": judge_template}
                },
            )
            for name in files:
                cand = import_prediction_file(name, ws)
                if cand.run_dir is None:
                    out[name] = {"error": "no predictions in the file"}
                    continue
                (res,) = score_runs([cand.run_dir], config, home=ws, cache=response_cache)
                metric = next(iter(res.written))
                summary = run_judge_summaries(cand.run_dir, home=ws, min_judged=min_judged, metric=metric)
                wr = summary.get(metric)
                cand_ids = set(cand.sample_ids)
                out[name] = {
                    **(wr.as_dict() if wr else {}),
                    "only_candidate": len(cand_ids - base_ids),
                    "only_baseline": len(base_ids - cand_ids),
                    "against": against,
                    "judge": judge,
                    "metric": metric,
                    **(
                        template.config()
                        if template is not None
                        else {"template_sha256": TEMPLATE_SHA256, "verdict": "final VERDICT line"}
                    ),
                }
    except AcademicEvalError as e:
        raise fail(e) from None
    except (OSError, ValueError) as e:
        raise fail(f"{type(e).__name__}: {e}") from None
    finally:
        if response_cache is not None:
            response_cache.close()
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    rows = [_row(n, r) for n, r in out.items()]
    cols = ["file", "judged", "W", "T", "L", "unreadable", "failed", "win %", "LC win %"]
    console.print(summary_table(f"Pairwise judge vs {against} ({judge})", cols, rows))
    _notes(out)


def _pct(v: object) -> str:
    return "-" if v is None else f"{100 * float(v):.2f}"


def _row(name: str, r: dict) -> tuple:
    if "judged" not in r:
        return (name, "-", "-", "-", "-", "-", "-", "-", r.get("error", "-"))
    cells = (r["judged"], r["wins"], r["ties"], r["losses"], r["unreadable"], r["failed"])
    return (name, *cells, _pct(r["win_rate"]), _pct(r["lc_win_rate"]))


def _notes(out: dict[str, dict]) -> None:
    for name, r in out.items():
        if r.get("note"):
            err_console.print(f"{name}: {r['note']}")


def judge_length_control(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run directories scored with `academiceval score --metrics judge`.")
    ],
    home: HomeOption = None,
    aspect: Annotated[str, typer.Option(help="Judge aspect (overall, novelty, ...).")] = "overall",
    min_judged: Annotated[
        int | None,
        typer.Option(
            callback=at_least_one,
            help="No win rate from fewer readable judgements than this (default 10).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Win rate and length-controlled win rate of each judge metric of each run (W/T/L, unreadable and failed
    judgements counted; no rate from fewer than --min-judged)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.scores.config import MIN_JUDGED
    from academiceval.scores.winrate import run_judge_summaries

    min_judged = MIN_JUDGED if min_judged is None else min_judged
    out: dict[str, dict] = {}
    for d in run_dirs:
        try:
            res = run_judge_summaries(d, home=home, aspect=aspect, min_judged=min_judged)
        except (AcademicEvalError, ValueError, OSError) as e:
            raise fail(f"{d}: {e}", code=getattr(e, "exit_code", 2)) from None
        out[str(d)] = {m: r.as_dict() for m, r in res.items()}
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    rows = [(d, *_row(m, r)) for d, per in out.items() for m, r in per.items()]
    cols = ["run", "judge metric", "judged", "W", "T", "L", "unreadable", "failed", "win %", "LC win %"]
    console.print(summary_table(f"Judge win rates, length-controlled ({aspect})", cols, rows))
    for per in out.values():
        _notes(per)
