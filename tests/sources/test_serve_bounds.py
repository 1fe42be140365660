"""`mirror serve` is bounded (issue 26 item 5): past its connection limit a connection is answered 503 +
Retry-After at once (no thread spent); an idle connection is closed; a query past its time limit is stopped and
answered 503; closing the server is prompt even with a request in flight. `benchmarks/mirror_serve_load.py`
measures 1,000 concurrent connections."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from academiceval.sources.mirror.disk import DiskIndex
from academiceval.sources.server import FaultConfig, ServeLimits, serve_in_thread

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"


@pytest.fixture(scope="module")
def small_index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> DiskIndex:
    root = tmp_path_factory.mktemp("serve")
    (root / "k.jsonl").symlink_to(corpus / KAGGLE)
    return DiskIndex.build(root, root.parent / "serve.sqlite")


def test_past_the_connection_limit_a_503_at_once(small_index: DiskIndex) -> None:
    limits = ServeLimits(workers=1, max_connections=1, idle_timeout=5.0)
    with serve_in_thread(small_index.root, index=small_index, limits=limits, faults=FaultConfig(slow_seconds=1.5)) as h:
        slow = threading.Thread(target=httpx.get, args=(h.url,), kwargs={"params": {"_fault": "slow"}, "timeout": 10})
        slow.start()
        time.sleep(0.3)  # the one worker (and the one connection allowed) is taken by the slow request
        t0 = time.perf_counter()
        r = httpx.get(h.url, params={"search_query": "cat:hep-ph"}, timeout=10)
        assert r.status_code == 503 and r.headers["Retry-After"] == "1" and time.perf_counter() - t0 < 1.0
        slow.join()
        assert h.server.refused == 1
        ok = httpx.get(h.url, params={"search_query": "cat:hep-ph", "max_results": 3}, timeout=10)
        assert ok.status_code == 200 and ok.text.count("<entry>") == 3


def test_idle_connections_are_closed_and_slow_queries_stopped(small_index: DiskIndex) -> None:
    limits = ServeLimits(workers=2, max_connections=4, idle_timeout=0.5, request_timeout=1e-4)
    with serve_in_thread(small_index.root, index=small_index, limits=limits) as h:
        s = socket.create_connection(("127.0.0.1", int(h.base_url.rsplit(":", 1)[1])))
        s.sendall(b"GET /api/query?search_query=cat:hep-ph HTTP/1.1\r\n")  # and then nothing more
        t0 = time.perf_counter()
        s.settimeout(5)
        assert s.recv(100) == b"" and time.perf_counter() - t0 < 3  # closed by the server, not by our timeout
        s.close()
        # a full scan with a text term cannot finish in 0.1 ms: stopped, answered 503, the worker is free again
        r = httpx.get(h.url, params={"search_query": "abs:the AND abs:of", "max_results": 2000}, timeout=10)
        assert r.status_code == 503 and "ran longer than" in r.text
        assert httpx.get(h.base_url + "/_stats", timeout=10).status_code == 200


def test_close_is_prompt_with_a_request_in_flight(small_index: DiskIndex) -> None:
    h = serve_in_thread(small_index.root, index=small_index, faults=FaultConfig(slow_seconds=30))
    hung = socket.create_connection(("127.0.0.1", int(h.base_url.rsplit(":", 1)[1])))
    hung.sendall(b"GET /api/query?search_query=cat:hep-ph")  # a request line never finished
    time.sleep(0.2)
    t0 = time.perf_counter()
    h.stop()
    assert time.perf_counter() - t0 < 3.0
    hung.close()
