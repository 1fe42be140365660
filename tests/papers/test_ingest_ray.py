"""`ingest --executor ray`: the same stored rows as the local process pool (papers byte for byte, the same errors),
the parent the only writer, resume as before; an unreachable address fails before any work."""

from __future__ import annotations

import hashlib
import shutil
import socket
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")

from academiceval.errors import ConfigError  # noqa: E402
from academiceval.papers.ingest import ingest_paths  # noqa: E402
from academiceval.store import Workspace  # noqa: E402

REAL = ["1503.02531v1.pdf", "2304.02623v1.pdf", "1111.2011v2.pdf"]
BAD = ["html_not_pdf", "empty", "truncated", "encrypted_pdf"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture()
def folder(tmp_path: Path, corpus: Path, pdf_dir: dict[str, Path]) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    for name in REAL:
        shutil.copy(corpus / "pdf" / name, d / name)
    shutil.copy(corpus / "pdf" / REAL[0], d / "same_bytes_other_name.pdf")
    for kind in BAD:
        if kind in pdf_dir:
            shutil.copy(pdf_dir[kind], d / f"bad_{kind}.pdf")
    return d


def _stored(ws: Workspace) -> tuple[dict[str, str], list[tuple[str, str, str, str | None]]]:
    papers = {
        r["paper_id"]: hashlib.sha256(r["json"].encode()).hexdigest()
        for r in ws.db.execute("SELECT paper_id, json FROM parsed_paper")
    }
    errors = sorted((e["sha256"], Path(e["path"]).name, e["code"], e["message"]) for e in ws.ingest_errors())
    return papers, errors


def test_ray_stores_what_the_process_pool_stores(local_ray, folder: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool_ws, ray_ws = Workspace(tmp_path / "pool"), Workspace(tmp_path / "ray")
    a = ingest_paths(pool_ws, [folder], workers=2)
    seen: list[str] = []
    b = ingest_paths(ray_ws, [folder], workers=2, executor="ray", progress=lambda r: seen.append(r.path))
    assert [(r.path, r.status, r.paper_id, r.code, r.message) for r in a.results] == [
        (r.path, r.status, r.paper_id, r.code, r.message) for r in b.results
    ]
    assert sorted(seen) == sorted(r.path for r in b.results)  # progress once per file, as today
    pa, pb = _stored(pool_ws), _stored(ray_ws)
    assert pa == pb  # same content hashes of every stored paper, same errors
    assert len(pa[0]) == len(REAL) and len(pa[1]) >= 2 and len(a.failed) == len(pa[1])
    # resume: a second run on Ray parses only what failed, like the local pool
    again = ingest_paths(ray_ws, [folder], executor="ray")
    assert len(again.skipped) == len(REAL) + 1 and not again.ok
    pool_ws.close()
    ray_ws.close()


def test_unreachable_address_fails_before_any_work(folder: Path, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ws = Workspace(tmp_path / "ws")
    with pytest.raises(ConfigError, match="cannot reach the Ray cluster"):
        ingest_paths(ws, [folder], executor="ray", ray_address=f"127.0.0.1:{port}")
    with pytest.raises(ConfigError, match="invalid Ray address"):
        ingest_paths(ws, [folder], executor="ray", ray_address="not an address")
    assert ws.db.execute("SELECT COUNT(*) FROM parsed_paper").fetchone()[0] == 0 and not ws.ingest_errors()
    ws.close()


def test_cli_reports_an_unreachable_address(folder: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app

    res = CliRunner().invoke(
        app, ["ingest", str(folder), "--executor", "ray", "--address", "127.0.0.1:1", "--home", str(tmp_path / "h")]
    )
    assert res.exit_code == 2 and "cannot reach the Ray cluster at 127.0.0.1:1" in res.output
