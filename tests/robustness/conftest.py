"""Fixtures for the robustness suite: a small real round, a local fault-injecting model server, and one helper
that runs a model through whichever `run_round` signature the checkout has."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from academiceval.testing.fake_server import FakeServerConfig, ServerHandle, start_in_thread


def _write_sample_round(corpus: Path, out: Path) -> Path:
    from academiceval.testing.sample_round import write_sample_round

    return write_sample_round(corpus, out, max_papers=6, body_chars=3000)


@pytest.fixture(scope="session")
def robust_round_master(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Title + abstract × zero-shot / random:1 over 6 real papers (24 samples), built once."""
    return _write_sample_round(corpus, tmp_path_factory.mktemp("round") / "2022-12-sample")


@pytest.fixture()
def robust_round(robust_round_master: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "ws" / "rounds" / robust_round_master.name
    shutil.copytree(robust_round_master, dst)
    return dst


@pytest.fixture()
def fake_server() -> Iterator[Callable[..., ServerHandle]]:
    handles: list[ServerHandle] = []

    def start(**kw: Any) -> ServerHandle:
        h = start_in_thread(FakeServerConfig(**kw))
        handles.append(h)
        return h

    yield start
    for h in handles:
        h.stop()


def run_model(ws: Path, round_ref: Path | str, model: str, **kw: Any):
    """`run_round(ws, round, RunConfig(model=model, **options), retry_policy=, backend=, progress=)`."""
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round

    extra = {k: kw.pop(k) for k in ("retry_policy", "backend", "progress") if k in kw}
    return run_round(ws, round_ref, RunConfig(model=model, **kw), **extra)


def run_records(run_dir: Path) -> dict[str, Any]:
    """The latest record per sample."""
    from academiceval.store.artifacts import read_run_records

    return read_run_records(run_dir)


def record_lines(run_dir: Path) -> list[dict[str, Any]]:
    """Every record line of a run (to count duplicates), parsed leniently."""
    import json

    out = []
    for f in sorted(run_dir.glob("*.jsonl")):
        if f.name == "scores.jsonl":
            continue
        for line in f.read_bytes().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
