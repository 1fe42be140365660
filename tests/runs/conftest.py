"""Fixtures for the runs tests: a small real round (unarXive sample text) and a local OpenAI-compatible server."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from academiceval.testing.fake_server import FakeServerConfig, ServerHandle, start_in_thread
from academiceval.testing.sample_round import write_sample_round


@pytest.fixture(scope="session")
def sample_round_master(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Title + abstract tasks × zero-shot / random:1 over 12 real papers (48 samples), built once."""
    return write_sample_round(
        corpus, tmp_path_factory.mktemp("round") / "2022-12-sample", max_papers=12, body_chars=6000
    )


@pytest.fixture()
def sample_round(sample_round_master: Path, tmp_path: Path) -> Path:
    """A private copy (tests may tamper with it)."""
    dst = tmp_path / "rounds" / sample_round_master.name
    shutil.copytree(sample_round_master, dst)
    return dst


@pytest.fixture()
def fake_server() -> Iterator[Callable[..., ServerHandle]]:
    handles: list[ServerHandle] = []

    def start(**kw) -> ServerHandle:
        h = start_in_thread(FakeServerConfig(**kw))
        handles.append(h)
        return h

    yield start
    for h in handles:
        h.stop()
