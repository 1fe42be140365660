"""`academiceval score-predictions`: score prediction files made elsewhere (L-Eval's format) without a run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, at_least_one, console, err_console, fail, summary_table


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
) -> None:
    """Score L-Eval prediction files (query, gt, *_pred, evaluation) with L-Eval's metric names and units.

    Metrics are percentages: exact_match; f1; rouge/rouge1, rouge/rouge2, rouge/rougeL, rouge/geometric_mean;
    topic retrieval first_{1,2,3}_sentence_retrieval/exact_match and average_1st_2nd_3rd/exact_match. Each
    file's entry also names the protocol, the task id used, and how many answers could not be parsed.
    """
    from academiceval.scores.leval import PROTOCOLS, display_keys, score_file

    if fmt != "leval":
        raise fail(f"unknown --format {fmt!r}; supported: leval")
    if protocol not in PROTOCOLS:
        raise fail(f"unknown --protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    out: dict[str, dict] = {}
    failed = 0
    for name in files:
        try:
            result = score_file(Path(name), task=task, protocol=protocol)  # type: ignore[arg-type]
        except (OSError, ValueError) as e:
            out[name] = {"error": f"{type(e).__name__}: {e}", "protocol": protocol}
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
        err_console.print(f"{failed} of {len(files)} files could not be scored")
        raise typer.Exit(1)


def judge_predictions(
    files: Annotated[list[str], typer.Argument(help="Candidate L-Eval prediction files.")],
    against: Annotated[str, typer.Option(help="The reference run's prediction file (L-Eval: turbo-16k-0613).")],
    judge: Annotated[str, typer.Option(help="Judge model spec, e.g. openai/gpt-4o.")],
    judge_base_url: Annotated[
        str | None, typer.Option(help="Judge server base URL (default $OPENAI_BASE_URL).")
    ] = None,
    protocol: Annotated[
        str, typer.Option(help="Verdict parsing: 'leval-compatible' or 'strict'.")
    ] = "leval-compatible",
    concurrency: Annotated[int, typer.Option(callback=at_least_one, help="Judge requests in flight.")] = 8,
    cache: Annotated[
        Path | None, typer.Option(help="Response cache file (SQLite): a re-run never asks the judge twice.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print ONE JSON object: each FILE → its win rates.")] = False,
) -> None:
    """Judge candidate prediction files against a reference run, both orders, L-Eval style.

    Reports wins/ties/losses, the win rate (wins + ½ ties) / judged, unreadable verdicts and the length-controlled
    win rate."""
    import asyncio

    from academiceval.errors import AcademicEvalError
    from academiceval.models.cache import ResponseCache
    from academiceval.models.generate import Generator
    from academiceval.models.registry import load_backend
    from academiceval.scores import leval_judge as lj

    if protocol not in ("leval-compatible", "strict"):
        raise fail(f"unknown --protocol {protocol!r}")
    try:
        backend = load_backend(judge, base_url=judge_base_url)
    except AcademicEvalError as e:
        raise fail(e) from None

    response_cache = ResponseCache(cache) if cache else None
    caller = Generator(backend, cache=response_cache)  # the one model-call path: cache → retry → backend

    async def run_all() -> dict[str, dict]:
        out: dict[str, dict] = {}
        try:
            for name in files:
                pairs, missing = lj.leval_file_pairs(name, against)
                judgments = await lj.judge_pairs(
                    pairs,
                    lj.asker(caller),
                    protocol=protocol,
                    concurrency=concurrency,  # type: ignore[arg-type]
                )
                summary = lj.summarize(judgments).as_dict()
                out[name] = {**summary, **missing, "against": against, "judge": judge, **lj.config(protocol=protocol)}  # type: ignore[arg-type]
        finally:
            await backend.aclose()
            if response_cache is not None:
                response_cache.close()
        return out

    try:
        out = asyncio.run(run_all())
    except (OSError, ValueError) as e:
        raise fail(f"{type(e).__name__}: {e}") from None
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return

    def pct(v: object) -> str:
        return "-" if v is None else f"{100 * float(v):.2f}"  # type: ignore[arg-type]

    rows = [
        (n, r["judged"], r["wins"], r["ties"], r["losses"], r["errors"], pct(r["win_rate"]), pct(r["lc_win_rate"]))
        for n, r in out.items()
    ]
    cols = ["file", "judged", "W", "T", "L", "unreadable", "win %", "LC win %"]
    console.print(summary_table(f"Pairwise judge vs {against} ({judge}, {protocol})", cols, rows))


def judge_length_control(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run directories scored with `academiceval score --metrics judge`.")
    ],
    home: HomeOption = None,
    aspect: Annotated[str, typer.Option(help="Judge aspect (overall, novelty, ...).")] = "overall",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Win rate and length-controlled win rate of each judge metric of each run (W/T/L and unreadable counted)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.scores.leval_judge import run_length_control

    out: dict[str, dict] = {}
    for d in run_dirs:
        try:
            res = run_length_control(str(d), home=str(home) if home else None, aspect=aspect)
        except (AcademicEvalError, ValueError, OSError) as e:
            raise fail(f"{d}: {e}", code=getattr(e, "exit_code", 2)) from None
        out[str(d)] = {m: r.as_dict() for m, r in res.items()}
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return

    def pct(v: object) -> str:
        return "-" if v is None else f"{100 * float(v):.2f}"  # type: ignore[arg-type]

    rows = [
        (d, m, r["judged"], r["wins"], r["ties"], r["losses"], r["errors"], pct(r["win_rate"]), pct(r["lc_win_rate"]))
        for d, per in out.items()
        for m, r in per.items()
    ]
    cols = ["run", "judge metric", "judged", "W", "T", "L", "unreadable", "win %", "LC win %"]
    console.print(summary_table(f"Judge win rates, length-controlled ({aspect})", cols, rows))
