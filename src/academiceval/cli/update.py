"""`academiceval update`: bring the co-author graph up to date (new papers, new co-authors, pruning).

Thin wrapper over `academiceval.graph.update`; every date is an option, never a constant.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from academiceval.cli.collect import ApiUrlOption, MinIntervalOption, SourceOption, open_cli_source, parse_day
from academiceval.cli.common import HomeOption, console, fail, not_negative, progress, summary_table


def update(
    since: Annotated[
        str, typer.Option("--since", help="First day of the update window (YYYY-MM-DD, v1 submission date).")
    ],
    until: Annotated[
        str | None,
        typer.Option("--until", help="Last day of the window (YYYY-MM-DD). Default: today.", show_default=False),
    ] = None,
    new_papers: Annotated[
        int | None,
        typer.Option(
            "--new-papers",
            callback=not_negative,
            help="Also add new co-authors (ranked by their bringer's new papers, breadth-first) until the update "
            "has added this many papers in the window. Without it only existing authors gain papers.",
            show_default=False,
        ),
    ] = None,
    inactive_after: Annotated[
        str | None,
        typer.Option(
            "--inactive-after",
            help="Prune authors with no paper on or after this date (YYYY-MM-DD).",
            show_default=False,
        ),
    ] = None,
    retention_days: Annotated[
        int | None,
        typer.Option(
            "--retention-days",
            callback=not_negative,
            help="Prune papers submitted more than this many days before the end of the window.",
            show_default=False,
        ),
    ] = None,
    source: SourceOption = "arxiv",
    api_url: ApiUrlOption = None,
    min_interval: MinIntervalOption = 3.0,
    home: HomeOption = None,
) -> None:
    """Update the graph with papers submitted in [--since, --until]; cost grows with what is new.

    New papers are found with date-window queries over the graph's categories (pages of 2,000) and matched to
    graph authors locally; per-author queries are spent only on new co-authors. Each update is recorded.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.graph import update as run_update
    from academiceval.store import Workspace

    d_since = parse_day(since, "--since")
    assert d_since is not None
    d_until = parse_day(until, "--until")
    d_inactive = parse_day(inactive_after, "--inactive-after")
    if retention_days is not None and retention_days < 1:
        raise fail("--retention-days must be at least 1")
    ws = Workspace(home)
    src = open_cli_source(source, api_url, min_interval)
    with progress() as bar:
        task = bar.add_task("window query", total=None)

        def tick(step: str, done: int, total: int) -> None:
            if step == "window":
                bar.update(task, completed=done, description="reading the window")
            else:
                bar.update(task, completed=done, total=total, description="new co-authors: papers added")

        try:
            rep = run_update(
                ws,
                src,
                d_since,
                d_until,
                new_papers=new_papers,
                inactive_after=d_inactive,
                retention=timedelta(days=retention_days) if retention_days else None,
                progress=tick,
            )
        except AcademicEvalError as exc:
            raise fail(str(exc)) from None
    ref = rep.refine
    rows: list[tuple[str, object]] = [
        ("update id", rep.id),
        ("window", f"{rep.since} .. {rep.until or 'today'}"),
        ("papers read in the window", rep.window_papers),
        ("new first-author papers of graph authors", len(rep.node_papers)),
        ("new co-author candidates", rep.candidates),
        ("authors added", len(rep.authors_added)),
        ("papers added in the window (total)", rep.papers_added),
        ("edges added", rep.edges_added),
        ("authors pruned", rep.authors_pruned),
        ("papers pruned", rep.papers_pruned),
        ("API calls (window / per author)", f"{rep.window_calls} / {rep.author_calls}"),
    ]
    if ref:
        rows += [
            ("graph authors before → after", f"{rep.graph_before} → {rep.graph_after}"),
            ("graph: authors / edges / papers", f"{ref.authors} / {ref.edges} / {ref.papers}"),
        ]
    console.print(summary_table("update", ["", "value"], rows))
    if ref:
        dropped = max(0, ref.authors_crawled - ref.authors_without_paper - ref.largest_component)
        console.print(f"graph authors: {rep.graph_change()}")
        console.print(
            f"refine: of {ref.authors_crawled} crawled authors, kept the largest of {ref.components} connected "
            f"components ({ref.authors} authors); left out {dropped} in smaller components (no co-authorship path "
            f"to the rest) and {ref.authors_without_paper} without a first-author paper. Demos come from the kept "
            "authors' papers only."
        )
