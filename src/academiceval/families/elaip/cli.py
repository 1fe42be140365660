"""`academiceval elaip import|run|generate`: ElaipBench-format questions as a round (run/score/report like any
round), an ElaipBench-protocol run of the rows, and ElaipBench-*style* questions generated from a stored paper."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from academiceval.cli.common import HomeOption, at_least_one, console, err_console, fail, summary_table

app = typer.Typer(help="ElaipBench-format questions: run/score them, or generate ElaipBench-style ones.")


@app.command("import")
def elaip_import(
    rows: Annotated[Path, typer.Argument(help="ElaipBench rows (elabench.jsonl or a JSON list).")],
    round_name: Annotated[str, typer.Option("--round", help="Round name: written to <home>/rounds/NAME.")],
    setting: Annotated[
        str, typer.Option(help="What the model reads: full | rag-bm25 | rag-dense | evidence.")
    ] = "full",
    top_k: Annotated[int, typer.Option(callback=at_least_one, help="Passages kept by retrieval settings.")] = 5,
    home: HomeOption = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the round if it exists (a round, nothing else).")
    ] = False,
) -> None:
    """ElaipBench rows as a round of Samples (one config, `elaipbench-<setting>`): run it with `academiceval run`,
    score with `academiceval score` (strict set-match accuracy, per SA/MA too), show it with `academiceval report`.
    Retrieval settings choose the passages now, so every run of the round reads the same text."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.elaip.items import SETTINGS, context_for, read_file
    from academiceval.families.elaip.samples import write_round
    from academiceval.store.artifacts import Layout
    from academiceval.store.publisher import check_destination
    from academiceval.store.workspace import resolve_home

    if not rows.is_file():
        raise fail(f"{rows} is not a file")
    if setting not in SETTINGS:
        raise fail(f"unknown setting {setting!r}; one of {', '.join(SETTINGS)}")
    root = resolve_home(home)
    try:
        out = Layout.of(root).round_dir(round_name)
        check_destination(out, force=force, home=root, protect=[rows])  # refused before reading
        items, rejects = read_file(rows)
    except AcademicEvalError as e:
        raise fail(e) from None
    except (OSError, ValueError) as e:  # unreadable or malformed JSON
        raise fail(f"{rows}: {type(e).__name__}: {e}") from None
    if not items:
        raise fail(f"no usable rows in {rows} ({len(rejects)} rejected)")
    retriever = count = None
    if setting.startswith("rag-"):
        from academiceval.families.elaip.retrieval import retrieval_for

        retriever, count = retrieval_for(setting)
    try:
        write_round(
            items,
            out,
            setting=setting,
            context=lambda it: context_for(it, setting, top_k=top_k, retriever=retriever, count=count),
            source=str(rows),
            rejects=rejects,
            force=force,
            home=root,
            protect=[rows],
        )
    except AcademicEvalError as e:
        raise fail(e) from None
    by_type = [(t, sum(1 for i in items if i.question_type == t)) for t in ("SA-MCQ", "MA-MCQ")]
    console.print(summary_table(f"ElaipBench round {out} ({setting})", ["questions", "items"], by_type))
    if rejects:
        err_console.print(
            f"{len(rejects)} rows rejected: " + "; ".join(f"row {r['row']}: {r['reason']}" for r in rejects[:5])
        )


