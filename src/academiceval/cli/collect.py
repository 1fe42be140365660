"""`academiceval collect`: crawl the co-author graph breadth-first from seed authors, then refine it.

Thin wrapper over `academiceval.graph.collect` / `refine`; heavy imports happen inside the command.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

import typer

from academiceval.cli.common import (
    HomeOption,
    at_least_one,
    console,
    err_console,
    fail,
    not_negative,
    not_negative_seconds,
    progress,
    summary_table,
)

SourceOption = Annotated[
    str,
    typer.Option(
        "--source",
        help="Where metadata comes from: 'arxiv' (the live API, ≥3 s between calls) or a local mirror directory "
        "(arXiv .abs records, listings, Kaggle JSON lines, saved Atom) read in-process.",
    ),
]
ApiUrlOption = Annotated[
    str | None,
    typer.Option(
        "--api-url",
        help="Any server speaking the arXiv query protocol (e.g. `academiceval mirror serve`); overrides --source.",
        show_default=False,
    ),
]
MinIntervalOption = Annotated[
    float,
    typer.Option(
        "--min-interval",
        callback=not_negative_seconds,
        help="Seconds between HTTP API calls (arXiv's terms ask for 3; lower only for your own mirror server).",
    ),
]


def parse_day(value: str | None, option: str) -> date | None:
    """ISO dates only (YYYY-MM-DD): dates are data, so an ambiguous one is refused, not guessed."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a date; use YYYY-MM-DD") from None


def open_cli_source(source: str, api_url: str | None, min_interval: float = 3.0):
    from academiceval.errors import AcademicEvalError
    from academiceval.sources import open_source

    if min_interval < 0:
        raise fail("--min-interval must be 0 or more")
    try:
        return open_source(source, api_url, min_interval=min_interval)
    except AcademicEvalError as exc:
        raise fail(exc) from None


def collect(
    seed_author: Annotated[
        list[str],
        typer.Option("--seed-author", help="Author to start from, as written on papers ('Jane Doe'). Repeatable."),
    ],
    max_authors: Annotated[
        int,
        typer.Option(
            "--max-authors", callback=at_least_one, help="Stop after visiting this many authors (one API query each)."
        ),
    ] = 500,
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k", callback=not_negative, help="Co-authors queued per visited author (most frequent first)."
        ),
    ] = 20,
    papers_per_author: Annotated[
        int, typer.Option("--papers-per-author", callback=at_least_one, help="Most recent papers fetched per author.")
    ] = 100,
    since: Annotated[
        str | None, typer.Option("--since", help="Only papers submitted on or after this date (YYYY-MM-DD).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Only papers submitted on or before this date (YYYY-MM-DD).")
    ] = None,
    source: SourceOption = "arxiv",
    api_url: ApiUrlOption = None,
    min_interval: MinIntervalOption = 3.0,
    refine: Annotated[
        bool, typer.Option("--refine/--no-refine", help="Refine at the end: largest connected component.")
    ] = True,
    max_papers_per_author: Annotated[
        int | None,
        typer.Option(
            "--max-papers-per-author",
            callback=at_least_one,
            help="Popularity control: keep at most this many papers per author (seeded sample).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the popularity-control sampler.")] = 0,
    home: HomeOption = None,
) -> None:
    """Crawl the co-author graph breadth-first from seed authors (resumable: run it again after an interruption).

    Per author, their recent papers are fetched; a paper counts only for its first author; the top-k co-authors
    by frequency are queued. Each author is committed atomically, so the same command resumes exactly.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.graph import collect as run_collect
    from academiceval.store import Workspace

    ws = Workspace(home)
    src = open_cli_source(source, api_url, min_interval)
    d_since, d_until = parse_day(since, "--since"), parse_day(until, "--until")
    with progress() as bar:
        task = bar.add_task("visiting authors", total=max_authors)

        def tick(done: int, cap: int, name: str) -> None:
            bar.update(task, completed=done, description=f"visited {name[:30]}")

        try:
            rep = run_collect(
                ws,
                src,
                seed_author,
                max_authors=max_authors,
                top_k=top_k,
                papers_per_author=papers_per_author,
                since=d_since,
                until=d_until,
                progress=tick,
                refine=refine,
                max_papers_per_author=max_papers_per_author,
                seed=seed,
            )
        except AcademicEvalError as exc:
            raise fail(exc) from None
        # the crawl ends when the queue is empty or the cap is reached: finish the bar either way
        done = bar.tasks[0].completed if bar.tasks else 0
        why = "cap reached" if done >= max_authors else "no more co-authors to visit"
        bar.update(task, total=max(done, 1), completed=max(done, 1), description=f"visited {int(done)} authors ({why})")
    rows: list[tuple[str, object]] = [
        ("authors visited (this run / total)", f"{rep.visited_now} / {rep.visited_total}"),
        ("authors with a first-author paper", rep.nodes),
        ("authors still queued", rep.queued),
        ("authors failed (recorded)", rep.failed),
        ("first-author papers", rep.papers),
        ("co-author edges", rep.edges),
        ("API calls", rep.api_calls),
    ]
    ref = rep.refined
    if ref is not None:
        rows += [
            ("refined: components found", ref.components),
            ("refined: authors kept (largest component)", ref.authors),
            ("refined: edges", ref.edges),
            ("refined: papers", ref.papers),
            ("refined: papers left out by the cap", ref.papers_capped),
        ]
    console.print(summary_table("collect", ["", "value"], rows))
    if rep.stopped_early:
        err_console.print(
            f"[bold yellow]stopped early:[/] {rep.stopped_early}\nEverything so far is saved; run the same command "
            "again to resume."
        )
        raise typer.Exit(1)
