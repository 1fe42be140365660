"""`academiceval run ROUND --model SPEC`: run a model on a round (thin wrapper over `runs.runner.run_round`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from academiceval.cli.common import (
    HomeOption,
    at_least_one,
    console,
    err_console,
    fail,
    not_negative,
    positive_seconds,
    progress,
    summary_table,
)
from academiceval.errors import AcademicEvalError, ConfigError

DEFAULT_MAX_WAIT_S = 300.0  # = models.retry.DEFAULT_MAX_WAIT_S (not imported here: keeps `--help` instant)


def parse_generation_options(items: list[str]) -> dict[str, Any]:
    """`-T key=value` pairs; values are read as JSON when they parse (0.7, 128, true, null), else as text."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"-T {item!r} is not key=value", hint="e.g. -T temperature=0 -T max_tokens=256")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def run(
    round_ref: Annotated[str, typer.Argument(metavar="ROUND", help="Round name in the workspace, or a round dir.")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="openai/MODEL (an OpenAI-compatible server; a local test server: python -m "
            "academiceval.testing.fake_server), hf/REPO_OR_PATH (local transformers), or a baseline that needs no "
            "model: baseline/lead (the opening of the paper's text), baseline/extractive (the sentences best matching "
            "the task's query, BM25), baseline/demo-copy (the most similar demonstration's label) for the writing "
            "tasks; baseline/cite-copy, "
            "baseline/cite-invent (Related Work citations); baseline/random-choice, baseline/lexical-choice, "
            "baseline/first-choice (multiple choice: citation cloze, ElaipBench); baseline/title-match-choice, "
            "baseline/title-overlap-choice, baseline/bow-choice, baseline/longest-choice, baseline/newest-choice, "
            "baseline/centroid-choice (blind guessers a cloze round must hold at chance); baseline/leval-lead "
            "(L-Eval). "
            "`academiceval models` says what each does.",
        ),
    ],
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task (repeatable).")] = None,
    setting: Annotated[list[str] | None, typer.Option("--setting", help="Only this setting (repeatable).")] = None,
    split: Annotated[
        list[str] | None, typer.Option("--split", help="Splits to run (repeatable; default test).")
    ] = None,
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible server URL, e.g. http://localhost:8000/v1 (default $OPENAI_BASE_URL). Repeat it "
            "for several servers of the same model: least-loaded dispatch, a failing server is taken out for a while.",
        ),
    ] = None,
    endpoints_file: Annotated[
        str | None,
        typer.Option(
            "--endpoints", help="File of server URLs, one a line (# comments), used like repeated --base-url."
        ),
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Environment variable holding the API key (never stored).")
    ] = "OPENAI_API_KEY",
    gen: Annotated[
        list[str] | None,
        typer.Option("-T", help="Generation option key=value (temperature, max_tokens, top_p, seed, ...). Repeatable."),
    ] = None,
    max_connections: Annotated[
        int,
        typer.Option(
            "--max-connections", callback=at_least_one, help="Most requests in flight; shrinks on 429 and grows back."
        ),
    ] = 16,
    timeout: Annotated[
        float, typer.Option("--timeout", callback=positive_seconds, help="Seconds per request before it is retried.")
    ] = 600.0,
    context_length: Annotated[
        int | None,
        typer.Option(
            "--context-length",
            callback=at_least_one,
            help="Model context window in tokens; longer inputs are truncated (or skipped).",
        ),
    ] = None,
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer", help="Tokenizer for budgets: HF name/path, tokenizer.json, or a tiktoken encoding."
        ),
    ] = None,
    on_overflow: Annotated[
        str, typer.Option("--on-overflow", help="truncate: cut demos, then the body tail; skip: drop too-long samples.")
    ] = "truncate",
    count_tokens: Annotated[
        bool, typer.Option("--count-tokens", help="Dry run: report input lengths and what would be cut; send nothing.")
    ] = False,
    rag: Annotated[
        str | None, typer.Option("--rag", help="Retrieval-augmented inputs: bm25, tfidf, dense or dense:MODEL_PATH.")
    ] = None,
    top_k: Annotated[
        int, typer.Option("--top-k", callback=at_least_one, help="Chunks retrieved per sample (with --rag).")
    ] = 12,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", callback=at_least_one, help="Chunk length in tokens (with --rag).")
    ] = 512,
    chunk_overlap: Annotated[
        int, typer.Option("--chunk-overlap", callback=not_negative, help="Chunk overlap in tokens.")
    ] = 64,
    probe: Annotated[
        str | None,
        typer.Option(
            "--probe",
            help="title-only (memorisation check: only the title is shown; not applicable to title samples, which "
            "are recorded as not_applicable) or no-context. Baselines read only what the probe leaves.",
        ),
    ] = None,
    length_instruction: Annotated[
        bool | None,
        typer.Option(
            "--length-instruction/--no-length-instruction",
            help="Tell the model the reference's word count (L-Eval's LIE). Default: each task's protocol — off "
            "for the writing tasks, on for L-Eval's open-ended items.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", callback=at_least_one, help="At most N samples per task and setting.")
    ] = None,
    run_name: Annotated[
        str | None,
        typer.Option(
            "--run-name", help="Directory name under runs/ROUND/ (default: derived from the model and variant)."
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore and do not fill the response cache.")] = False,
    epochs: Annotated[
        int | None,
        typer.Option(
            "--epochs",
            callback=at_least_one,
            help="Independent repeats of every sample (default 1; a preset may set it). Epoch e > 1 sends seed "
            "(-T seed or 0) + e - 1, so each repeat is its own cached request; `score` reports the mean over "
            "samples and the mean ± sd of the per-epoch scores. More epochs later extend the same run.",
        ),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="A peer's run protocol, filling what you do not give: elaipbench (3 epochs, temperature 0.1, 32 "
            "new tokens: ElaipBench's reported mean ± sd) or elaipbench-cot (the same with step-by-step reasoning "
            "in 4,096 new tokens). The preset names the run directory (…+elaipbench).",
        ),
    ] = None,
    max_wait: Annotated[
        float,
        typer.Option(
            "--max-wait",
            help="Most seconds one request may wait for retries (Retry-After, backoff); past it the sample is "
            "recorded as rate_limited and a rerun asks again. Waits over 5 s are shown on the progress line.",
            callback=positive_seconds,
        ),
    ] = DEFAULT_MAX_WAIT_S,
    home: HomeOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summary as JSON (per config: samples, answered, cached, errors; requests, retries, "
            "error codes, the run directory) instead of the table.",
        ),
    ] = False,
) -> None:
    """Run a model on a round: cached, resumable (rerun the same command), records in runs/ROUND/MODEL/.

    A rerun skips samples with an answer or a final error (context length, empty, refused, rejected) and asks
    again for every other error (auth, rate limit, server errors, timeouts, malformed answers). One run at a
    time per run directory: a second one is refused, naming the process that holds it."""
    from academiceval.models.rag import RagConfig
    from academiceval.models.retry import RetryPolicy
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.runs.summary import RunSummary
    from academiceval.store.workspace import resolve_home

    try:
        urls = list(base_url or [])
        if endpoints_file:
            from academiceval.models.endpoints import read_endpoints_file

            urls += read_endpoints_file(endpoints_file)
        config = RunConfig(
            model=model,
            tasks=task or None,
            settings=setting or None,
            splits=split or ["test"],
            options=parse_generation_options(gen or []),
            endpoints=urls or None,
            api_key_env=api_key_env,
            max_connections=max_connections,
            timeout=timeout,
            context_length=context_length,
            tokenizer=tokenizer,
            on_overflow=on_overflow,
            rag=RagConfig.from_spec(rag, top_k=top_k, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
            if rag
            else None,
            probe=probe,
            length_instruction=length_instruction,
            count_tokens_only=count_tokens,
            run_name=run_name,
            use_cache=not no_cache,
            limit=limit,
            preset=preset,
            **({"epochs": epochs} if epochs is not None else {}),
        )
    except (AcademicEvalError, ValueError) as e:
        raise fail(e) from None
    ws = resolve_home(home)
    bar = progress()
    task_id = None

    def on_progress(done: int, total: int) -> None:
        nonlocal task_id
        if task_id is None:
            bar.start()
            task_id = bar.add_task(f"{model}", total=total)
        bar.update(task_id, completed=done, total=total, description=model)

    stages: dict[str, Any] = {}

    def on_stage(what: str, done: int, total: int) -> None:  # a step before the requests (dense embedding pass)
        if what not in stages:
            bar.start()
            stages[what] = bar.add_task(what, total=total)
        bar.update(stages[what], completed=done, total=total)

    def on_notice(line: str) -> None:  # printed above the bars, and to a log or pipe as well
        bar.console.print(escape(line), soft_wrap=True)

    def on_wait(seconds: float, error: BaseException) -> None:  # a long Retry-After is shown, not waited in silence
        if task_id is not None:
            what = getattr(error, "code", type(error).__name__)
            bar.update(task_id, description=f"{model} [yellow](waiting {seconds:.0f} s: {what})[/]")

    try:
        summary: RunSummary = run_round(
            ws,
            round_ref,
            config,
            progress=None if count_tokens else on_progress,
            retry_policy=RetryPolicy(max_wait_s=max_wait, on_wait=on_wait),
            notice=on_notice,
            stage_progress=on_stage,
        )
    except AcademicEvalError as e:
        raise fail(e) from None
    finally:
        if task_id is not None or stages:
            bar.stop()
    if summary.count_tokens_only:
        if as_json:
            typer.echo(json.dumps(summary.token_report, indent=2, default=str))
        else:
            _print_token_report(summary)
        return
    title = f"{summary.model} on {summary.round}"
    if summary.epochs > 1:
        title += f" ({summary.epochs} epochs: counts are sample × epoch)"
    if as_json:
        out = {
            "run_dir": str(summary.run_dir),
            "round": summary.round,
            "model": summary.model,
            "epochs": summary.epochs,
            "configs": [dict(zip(summary.COLUMNS, row, strict=False)) for row in summary.rows()],
            "requests": summary.requests,
            "retries": summary.retries,
            "rate_limited": summary.rate_limited,
            "error_codes": dict(summary.error_codes),
            "endpoints": summary.endpoints,
            "elapsed_s": round(summary.elapsed_s, 3),
            "warnings": summary.warnings,
            "embedding": summary.embedding,
        }
        typer.echo(json.dumps(out, indent=2, default=str))
    else:
        console.print(summary_table(title, summary.COLUMNS, summary.rows()))
    extra = f"requests {summary.requests} (retries {summary.retries}, 429s {summary.rate_limited})"
    # skipped samples (a probe that does not apply, an overflow under --on-overflow skip) are not errors
    not_errors = ("not_applicable", "skipped_overflow")
    errors = [(k, v) for k, v in summary.error_codes.most_common() if k not in not_errors]
    if errors:
        extra += "; errors: " + ", ".join(f"{k} {v}" for k, v in errors)
    skipped = [(k, v) for k, v in summary.error_codes.most_common() if k in not_errors]
    if skipped:
        extra += "; skipped: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in skipped)
    if summary.endpoints:
        extra += "; per endpoint: " + ", ".join(
            f"{url} {st['answered']}/{st['requests']}" + (f" (out {st['taken_out']}x)" if st["taken_out"] else "")
            for url, st in summary.endpoints.items()
        )
    err_console.print(f"{extra}; {summary.elapsed_s:.1f} s; records in {summary.run_dir}")
    for warning in summary.warnings:  # recorded in run.json (`warnings`) as well
        err_console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    incomplete = summary.incomplete()
    if incomplete is not None:  # requests that failed are not answers: the exit status says the run is incomplete
        raise fail(incomplete)


def _print_token_report(summary: Any) -> None:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in summary.token_report:
        groups.setdefault((row["task"], row["setting"]), []).append(row)
    rows = []
    for (task, setting), items in sorted(groups.items()):
        ok = [r for r in items if "error" not in r]
        toks = sorted(r["full_tokens"] for r in ok) or [0]
        rows.append(
            (
                task,
                setting,
                len(items),
                toks[len(toks) // 2],
                toks[-1],
                sum(1 for r in ok if r["tokens_cut"] > 0),
                sum(r["tokens_cut"] for r in ok),
                sum(1 for r in ok if r["skipped"]),
                len(items) - len(ok),
            )
        )
    cols = (
        "task",
        "setting",
        "samples",
        "median full tokens",
        "max full tokens",
        "would cut",
        "tokens cut",
        "would skip",
        "errors",
    )
    console.print(summary_table(f"token counts ({summary.prompt_preparation})", cols, rows))