@app.command("run")
def elaip_run(
    rows: Annotated[Path, typer.Argument(help="ElaipBench rows (elabench.jsonl or a JSON list).", exists=True)],
    model: Annotated[str, typer.Option(help="Model spec (openai/NAME, hf/PATH, baseline/NAME).")],
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL.")] = None,
    setting: Annotated[str, typer.Option(help="full | rag-bm25 | rag-dense | evidence.")] = "full",
    runs: Annotated[int, typer.Option(callback=at_least_one, help="Independent runs to average (ElaipBench: 3).")] = 3,
    cot: Annotated[bool, typer.Option(help="Ask for step-by-step reasoning (4096 tokens).")] = False,
    top_k: Annotated[int, typer.Option(callback=at_least_one, help="Passages kept by retrieval settings.")] = 5,
    parser: Annotated[str, typer.Option(help="Answer parser: strict (tags only) or lenient.")] = "strict",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    home: HomeOption = None,
) -> None:
    """Alias (kept for one release) of `elaip import` + `run --preset elaipbench[-cot] --epochs RUNS` + `score`:
    strict set-match accuracy overall and per SA/MA, mean ± sd across runs; cached and resumable in the workspace.
    Failed requests are reported and end with exit 1; they are never scored as wrong answers."""
    import hashlib
    import json
    import sys

    from academiceval.errors import AcademicEvalError
    from academiceval.families.elaip.items import PROMPT_SHA256, SETTINGS, context_for, read_file
    from academiceval.families.elaip.retrieval import retrieval_for
    from academiceval.families.elaip.samples import write_round
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.runs.summary import failed_requests
    from academiceval.scores.aggregate import epoch_spread, latest
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import Layout, load_run, read_scores
    from academiceval.store.workspace import resolve_home

    if setting not in SETTINGS:
        raise fail(f"unknown setting {setting!r}; one of {', '.join(SETTINGS)}")
    try:
        items, rejects = read_file(rows)
    except (OSError, ValueError) as e:
        raise fail(f"{rows}: {type(e).__name__}: {e}") from None
    if not items:
        raise fail(f"no usable rows in {rows} ({len(rejects)} rejected)")
    # the round is named by the rows' content and the setting, so the same command finds its round, its run and
    # its cached answers again (a rerun asks nothing that was answered)
    name = f"elaip-{hashlib.sha256(rows.read_bytes()).hexdigest()[:12]}-{setting}"
    name += f"-k{top_k}" if setting.startswith("rag-") else ""
    try:
        layout = Layout.of(resolve_home(home))
        round_dir = layout.round_dir(name)
        if name not in layout.known_rounds():
            retriever, count = retrieval_for(setting) if setting.startswith("rag-") else (None, None)
            write_round(
                items,
                round_dir,
                setting=setting,
                context=lambda it: context_for(it, setting, top_k=top_k, retriever=retriever, count=count),
                source=str(rows),
                rejects=rejects,
            )
        config = RunConfig(
            model=model, base_url=base_url, preset="elaipbench-cot" if cot else "elaipbench", epochs=runs
        )
        summary = run_round(layout.home, round_dir, config)
        scored = score_runs([summary.run_dir], ScoreConfig(metrics=["accuracy"], mcq_parser=parser), home=layout.home)
    except AcademicEvalError as e:
        raise fail(e) from None
    chash = next((m.config_hash for m in scored[0].summary if m.metric == "accuracy"), None)
    records = [r for r in latest(read_scores(summary.run_dir)) if r.metric == "accuracy" and r.config_hash == chash]
    answered = [r for r in records if r.error is None and r.values]
    epochs = list(range(1, runs + 1))
    groups: dict[str, dict[str, Any]] = {}
    for key, value in (("all", "accuracy"), ("SA-MCQ", "accuracy:SA-MCQ"), ("MA-MCQ", "accuracy:MA-MCQ")):
        mine = [r for r in answered if value in r.values]
        spread = epoch_spread(mine, value, epochs)  # the numbers `score` and the report give for the run
        groups[key] = {
            "mean_accuracy": None if spread.mean is None else 100 * spread.mean,
            "sd_accuracy": None if spread.sd is None else 100 * spread.sd,
            "n_per_run": max(spread.n_per_epoch, default=0),
            "per_run": [None if m is None else 100 * m for m in spread.per_epoch],
            "unparsed_total": int(sum(r.values.get("unparsed", 0.0) for r in mine)),
        }
    failed = failed_requests(load_run(summary.run_dir, scores=False).epoch_records.values())
    out: dict[str, Any] = {"metric": "strict-set-accuracy", "runs": runs, **groups}
    out.update(
        failed_requests=failed,
        rejected_rows=rejects,
        setting=setting,
        cot=cot,
        parser=parser,
        prompt_sha256=PROMPT_SHA256,
        model=model,
        round=name,
        run_dir=str(summary.run_dir),
        note="ElaipBench data, academiceval protocol (ElaipBench's prompt and parser are unpublished); "
        "`elaip run` = `run --preset elaipbench` + `score`",
    )
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        table_rows = []
        for key, g in groups.items():
            mean = "-" if g["mean_accuracy"] is None else f"{g['mean_accuracy']:.2f} ± {g['sd_accuracy']:.2f}"
            table_rows.append((key, g["n_per_run"], runs, mean, g["unparsed_total"]))
        console.print(
            summary_table(
                f"ElaipBench strict accuracy ({model}, {setting}{', CoT' if cot else ''})",
                ["questions", "n", "runs", "accuracy % (mean ± sd)", "unparsed"],
                table_rows,
            )
        )
        if rejects:
            err_console.print(f"{len(rejects)} rows rejected (see --json)")
        err_console.print(f"records in {summary.run_dir}")
    if (incomplete := summary.incomplete()) is not None or failed:
        raise fail(incomplete or f"{sum(failed.values())} answers missing in {summary.run_dir}: rerun to ask again")


