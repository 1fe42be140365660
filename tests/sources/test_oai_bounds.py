"""The OAI-PMH harvester ends against servers that would keep it forever (issue 26 item 5): one that repeats its
resumption token, one that trickles a body (each byte within the read timeout), one that sends an endless body;
and `mirror serve` answers a resumption token nested thousands deep with `badResumptionToken`, one line."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

pytest.importorskip("oaipmh_scythe", reason="the [oai] extra is not installed")

from academiceval.sources.errors import RetriesExhaustedError, SourceError
from academiceval.sources.mirror import MirrorSource
from academiceval.sources.oai import OaiHarvester
from academiceval.sources.server import serve_in_thread

PAGE = (
    '<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
    "<responseDate>2026-01-01T00:00:00Z</responseDate><request>x</request><ListRecords>"
    "<record><header><identifier>oai:arXiv.org:1801.00001</identifier><datestamp>2018-01-02</datestamp></header>"
    '<metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>1801.00001</id><created>2018-01-01</created>'
    "<authors><author><keyname>Doe</keyname><forenames>Jane</forenames></author></authors>"
    "<title>A paper</title><categories>astro-ph.GA</categories><abstract>Text.</abstract></arXiv></metadata></record>"
    '<resumptionToken cursor="0" completeListSize="10">same-token-again</resumptionToken></ListRecords></OAI-PMH>'
)


class _Bad(BaseHTTPRequestHandler):
    mode = "repeat"

    def log_message(self, *a: object) -> None:
        return

    def do_GET(self) -> None:
        if self.mode == "repeat":
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)  # no Content-Length: the body ends when the connection does — never
        self.send_header("Content-Type", "text/xml")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(b'<?xml version="1.0"?><OAI-PMH>')
            while True:
                if self.mode == "trickle":
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
                else:
                    self.wfile.write(b"<x/>" * 16384)
        except OSError:
            return


@pytest.fixture
def bad_server() -> Iterator[tuple[str, type[_Bad]]]:
    handler = type("Handler", (_Bad,), {})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/oai2", handler
    srv.shutdown()
    srv.server_close()


def _harvester(url: str, **kw: object) -> OaiHarvester:
    opts = {"min_interval": 0, "default_retry_after": 0.01, "transport_backoff": 0.01, "max_retries": 2, **kw}
    return OaiHarvester(url, **opts)  # type: ignore[arg-type]


def test_a_repeated_resumption_token_ends_the_harvest(bad_server: tuple[str, type[_Bad]]) -> None:
    url, handler = bad_server
    handler.mode = "repeat"
    with _harvester(url) as h, pytest.raises(SourceError, match="repeated the resumptionToken"):
        list(h.iter_records("2018-01-01", "2018-01-31"))
    assert h.stats.requests == 2 and h.stats.records == 1


def test_a_trickled_body_is_cut_at_its_deadline_and_retried(bad_server: tuple[str, type[_Bad]]) -> None:
    url, handler = bad_server
    handler.mode = "trickle"
    t0 = time.perf_counter()
    with _harvester(url, body_deadline=0.4, timeout=5) as h, pytest.raises(RetriesExhaustedError):
        list(h.iter_records("2018-01-01", "2018-01-31"))
    assert h.stats.stalled == 3 and h.stats.requests == 3  # 1 + 2 retries, each cut after 0.4 s
    assert time.perf_counter() - t0 < 5


def test_an_endless_body_hits_the_byte_budget(bad_server: tuple[str, type[_Bad]]) -> None:
    url, handler = bad_server
    handler.mode = "endless"
    with _harvester(url, max_body_bytes=2_000_000) as h, pytest.raises(SourceError, match="larger than 2 MB"):
        list(h.iter_records("2018-01-01", "2018-01-31"))
    assert h.stats.requests == 1  # not retried: a bigger answer does not come smaller


def test_a_deeply_nested_token_is_bad_resumption_token(
    mirror: MirrorSource, mirror_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from academiceval.sources import oai_server

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    head = b'{"cursor": 0, "verb": "ListRecords", "x": '
    tokens = [b64(head + b"[" * 1400 + b"]" * 1400 + b"}"), b64(head + b"[" * 600 + b"]" * 600 + b"}")]
    with serve_in_thread(mirror_dir, index=mirror.index) as srv:
        for token in tokens:  # over the length cap; under it but nested (a list where a string belongs)
            r = httpx.get(srv.base_url + "/oai2", params={"verb": "ListRecords", "resumptionToken": token})
            assert r.status_code == 200 and '<error code="badResumptionToken">' in r.text
        assert srv.stats()["errors"] == 0
    monkeypatch.setattr(oai_server, "MAX_TOKEN", 10**7)  # past the cap, json's own recursion limit is met
    with pytest.raises(oai_server.OaiError, match="invalid or expired"):
        oai_server.decode_token(b64(b"[" * 100_000 + b"]" * 100_000))
