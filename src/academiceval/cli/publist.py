"""`academiceval import DIR`: a publication list (BibTeX / CSL-JSON) and its PDFs → workspace + co-author graph."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from academiceval.cli.common import HomeOption, console, err_console, fail, progress, summary_table
from academiceval.errors import AcademicEvalError

# common gaps in real lists (talks without a title, PDFs not shipped, extra PDFs): counted in the table, not listed
_COUNTED_ONLY = frozenset({"missing_field", "file_missing", "unlisted_pdf"})
SHOWN_PROBLEMS = 50

ListArg = Annotated[
    Path,
    typer.Argument(
        help="Folder holding a publication list (*.bib or CSL-JSON) and its PDFs (searched recursively), or one "
        "list file.",
        exists=True,
        file_okay=True,
        dir_okay=True,
        resolve_path=True,
    ),
]


OLD_NAME = "import"  # the verb before `import-publist`, kept for one release


def import_list(
    ctx: typer.Context,
    directory: ListArg,
    category: Annotated[
        str | None, typer.Option(help="Category given to the papers (random demos share it). Default: folder name.")
    ] = None,
    parse: Annotated[bool, typer.Option("--parse/--no-parse", help="Parse and check the PDFs.")] = True,
    graph: Annotated[bool, typer.Option("--graph/--no-graph", help="Build the co-author graph tables.")] = True,
    home: HomeOption = None,
) -> None:
    """Import your own papers: every dated entry becomes paper metadata (date precision kept), each entry's PDF
    (file field, DOI or title) is parsed, checked against the entry's title and stored; name variants are merged
    on evidence and the co-author graph is built. Problems are listed with file and entry key; the rest goes on."""
    from academiceval.store.resources import resource_error
    from academiceval.store.workspace import DB_NAME, resolve_home

    if ctx.info_name == OLD_NAME:
        typer.echo(
            f"note: `academiceval {OLD_NAME}` is now `academiceval import-publist` (the old name goes in the "
            "next release)",
            err=True,
        )
    try:
        _import(directory, category, parse, graph, home)
    except AcademicEvalError as e:
        raise fail(e) from None
    except (OSError, sqlite3.Error) as e:  # a full disk, a read-only workspace: one line (issue 26, item 10)
        err = resource_error(
            e,
            resolve_home(home) / DB_NAME,
            rerun="the import is safe to repeat: what is stored already is replaced, never doubled",
        )
        if err is None:
            raise
        raise fail(err) from None


def _import(directory: Path, category: str | None, parse: bool, graph: bool, home: Path | None) -> None:
    from academiceval.graph.names import HYPERAUTHORED, graph_from_list
    from academiceval.sources.publist_import import import_publist
    from academiceval.store.workspace import Workspace

    ws = Workspace(home)
    with progress() as bar:
        task = bar.add_task("reading the list", total=None)

        def tick(stage: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, description=stage)

        report = import_publist(ws, directory, category=category, parse=parse, progress=tick)
    by_how: dict[str, int] = {}
    for a in report.attached:
        by_how[a.how] = by_how.get(a.how, 0) + 1
    rows = [
        ("lists", ", ".join(Path(p).name for p in report.lists)),
        ("entries with a title and date", report.entries),
        ("PDFs in the folder", report.pdfs_found),
        ("PDFs attached", f"{len(report.attached)} ({', '.join(f'{k}: {v}' for k, v in sorted(by_how.items()))})"),
        ("metadata only (no PDF)", len(report.metadata_only)),
        ("name variants merged", sum(len(m.keys) - 1 for m in report.merges)),
    ]
    console.print(summary_table(f"import: {directory}", ["", ""], rows))
    if report.issues:
        by_code: dict[str, list] = {}
        for i in report.issues:
            by_code.setdefault(i.code, []).append(i)
        console.print(
            summary_table(
                f"problems ({len(report.issues)}; the rest was imported)",
                ["problem", "count", "example (file · entry key)"],
                [
                    (
                        code,
                        len(items),
                        f"{Path(items[0].file).name}:{items[0].line or ''} · {items[0].key}: {items[0].message[:90]}",
                    )
                    for code, items in sorted(by_code.items())
                ],
            )
        )
        # the ones to act on, one line each (file:line [key]: what (what to do)); common gaps stay counted above
        to_fix = [i for i in report.issues if i.code not in _COUNTED_ONLY]
        for i in to_fix[:SHOWN_PROBLEMS]:
            err_console.print(f"  {escape(str(i))}", soft_wrap=True, highlight=False)
        if len(to_fix) > SHOWN_PROBLEMS:
            err_console.print(f"  … and {len(to_fix) - SHOWN_PROBLEMS} more of these", highlight=False)
    if report.merges:
        console.print(
            summary_table(
                "name variants merged on evidence",
                ["person", "written as", "shared co-authors (evidence)"],
                [
                    (
                        m.name,
                        " / ".join(m.strings),
                        "; ".join(f"{k}: {', '.join(v[:3])}" for k, v in m.evidence.items())[:110],
                    )
                    for m in report.merges[:12]
                ],
            )
        )
    if report.refused:
        console.print("not merged: " + "; ".join(f"{r.key} ({r.reason})" for r in report.refused[:6]))
    if graph:
        metas = [
            m for m in ws.iter_meta("source='publist'") if m.primary_category == (category or _category(directory))
        ]
        g = graph_from_list(ws, metas)
        hyper = (
            f" ({g.hyperauthored} paper(s) of more than {HYPERAUTHORED} authors join their authors but add no pairs)"
            if g.hyperauthored
            else ""
        )
        console.print(
            f"co-author graph: {g.nodes} people, {g.edges} co-author pairs{hyper}, {g.components} components "
            f"(largest {g.largest_component}); hubs: {', '.join(f'{n} ({d})' for n, d in g.hubs[:3])}; "
            f"refined graph for co-author demos: {g.refined_authors} first authors, {g.refined_edges} edges, "
            f"{g.refined_papers} papers"
        )


def _category(directory: Path) -> str:
    return (directory.parent if directory.is_file() else directory).name
