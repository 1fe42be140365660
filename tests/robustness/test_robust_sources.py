"""Hostile inputs to the sources stage: directory-link loops in a mirror, bad fault configurations on the server.

Each test reproduces a failure seen on main before the fix (issue 10, findings 1 and 6)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from academiceval.sources.mirror.scan import find_files
from academiceval.sources.server import FaultConfig, serve_in_thread

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"


@pytest.fixture
def looped_mirror(corpus: Path, tmp_path: Path) -> Path:
    """A mirror whose directory links form loops: a/back -> root, a/b/self -> a/b, a/b/up -> a (finding 1)."""
    root = tmp_path / "mirror"
    b = root / "a" / "b"
    b.mkdir(parents=True)
    (root / "kaggle.jsonl").symlink_to(corpus / KAGGLE)
    (b / "same_kaggle.jsonl").symlink_to(corpus / KAGGLE)  # the same real file under another name
    (root / "a" / "back").symlink_to(root, target_is_directory=True)
    (b / "self").symlink_to(b, target_is_directory=True)
    (b / "up").symlink_to(root / "a", target_is_directory=True)
    (b / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    return root


@pytest.mark.timeout(60)
def test_link_loops_end_and_each_file_is_read_once(looped_mirror: Path) -> None:
    found = find_files(looped_mirror)
    kaggle = [f for f in found if f.fmt == "kaggle"]
    assert len(kaggle) == 1, [str(f.path) for f in found]  # before: the walk branched at every level, forever
    assert [f.fmt for f in found if f.path.name == "dangling.jsonl"] == ["skipped"]


@pytest.mark.timeout(120)
def test_mirror_index_on_a_looped_mirror(looped_mirror: Path, tmp_path: Path) -> None:
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store.workspace import Workspace

    report = index_mirror(Workspace(tmp_path / "ws"), looped_mirror)
    assert report.papers_stored == 200  # the 200 Kaggle lines, once


BAD_FAULTS = [
    ({"rate_429": "lots"}, "finite number"),
    ({"rate_500": 2}, "[0, 1]"),
    ({"rate_slow": float("nan")}, None),  # NaN is not valid JSON for json.dumps(allow_nan) below → send raw
    ({"retry_after": -1}, "negative"),
    ({"seed": 1.5}, "integer"),
    ({"apply_to_pdf": "yes"}, "true or false"),
    ({"rate_teapot": 0.1}, "unknown fault setting"),
    ([0.1, 0.2], "JSON object"),
    ("429=0.1", "JSON object"),
]


@pytest.mark.parametrize(("payload", "says"), BAD_FAULTS)
def test_bad_fault_posts_are_refused_and_the_server_keeps_serving(
    corpus: Path, tmp_path: Path, payload: object, says: str | None
) -> None:
    d = tmp_path / "atom_only"
    d.mkdir()
    (d / "fixtures").symlink_to(corpus / "arxiv_api/arxiv.py_fixtures", target_is_directory=True)
    with serve_in_thread(d) as srv:
        body = json.dumps(payload, allow_nan=True).encode()
        r = httpx.post(f"{srv.base_url}/_faults", content=body, timeout=10)
        assert r.status_code == 400, r.text  # before: accepted (or no answer at all for a list)
        if says:
            assert says in r.json()["error"]
        assert httpx.get(f"{srv.base_url}/_faults", timeout=10).json() == FaultConfig().__dict__
        ok = httpx.get(srv.url, params={"search_query": "au:del_maestro", "max_results": 2}, timeout=10)
        assert ok.status_code == 200 and b"<feed" in ok.content
    with serve_in_thread(d) as srv:  # a good configuration is still taken
        r = httpx.post(f"{srv.base_url}/_faults", json={"rate_429": 1.0, "retry_after": 0.01}, timeout=10)
        assert r.status_code == 200
        assert httpx.get(srv.url, params={"search_query": "au:del_maestro"}, timeout=10).status_code == 429


def test_fault_flag_is_validated_like_the_endpoint() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        FaultConfig.parse("429=7")
    with pytest.raises(ValueError, match="finite"):
        FaultConfig.parse("retry_after=inf")
    assert FaultConfig.parse("429=0.5,seed=3,apply_to_pdf=true") == FaultConfig(rate_429=0.5, seed=3, apply_to_pdf=True)
