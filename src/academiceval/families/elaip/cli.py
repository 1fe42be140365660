"""`academiceval elaip import|run|generate`: ElaipBench-format questions as a round (run/score/report like any
round), an ElaipBench-protocol run of the rows, and ElaipBench-*style* questions generated from a stored paper."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
        from academiceval.runs.elaip import retrieval_for

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
    model: Annotated[str, typer.Option(help="Model spec (openai/NAME, hf/PATH).")],
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL.")] = None,
    setting: Annotated[str, typer.Option(help="full | rag-bm25 | rag-dense | evidence.")] = "full",
    runs: Annotated[int, typer.Option(callback=at_least_one, help="Independent runs to average (ElaipBench: 3).")] = 3,
    cot: Annotated[bool, typer.Option(help="Ask for step-by-step reasoning (4096 tokens).")] = False,
    top_k: Annotated[int, typer.Option(callback=at_least_one, help="Passages kept by retrieval settings.")] = 5,
    parser: Annotated[str, typer.Option(help="Answer parser: strict (tags only) or lenient.")] = "strict",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Strict set-match accuracy overall and for SA/MA, averaged over runs, unparsed answers counted."""
    import asyncio
    import json
    import sys

    from academiceval.errors import AcademicEvalError
    from academiceval.families.elaip.items import PROMPT_SHA256, read_file
    from academiceval.models.generate import Generator
    from academiceval.models.registry import load_backend
    from academiceval.runs.elaip import run_items
    from academiceval.scores.elaip import score_answer, summarize_runs

    items, rejects = read_file(rows)
    if not items:
        raise fail(f"no usable rows in {rows} ({len(rejects)} rejected)")
    try:
        backend = load_backend(model, base_url=base_url)
    except AcademicEvalError as e:
        raise fail(e) from None

    async def go() -> list[list[dict]]:
        try:
            return await run_items(items, Generator(backend), setting=setting, runs=runs, cot=cot, top_k=top_k)
        finally:
            await backend.aclose()

    try:
        responses = asyncio.run(go())
    except ValueError as e:
        raise fail(e) from None
    by_id = {i.sample_id: i for i in items}
    scored = [[score_answer(by_id[r["sample_id"]], r["response"], parser=parser) for r in run] for run in responses]  # type: ignore[arg-type]
    summary = {
        **summarize_runs(scored),
        "rejected_rows": rejects,
        "setting": setting,
        "cot": cot,
        "parser": parser,
        "prompt_sha256": PROMPT_SHA256,
        "model": model,
        "note": "ElaipBench data, academiceval protocol (ElaipBench's prompt and parser are unpublished)",
    }
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    table_rows = []
    for key in ("all", "SA-MCQ", "MA-MCQ"):
        s = summary[key]
        mean = "-" if s["mean_accuracy"] is None else f"{s['mean_accuracy']:.2f} ± {s['sd_accuracy']:.2f}"
        table_rows.append((key, s["n_per_run"], runs, mean, s["unparsed_total"]))
    console.print(
        summary_table(
            f"ElaipBench strict accuracy ({model}, {setting}{', CoT' if cot else ''})",
            ["questions", "n", "runs", "accuracy % (mean ± sd)", "unparsed"],
            table_rows,
        )
    )
    if rejects:
        err_console.print(f"{len(rejects)} rows rejected (see --json)")


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
    from academiceval.models.generate import Generator
    from academiceval.models.registry import load_backend
    from academiceval.scores.elaip import generate_and_filter
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
    for r in out["records"]:  # type: ignore[union-attr]
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    console.print(
        summary_table(
            f"ElaipBench-style questions for {paper} → {review}", ["status", "questions"], sorted(statuses.items())
        )
    )
