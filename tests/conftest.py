"""Shared fixtures: the real-data corpus beside the checkout, and a fresh workspace per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"real-data corpus not found at {CORPUS}; set ACADEMICEVAL_CORPUS")
    return CORPUS


@pytest.fixture()
def workspace(tmp_path: Path):
    from academiceval.store import Workspace

    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()
