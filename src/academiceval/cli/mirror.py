"""`academiceval mirror`: index a local arXiv bulk mirror into the workspace, or serve it over HTTP."""

from __future__ import annotations

import errno
import signal
import sqlite3
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import (
    HomeOption,
    at_least_one,
    console,
    err_console,
    fail,
    not_negative_seconds,
    port_number,
    positive_seconds,
    progress,
    summary_table,
)

app = typer.Typer(
    help="Local arXiv bulk mirror: index it into the workspace, or serve it over HTTP like the arXiv API.",
    no_args_is_help=True,
)

DirArg = Annotated[
    Path,
    typer.Argument(
        help="Directory holding arXiv data: Kaggle snapshot JSON lines, .abs records, listings, saved Atom "
        "responses, SCALAR metadata, unarXive JSONL, PDFs named by arXiv id (searched recursively); or one such file.",
        exists=True,
        file_okay=True,
        dir_okay=True,
        resolve_path=True,
    ),
]


@app.command("index")
def index(
    directory: DirArg,
    home: HomeOption = None,
    index_only: Annotated[
        bool,
        typer.Option(
            "--index-only",
            help="Only bring the on-disk index (HOME/mirror-index) up to date; do not copy every record into the "
            "workspace tables (for the full Kaggle snapshot: collect/update query the index instead).",
        ),
    ] = False,
) -> None:
    """Read every arXiv record under DIRECTORY into the workspace (metadata, pre-parsed unarXive papers, PDF
    locations). Unreadable records are recorded with their reason and the rest goes on; running it again is safe.
    The mirror is read once, into an on-disk index in the workspace: a grown snapshot adds only its new lines, a
    killed run resumes; `mirror serve --home`, and collect/update with ACADEMICEVAL_MIRROR_INDEX_DIR=HOME/mirror-index,
    query it."""
    from academiceval.errors import AcademicEvalError
    from academiceval.sources.mirror.disk import open_index
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store.workspace import Workspace

    ws = Workspace(home)
    try:
        with progress() as bar:
            task = bar.add_task("indexing mirror", total=None)

            def tick(name: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, description=f"indexing {name[:40]}")

            disk = open_index(directory, index_dir=ws.home / "mirror-index", progress=tick)
            if index_only:
                n, bad = len(disk), len(disk.errors)
                console.print(f"on-disk index {disk.db_path}: {n:,} papers, {bad} unreadable records")
                return
            report = index_mirror(ws, directory, index=disk)
    except AcademicEvalError as e:  # the mirror index's own errors name its file (disk_errors.py)
        raise fail(e) from e
    except (sqlite3.OperationalError, OSError) as e:  # the workspace side: one line, never a traceback
        if not _disk_full(e):
            raise
        raise fail(
            f"the disk is full: the workspace database {ws.db_path} could not be written ({e}); free space "
            "and run the same command again (it resumes: records already stored are merged, not doubled)",
            1,
        ) from e
    cols = ["format", "files", "records read", "papers stored (record kept)", "unreadable"]
    console.print(summary_table(f"mirror index: {report.root}", cols, report.rows()))
    console.print(
        f"papers stored: {report.papers_stored} · pre-parsed papers: {report.parsed_papers_stored} · "
        f"PDFs found: {report.pdfs_found} · files skipped (not arXiv data): {report.skipped_files}"
    )
    if report.errors:
        title = f"unreadable records by reason ({len(report.errors)}; all in table mirror_error)"
        console.print(summary_table(title, ["reason", "count", "example"], report.reasons()[:15]))
    if report.notes:  # repairs (bad bytes, NULs) and approximations, each located in table mirror_error
        where, what = report.notes[0]
        console.print(f"notes: {len(report.notes)} (all in table mirror_error), e.g. {where}: {what}", soft_wrap=True)


