"""Fixtures for the rounds tests: a workspace holding the real unarXive sample (49 papers, Nov–Dec 2022)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def unarxive_home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace indexed once from the unarXive sample via the sources stage's mirror indexer."""
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace

    home = tmp_path_factory.mktemp("unarxive-ws")
    ws = Workspace(home)
    report = index_mirror(ws, corpus / "samples" / "unarXive_sample")
    assert report.parsed_papers_stored == 49
    warm_token_cache(ws)
    ws.close()
    return home


def warm_token_cache(ws) -> None:
    """Count every paper's tokens once per session; each test's workspace copy then reuses the counts."""
    from academiceval.rounds.citations import CACHE_SCHEMA, WorkspaceTokenCache
    from academiceval.rounds.tasks import task_views

    ws.ensure_schema(CACHE_SCHEMA)
    cache = WorkspaceTokenCache(ws)
    for meta in ws.iter_meta():
        paper = ws.get_paper_by_arxiv(meta.arxiv_id)
        if paper is not None:
            task_views(meta, paper, cache=cache)


@pytest.fixture()
def uws(unarxive_home: Path, tmp_path: Path):
    """A private copy of the unarXive workspace (tests may add rows)."""
    from academiceval.store import Workspace

    home = tmp_path / "ws"
    shutil.copytree(unarxive_home, home)
    for leftover in ("-wal", "-shm"):
        (home / f"academiceval.sqlite{leftover}").unlink(missing_ok=True)
    ws = Workspace(home)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def mws(unarxive_home: Path, tmp_path_factory: pytest.TempPathFactory):
    """A module-wide copy of the unarXive workspace (for tests that share one built round)."""
    from academiceval.store import Workspace

    home = tmp_path_factory.mktemp("mws") / "ws"
    shutil.copytree(unarxive_home, home)
    ws = Workspace(home)
    yield ws
    ws.close()


# ---- citation cloze (SCALAR paper objects) ----------------------------------------------------------------------
@pytest.fixture(scope="session")
def scalar_home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding the 6 SCALAR paper objects of `paper_obj_anno` (with their cited papers) and SCALAR's
    ICLR-2025 metadata (exact v1 dates), indexed through `mirror index`."""
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace

    home = tmp_path_factory.mktemp("scalar-ws")
    ws = Workspace(home)
    index_mirror(ws, corpus / "samples" / "scalar_paper_obj_anno")
    index_mirror(ws, corpus / "metadata" / "scalar_iclr2025_metadata.json")
    ws.close()
    return home


@pytest.fixture(scope="session")
def scalar_round(scalar_home: Path, tmp_path_factory: pytest.TempPathFactory):
    """The three SCALAR levels built once from `scalar_home` (uncapped, so every question is checked)."""
    from academiceval.families.cloze.build import build_cloze_round
    from academiceval.store import Workspace

    home = tmp_path_factory.mktemp("scalar-round")
    shutil.copytree(scalar_home, home, dirs_exist_ok=True)
    ws = Workspace(home)
    report = build_cloze_round(ws, "cloze-anno", overrides={"max_questions": None}, seed=7)
    return ws, report