@app.command("generate")
def elaip_generate(
    paper: Annotated[str, typer.Argument(help="A stored paper: its paper_id or arXiv id.")],
    generator: Annotated[str, typer.Option(help="Generator model spec.")],
    reference: Annotated[list[str], typer.Option(help="Reference model spec(s) for the adversarial filter.")],
    review: Annotated[Path, typer.Option(help="JSONL file the questions are appended to, for human review.")],
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL for all models.")] = None,
    n: Annotated[int, typer.Option(callback=at_least_one, help="Questions to ask the generator for.")] = 3,
    setting: Annotated[str, typer.Option(help="What the reference models see: full | evidence | rag-bm25.")] = "full",
    home: Annotated[Path | None, typer.Option("--home", envvar="ACADEMICEVAL_HOME", help="Workspace.")] = None,
) -> None:
    """ElaipBench-STYLE questions about one stored paper (labelled as not ElaipBench): verbatim evidence per
    option checked, questions any reference model answers correctly dropped, everything written for review."""
    import asyncio

    from academiceval.errors import AcademicEvalError
    from academiceval.families.elaip.generate import generate_and_filter
    from academiceval.models.generate import Generator
    from academiceval.models.registry import load_backend
    from academiceval.store import Workspace

    ws = Workspace(home)
    try:
        stored = ws.get_paper(paper) or ws.get_paper_by_arxiv(paper)
    finally:
        ws.close()
    if stored is None:
        raise fail(f"no stored paper {paper!r}; ingest it first")
    text = "\n\n".join(x for x in (stored.title, stored.abstract, stored.body()) if x)
    try:
        gen = load_backend(generator, base_url=base_url)
        refs = {spec: load_backend(spec, base_url=base_url) for spec in reference}
    except AcademicEvalError as e:
        raise fail(e) from None

    async def go() -> dict:
        try:
            return await generate_and_filter(
                stored.arxiv_id or stored.paper_id,
                text,
                Generator(gen),
                {k: Generator(v) for k, v in refs.items()},
                n=n,
                setting=setting,
                review_file=str(review),
            )
        finally:
            for b in (gen, *refs.values()):
                await b.aclose()

    out = asyncio.run(go())
    statuses: dict[str, int] = {}
    for r in out["records"]:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    console.print(
        summary_table(
            f"ElaipBench-style questions for {paper} → {review}", ["status", "questions"], sorted(statuses.items())
        )
    )
