"""`ingest --executor ray --address` at something that is not Ray fails within the timeout, one line (issue 26
item 5): a web server on the port, or a port that accepts connections and never answers. Needs no Ray."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from academiceval.errors import ConfigError
from academiceval.papers.ingest_ray import _check_reachable


@pytest.fixture
def web_server() -> Iterator[int]:
    class Quiet(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            return

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)  # connections complete in the kernel's backlog; nothing is ever read or written
    yield s.getsockname()[1]
    s.close()


def test_a_web_server_is_not_ray(web_server: int) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"does not answer like a Ray cluster .*not gRPC"):
        _check_reachable(f"127.0.0.1:{web_server}", timeout=2)
    assert time.perf_counter() - t0 < 2.5


def test_a_silent_port_is_not_ray(silent_port: int) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="nothing within 1 s"):
        _check_reachable(f"ray://127.0.0.1:{silent_port}", timeout=1)
    assert time.perf_counter() - t0 < 2.0


def test_a_grpc_server_passes(silent_port: int) -> None:
    """What a gRPC server sends first (a SETTINGS frame) is what the check waits for."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def answer() -> None:
        c, _ = srv.accept()
        c.recv(64)
        c.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64")
        time.sleep(0.2)
        c.close()

    threading.Thread(target=answer, daemon=True).start()
    _check_reachable(f"127.0.0.1:{srv.getsockname()[1]}", timeout=2)
    srv.close()
