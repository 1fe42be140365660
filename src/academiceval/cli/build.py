"""`academiceval build --round NAME`: a dated benchmark round from the workspace (thin over rounds.build)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import (
    HomeOption,
    at_least_one,
    console,
    fail,
    fraction,
    not_negative,
    progress,
    summary_table,
)


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a date; use YYYY-MM-DD") from None


def _gate(items: list[str] | None) -> dict[str, str]:
    """`--gate KEY=VALUE` options → the quality-gate overrides of the BuildConfig (checked there)."""
    pairs = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise fail(f"--gate {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value.strip()
    return pairs


def build(
    round_name: Annotated[str, typer.Option("--round", help="Name of the round (its directory under rounds/).")],
    home: HomeOption = None,
    val_from: Annotated[
        str | None, typer.Option("--val-from", help="First v1 date of the validation window (YYYY-MM-DD).")
    ] = None,
    test_from: Annotated[
        str | None, typer.Option("--test-from", help="First v1 date of the test window; test papers are newer.")
    ] = None,
    test_until: Annotated[
        str | None, typer.Option("--test-until", help="Last v1 date of the test window (later papers are left out).")
    ] = None,
    fractions: Annotated[
        str | None,
        typer.Option(
            "--fractions",
            help="train,val,test shares of the date-sorted papers when no dates are given. Default: 0.72,0.19,0.09.",
        ),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="A named set of options, filling those not given: 'academiceval' = AcademicEval's settings (the four "
            "tasks; zero-shot, random:2, coauthor:2, mixed:1+1; a 72/19/9 split; Related Work lists of 100).",
        ),
    ] = None,
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--setting",
            help="Context setting, repeatable: zero-shot, random:K (same-category demos), coauthor:K "
            "(co-authors' papers, closest first), mixed:A+B. Default: zero-shot (or the preset's).",
        ),
    ] = None,
    context_tokens: Annotated[
        int | None,
        typer.Option(
            "--context-tokens",
            callback=at_least_one,
            help="Also build a setting that adds demos until the input reaches N tokens.",
        ),
    ] = None,
    ladder: Annotated[
        str | None,
        typer.Option(
            "--ladder",
            help="Context ladder: the same targets at each budget (tokens, e.g. 8K,16K,32K,64K), demos added up to it.",
        ),
    ] = None,
    citation_list_size: Annotated[
        int | None,
        typer.Option(
            "--citation-list-size",
            callback=not_negative,
            help="Pad each Related-Work citation list with uncited same-category papers to N entries (AcademicEval: "
            "100; default 0: no padding, 100 with --preset academiceval).",
        ),
    ] = None,
    distractors: Annotated[
        int,
        typer.Option(
            "--distractors", callback=not_negative, help="Pad each Related-Work citation corpus with N uncited papers."
        ),
    ] = 0,
    min_citations: Annotated[
        int,
        typer.Option(
            "--min-citations",
            callback=not_negative,
            help="Skip Related-Work targets whose list shows fewer cited works.",
        ),
    ] = 1,
    min_resolved_fraction: Annotated[
        float,
        typer.Option(
            "--min-resolved-fraction",
            callback=fraction,
            help="Skip Related-Work targets with a smaller share of cited works shown with an abstract (default 0: "
            "every target is kept and its share reported).",
        ),
    ] = 0.0,
    gate: Annotated[
        list[str] | None,
        typer.Option(
            "--gate",
            help="Quality-gate setting KEY=VALUE, repeatable: min_body_words, max_body_words, min_sections, "
            "max_sections, max_repeated_heading, require_introduction, min_references, max_intro_share, "
            "label_words.TASK=LOW:HIGH, enabled=false.",
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", help="Restrict to tasks: title, abstract, introduction, related_work. Repeatable."),
    ] = None,
    coauthor_cap: Annotated[
        int,
        typer.Option(
            "--coauthor-cap",
            callback=not_negative,
            help="A paper serves as a co-author demo at most N times per config and split (0: no cap).",
        ),
    ] = 3,
    category_level: Annotated[
        str,
        typer.Option("--category-level", help="Random demos share the 'primary' category or only its 'archive'."),
    ] = "primary",
    seed: Annotated[int, typer.Option("--seed", help="Round seed; every per-sample seed derives from it.")] = 0,
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Directory of .j2 prompt templates overriding the defaults.")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Fetch missing PDFs and citation metadata from 'arxiv' (live) or a mirror directory. "
            "Default: use only the workspace.",
        ),
    ] = None,
    api_url: Annotated[
        str | None, typer.Option("--api-url", help="A server speaking the arXiv protocol (overrides --source).")
    ] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only papers submitted on/after this date.")] = None,
    fetch: Annotated[
        bool,
        typer.Option("--fetch/--no-fetch", help="Fetch and ingest PDFs of papers that have metadata but no parse."),
    ] = True,
    max_fetch: Annotated[
        int | None, typer.Option("--max-fetch", callback=not_negative, help="Fetch and ingest at most N missing PDFs.")
    ] = None,
    previous: Annotated[
        str | None, typer.Option("--previous", help="Earlier round (name or dir): list test samples added/retired.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing round of the same name.")] = False,
) -> None:
    """Build a dated round: chronological split, the four writing tasks, few-shot settings, citation corpora.

    Exports parquet + JSONL per config and split, a manifest with the sha256 of every file, and a dataset card
    that `datasets.load_dataset` reads offline.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.rounds.build import build_round
    from academiceval.rounds.config import BuildConfig
    from academiceval.store import Workspace

    given: dict[str, object] = {}  # options a preset must not override: those given on the command line
    if fractions is not None:
        try:
            given["fractions"] = [float(x) for x in fractions.split(",")]
        except ValueError:
            raise fail(f"--fractions {fractions!r}: give three numbers like 0.72,0.19,0.09") from None
    if setting:
        given["settings"] = setting
    if task:
        given["tasks"] = task
    if citation_list_size is not None:
        given["citation_list_size"] = citation_list_size
    try:
        config = BuildConfig(
            preset=preset,
            val_from=_day(val_from, "--val-from"),
            test_from=_day(test_from, "--test-from"),
            test_until=_day(test_until, "--test-until"),
            **given,
            context_tokens=context_tokens,
            ladder=ladder,
            distractors=distractors,
            min_citations=min_citations,
            category_level=category_level,
            coauthor_cap=coauthor_cap,
            seed=seed,
            templates_dir=templates,
            since=_day(since, "--since"),
            fetch=fetch,
            max_fetch=max_fetch,
            previous=previous,
            min_resolved_fraction=min_resolved_fraction,
            gate=_gate(gate),
        )
    except AcademicEvalError as exc:
        raise fail(exc) from None
    ws = Workspace(home)
    src = None
    if source or api_url:
        from academiceval.sources import open_source

        try:
            src = open_source(source or "arxiv", api_url)
        except AcademicEvalError as exc:
            raise fail(exc) from None
    with progress() as bar:
        tasks_ids: dict[str, int] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks_ids:
                tasks_ids[stage] = bar.add_task(stage, total=total)
            bar.update(tasks_ids[stage], completed=done, total=total)

        try:
            m = build_round(ws, round_name, config, source=src, force=force, progress=report)
        except AcademicEvalError as exc:
            raise fail(exc) from None
    w = m.windows
    if config.preset:
        from academiceval.rounds.config import build_preset

        console.print(f"preset {config.preset}: {build_preset(config.preset).summary}")
    if not m.configs:
        console.print("[yellow]no samples were built[/]: the workspace needs papers with both metadata and a parse")
    rows = [
        (
            name,
            i.task,
            i.setting,
            i.counts.get("train", 0),
            i.counts.get("val", 0),
            i.counts.get("test", 0),
            f"{i.mean_input_tokens:,.0f}",
        )
        for name, i in sorted(m.configs.items())
    ]
    console.print(
        summary_table(f"round {m.round}", ["config", "task", "setting", "train", "val", "test", "input tok"], rows)
    )
    skipped = [(k, r, n) for k, reasons in m.skipped.items() for r, n in reasons.items()]
    if skipped:
        console.print(summary_table("skipped", ["task/setting", "reason", "count"], skipped))
    for warning in m.notes.get("splits") or {}:
        console.print(f"[yellow]{warning}[/]")
    console.print(
        f"windows: train ≤ {w.train_until} · val {w.val_from}…{w.val_until} · test {w.test_from}…{w.test_until}"
    )
    if m.previous_round:
        console.print(f"vs {m.previous_round}: {len(m.adds)} test samples added, {len(m.retires)} retired")
    console.print(f"written to {ws.layout.round_dir(m.round)}")