@app.command("serve")
def serve(
    directory: DirArg,
    port: Annotated[
        int, typer.Option("--port", "-p", callback=port_number, help="Port on 127.0.0.1 (0 = any free port).")
    ] = 8088,
    fault: Annotated[
        str | None,
        typer.Option(
            "--fault",
            help="Inject faults, e.g. '429=0.1,500=0.05,truncate=0.02,empty=0.02,html=0.01,slow=0.01,"
            "retry_after=1,slow_seconds=2,seed=7'. Also per request with ?_fault=KIND or POST /_faults (JSON).",
        ),
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="Serve from the workspace's on-disk index of DIRECTORY (built if missing)."),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", callback=at_least_one, help="Threads answering requests.")] = 8,
    max_connections: Annotated[
        int,
        typer.Option(
            "--max-connections", callback=at_least_one, help="Connections held at once; more get 503 + Retry-After."
        ),
    ] = 1024,
    request_timeout: Annotated[
        float,
        typer.Option("--request-timeout", callback=positive_seconds, help="Seconds one query may run (then 503)."),
    ] = 30.0,
    idle_timeout: Annotated[
        float,
        typer.Option("--idle-timeout", callback=positive_seconds, help="Seconds a connection may sit idle."),
    ] = 10.0,
) -> None:
    """Answer the arXiv API protocol over DIRECTORY on 127.0.0.1: /api/query (search_query, id_list, start,
    max_results, sortBy, sortOrder), /oai2 (OAI-PMH, metadataPrefix=arXiv), /pdf/<id>, /_stats (request
    counters), /_faults. Stop with Ctrl-C or SIGTERM."""
    from academiceval.sources.server import FaultConfig, ServeLimits, make_server

    try:
        faults = FaultConfig.parse(fault)
        limits = ServeLimits(workers, max(max_connections, workers), idle_timeout, request_timeout)
    except ValueError as e:
        raise fail(e) from e
    err_console.print(f"loading {directory} …")
    index_dir = None
    if home is not None:
        from academiceval.store.workspace import resolve_home

        index_dir = resolve_home(home) / "mirror-index"
    from academiceval.errors import AcademicEvalError
    from academiceval.sources.mirror.disk import open_index

    try:
        index = open_index(directory, index_dir=index_dir)
    except AcademicEvalError as e:
        raise fail(e) from e
    server = make_server(directory, port, faults, index=index, limits=limits)
    host, real_port = server.server_address[:2]
    console.print(f"serving {len(server.index)} papers at http://{host}:{real_port}/api/query (Ctrl-C to stop)")

    def _stop(signum: int, frame: object) -> None:  # SIGTERM (kill, a supervisor, a test) stops it like Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        console.print(f"served: {server.stats_json()}")


@app.command("harvest")
def harvest(
    directory: DirArg,
    since: Annotated[str, typer.Option("--from", help="First datestamp (YYYY-MM-DD) to harvest.")],
    until: Annotated[str | None, typer.Option("--until", help="Last datestamp (default: up to now).")] = None,
    set_: Annotated[str | None, typer.Option("--set", help="OAI set, e.g. physics:astro-ph, cs, math.")] = None,
    url: Annotated[str, typer.Option("--url", help="OAI-PMH endpoint.")] = "https://export.arxiv.org/oai2",
    min_interval: Annotated[
        float, typer.Option("--min-interval", callback=not_negative_seconds, help="Seconds between requests.")
    ] = 3.0,
    home: HomeOption = None,
) -> None:
    """Bring the on-disk index of DIRECTORY up to date by OAI-PMH (arXiv's bulk interface): every record stamped
    since --from, merged with the mirror's records (a monthly update without re-downloading the snapshot)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.sources.mirror.disk import open_index
    from academiceval.sources.oai import OaiHarvester, harvest_into
    from academiceval.store.workspace import Workspace

    ws = Workspace(home)
    try:
        disk = open_index(directory, index_dir=ws.home / "mirror-index")
        before = len(disk)
        with OaiHarvester(url, min_interval=min_interval) as h:
            n, seconds = harvest_into(disk, h, since, until, set_)
    except AcademicEvalError as e:
        raise fail(e) from e
    console.print(
        f"harvested {n:,} records in {seconds:.1f} s ({h.stats.requests} requests, {h.stats.retries} retried, "
        f"{h.stats.restarts} restarts, {len(h.stats.errors)} unreadable); index {disk.db_path}: "
        f"{before:,} → {len(disk):,} papers"
    )


def _disk_full(e: BaseException) -> bool:
    if isinstance(e, OSError):
        return e.errno == errno.ENOSPC
    return ((getattr(e, "sqlite_errorcode", None) or 0) & 0xFF) == sqlite3.SQLITE_FULL or "disk is full" in str(e)
