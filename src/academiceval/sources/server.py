"""`mirror serve`: an HTTP server on 127.0.0.1 that speaks the arXiv export API over a local mirror, with faults.

Endpoints: `GET /api/query` (search_query, id_list, start, max_results, sortBy, sortOrder → Atom shaped like
arXiv's), `GET /oai2` (OAI-PMH bulk metadata, `oai_server.py`), `GET /pdf/<id>` (the mirror's PDF), `GET /_stats`
(JSON request counters), `GET|POST /_faults` (read or replace the fault configuration as JSON). Faults are
injected at the configured rates from a seeded RNG, or forced for one request with
`_fault=429|500|503|slow|truncate|empty|html` in the query string — so tests and benchmarks can
check that the real client survives exactly what live arXiv does to it.
"""

from __future__ import annotations

import json
import math
import random
import socket
import sys
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from academiceval.sources.atom import write_feed
from academiceval.sources.bounded_http import BoundedHTTPServer
from academiceval.sources.errors import QuerySyntaxError, QueryTimeoutError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.disk import DiskIndex, open_index
from academiceval.sources.mirror.index import MirrorIndex
from academiceval.sources.oai_server import respond

FAULT_KINDS = ("429", "500", "slow", "truncate", "empty", "html", "503")
MAX_RESULTS_CAP = 2000  # arXiv serves at most 2,000 records per page


@dataclass
class FaultConfig:
    """Rates are per request, each in [0, 1] and checked in the order of FAULT_KINDS."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_slow: float = 0.0
    rate_truncate: float = 0.0
    rate_empty: float = 0.0
    rate_html: float = 0.0
    rate_503: float = 0.0  # 503 + Retry-After: OAI-PMH flow control (arXiv's bulk endpoint answers this way)
    retry_after: float = 1.0  # seconds sent with 429 (fractions allowed, for fast tests)
    slow_seconds: float = 2.0
    seed: int = 0
    apply_to_pdf: bool = False  # faults on /pdf too (only 429/500/truncate/html make sense there)

    @classmethod
    def parse(cls, spec: str | None) -> FaultConfig:
        """ "429=0.1,500=0.05,retry_after=1,seed=7" → FaultConfig."""
        values: dict[str, object] = {}
        defaults = cls()
        for part in (spec or "").split(","):
            if not part.strip():
                continue
            k, _, v = part.partition("=")
            k = k.strip()
            name = f"rate_{k}" if k in FAULT_KINDS else k
            if not hasattr(defaults, name):
                raise ValueError(f"unknown fault setting {k!r}; use {', '.join(FAULT_KINDS)}, retry_after, seed, ...")
            cur = getattr(defaults, name)
            values[name] = v.strip() in ("1", "true", "yes") if isinstance(cur, bool) else type(cur)(v)
        return cls.from_json(values)

    @classmethod
    def from_json(cls, data: object) -> FaultConfig:
        """A configuration POSTed to `/_faults`, checked field by field so a bad value is refused with a 400
        instead of being stored and breaking every later request (a string where a rate belongs, a list)."""
        if not isinstance(data, dict):
            raise ValueError(f"the fault configuration must be a JSON object, not {type(data).__name__}")
        cfg = cls()
        for key, value in data.items():
            if key not in cls.__dataclass_fields__:
                raise ValueError(f"unknown fault setting {key!r}; known: {', '.join(cls.__dataclass_fields__)}")
            cur = getattr(cfg, key)
            if isinstance(cur, bool):
                if not isinstance(value, bool):
                    raise ValueError(f"{key} must be true or false, got {value!r}")
            elif isinstance(cur, int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ValueError(f"{key} must be an integer, got {value!r}")
            else:
                if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                    raise ValueError(f"{key} must be a finite number, got {value!r}")
                if key.startswith("rate_") and not 0.0 <= value <= 1.0:
                    raise ValueError(f"{key} is a probability and must lie in [0, 1], got {value!r}")
                if not key.startswith("rate_") and value < 0:
                    raise ValueError(f"{key} must not be negative, got {value!r}")
                value = float(value)
            setattr(cfg, key, value)
        return cfg


@dataclass
class Stats:
    requests: int = 0
    api_requests: int = 0
    pdf_requests: int = 0
    ok: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))
    errors: int = 0


@dataclass(frozen=True)
class ServeLimits:
    """The bounds of `mirror serve` (`bounded_http.py`): worker threads, connections held at once (one more is
    answered 503 + Retry-After), seconds a connection may sit idle, seconds one query may run (then 503)."""

    workers: int = 8
    max_connections: int = 1024
    idle_timeout: float = 10.0
    request_timeout: float = 30.0


class MirrorServer(BoundedHTTPServer):
    def __init__(
        self,
        index: MirrorIndex | DiskIndex,
        port: int = 0,
        faults: FaultConfig | None = None,
        limits: ServeLimits | None = None,
    ) -> None:
        self.index = index
        self.limits = limits or ServeLimits()
        self.faults = faults or FaultConfig()
        self.stats = Stats()
        self.lock = threading.Lock()
        self.rng = random.Random(self.faults.seed)
        self.oai_page_size = 1000  # records per OAI-PMH ListRecords page (arXiv's size); tests make it small
        self.oai_expire_every = 0  # >0: every Nth resumptionToken is answered badResumptionToken (expired)
        self.oai_token_uses = 0
        lim = self.limits
        super().__init__(
            ("127.0.0.1", port),
            _Handler,
            workers=lim.workers,
            max_connections=lim.max_connections,
            idle_timeout=lim.idle_timeout,
        )

    def time_limit(self) -> AbstractContextManager[None]:
        """Queries of this request stop after `request_timeout` (a disk index's SQLite work is interrupted)."""
        limit = getattr(self.index, "time_limit", None)
        return limit(self.limits.request_timeout) if limit is not None else nullcontext()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (e.g. after its own timeout) is normal here: count it, print nothing."""
        exc = sys.exc_info()[1]
        self.count(errors=1)
        if not isinstance(exc, ConnectionError | TimeoutError | OSError):
            super().handle_error(request, client_address)

    def pick_fault(self, forced: str | None, is_pdf: bool) -> str | None:
        with self.lock:
            if forced:
                return forced if forced in FAULT_KINDS else None
            if is_pdf and not self.faults.apply_to_pdf:
                return None
            for kind in FAULT_KINDS:
                rate = getattr(self.faults, f"rate_{kind}")
                if rate > 0 and self.rng.random() < rate:
                    return kind
            return None

    def set_faults(self, cfg: FaultConfig) -> None:
        with self.lock:
            self.faults = cfg
            self.rng = random.Random(cfg.seed)

    def count(self, **kw: int) -> None:
        with self.lock:
            for k, v in kw.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)

    def count_fault(self, kind: str) -> None:
        with self.lock:
            self.stats.faults[kind] += 1

    def stats_json(self) -> dict[str, Any]:
        with self.lock:
            return json.loads(json.dumps(asdict(self.stats)))


class _Handler(BaseHTTPRequestHandler):
    server: MirrorServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet; /_stats has the counts
        return

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes; without NODELAY, Nagle + delayed ACK add ~40 ms per response
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- helpers --------------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, obj: object, status: int = 200) -> None:
        self._send(status, json.dumps(obj, indent=1).encode(), "application/json")

    def _fault(self, kind: str | None, body_fn) -> bool:
        """Apply a fault; True when the response has been sent (or deliberately broken)."""
        if kind is None:
            return False
        self.server.count_fault(kind)
        if kind == "429":
            ra = self.server.faults.retry_after
            ra_s = str(int(ra)) if float(ra).is_integer() else f"{ra:g}"
            self._send(429, b"Rate exceeded.", "text/plain", {"Retry-After": ra_s})
        elif kind == "503":
            ra = self.server.faults.retry_after
            ra_s = str(int(ra)) if float(ra).is_integer() else f"{ra:g}"
            self._send(503, b"Service unavailable: retry later.", "text/plain", {"Retry-After": ra_s})
        elif kind == "500":
            self._send(500, b"<html><body>Internal Server Error</body></html>", "text/html")
        elif kind == "html":
            page = b"<!DOCTYPE html><html><head><title>arXiv</title></head><body>Service busy</body></html>"
            self._send(200, page, "text/html; charset=utf-8")
        elif kind == "slow":
            time.sleep(self.server.faults.slow_seconds)
            return False  # then answer normally
        elif kind == "truncate":
            body, ctype = body_fn()
            cut = body[: max(1, len(body) // 2)]
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))  # promises more than it sends
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(cut)
            self.wfile.flush()
            self.close_connection = True
        else:
            return False  # "empty" is handled by the query endpoint
        return True

    # ---- routes ---------------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        url = urlparse(self.path)
        qs = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.server.count(requests=1)
        try:
            if url.path in ("/api/query", "/query"):
                self.server.count(api_requests=1)
                self._query(qs)
            elif url.path in ("/oai2", "/oai"):
                self.server.count(api_requests=1)
                self._oai(qs)
            elif url.path.startswith("/pdf/"):
                self.server.count(pdf_requests=1)
                self._pdf(unquote(url.path[len("/pdf/") :]), qs)
            elif url.path == "/_stats":
                self._json(self.server.stats_json())
            elif url.path == "/_faults":
                self._json(asdict(self.server.faults))
            else:
                self._json({"error": f"no such endpoint {url.path}"}, 404)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_HEAD(self) -> None:  # same answer as GET, without the body
        self.do_GET()

    def do_POST(self) -> None:
        url = urlparse(self.path)
        if url.path != "/_faults":
            self._json({"error": "POST only on /_faults"}, 405)
            return
        n = int(self.headers.get("Content-Length") or 0)
        try:
            cfg = FaultConfig.from_json(json.loads(self.rfile.read(n) or b"{}"))
        except ValueError as e:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors too
            self._json({"error": str(e)}, 400)
            return
        self.server.set_faults(cfg)
        self._json(asdict(cfg))

    def _query(self, qs: dict[str, str]) -> None:
        kind = self.server.pick_fault(qs.get("_fault"), is_pdf=False)
        idx = self.server.index
        try:
            start = max(0, int(qs.get("start", "0") or 0))
            max_results = min(MAX_RESULTS_CAP, max(0, int(qs.get("max_results", "10") or 10)))
        except ValueError:
            self._error_feed("start and max_results must be integers", 400)
            return
        sort_by = qs.get("sortBy", "relevance")
        sort_order = qs.get("sortOrder", "descending")
        query, id_list = qs.get("search_query", "").strip(), qs.get("id_list", "").strip()
        total: int | None = None
        try:
            with self.server.time_limit():
                if id_list:
                    ids = [s.strip() for s in id_list.split(",") if s.strip()]
                    for raw in ids:
                        parse_arxiv_id(raw)
                    recs = [r for r in (idx.get(i) for i in ids) if r is not None]
                    recs = list({r.meta.arxiv_id: r for r in recs}.values())
                    if query:
                        allowed = {r.meta.arxiv_id for r in idx.search(query)}
                        recs = [r for r in recs if r.meta.arxiv_id in allowed]
                elif query:  # only the page is read (the disk index decodes just these rows)
                    total, recs = idx.search_page(
                        query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order
                    )
                else:
                    recs = []
        except QuerySyntaxError as e:
            self._error_feed(e.message, 400)
            return
        except QueryTimeoutError as e:
            self._busy(e.message)
            return
        except Exception as e:  # invalid ids, etc.: arXiv answers 400 with an error entry
            self._error_feed(f"incorrect id format: {e}", 400)
            return
        if total is None:
            total, page = len(recs), recs[start : start + max_results]
        else:
            page = recs
        title = f"search_query={query}&id_list={id_list}&start={start}&max_results={max_results}"

        def body_fn(items=page) -> tuple[bytes, str]:
            body = write_feed(
                [r.meta for r in items],
                total_results=total,
                start=start,
                items_per_page=max_results,
                query_title=title,
                base_url=f"http://127.0.0.1:{self.server.server_address[1]}",
                published_at={r.meta.arxiv_id: r.published_at for r in items},
                updated_at={r.meta.arxiv_id: r.updated_at for r in items if r.updated_at},
            )
            return body, "application/atom+xml; charset=utf-8"

        if kind == "empty":
            self.server.count_fault("empty")
            body, ctype = body_fn([])
            self._send(200, body, ctype)
            return
        if self._fault(kind, body_fn):
            return
        body, ctype = body_fn()
        self.server.count(ok=1)
        self._send(200, body, ctype)

    def _oai(self, qs: dict[str, str]) -> None:
        """OAI-PMH (`oai_server.py`); faults as on the query API, `empty` = a page cut short of its records."""
        kind = self.server.pick_fault(qs.get("_fault"), is_pdf=False)
        params = {k: v for k, v in qs.items() if not k.startswith("_")}
        base = f"http://127.0.0.1:{self.server.server_address[1]}/oai2"

        def body_fn() -> tuple[bytes, str]:
            with self.server.time_limit():
                return respond(self.server.index, params, base, self.server.oai_page_size), "text/xml; charset=utf-8"

        srv = self.server
        if "resumptionToken" in params and srv.oai_expire_every > 0:
            with srv.lock:
                srv.oai_token_uses += 1
                expire = srv.oai_token_uses % srv.oai_expire_every == 0
            if expire:  # an expired token, as a real server does after a while
                params = {"verb": params.get("verb", ""), "resumptionToken": "expired"}
        if kind == "empty":
            kind = "truncate"
        try:
            if self._fault(kind, body_fn):
                return
            body, ctype = body_fn()
        except QueryTimeoutError as e:
            self._busy(e.message)
            return
        self.server.count(ok=1)
        self._send(200, body, ctype)

    def _busy(self, message: str) -> None:
        """A query that ran out of time: 503 + Retry-After (clients retry it), never a worker held for good."""
        self.server.count(errors=1)
        self._send(503, message.encode(), "text/plain", {"Retry-After": "5"})

    def _error_feed(self, msg: str, status: int) -> None:
        self.server.count(errors=1)
        body = write_feed([], total_results=1, start=0, items_per_page=1, errors=[msg])
        self._send(status, body, "application/atom+xml; charset=utf-8")

    def _pdf(self, raw_id: str, qs: dict[str, str]) -> None:
        try:
            base, _ = parse_arxiv_id(raw_id)
        except Exception:
            self._send(404, b"<html><body>not an arXiv id</body></html>", "text/html")
            return
        found = self.server.index.pdfs.get(base)
        if found is None:
            self._send(404, b"<html><body>No PDF for this paper</body></html>", "text/html")
            return
        path: Path = found[1]
        kind = self.server.pick_fault(qs.get("_fault"), is_pdf=True)
        if kind in ("empty", "slow"):
            kind = None if kind == "empty" else kind
        if self._fault(kind, lambda: (path.read_bytes(), "application/pdf")):
            return
        self.server.count(ok=1)
        self._send(200, path.read_bytes(), "application/pdf")


@dataclass
class ServerHandle:
    """A running server: `url` is the API endpoint (…/api/query); `stats()` the counters; `stop()` shuts down."""

    url: str
    base_url: str
    server: MirrorServer
    thread: threading.Thread

    def stats(self) -> dict[str, Any]:
        return self.server.stats_json()

    def set_faults(self, faults: FaultConfig) -> None:
        self.server.set_faults(faults)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def make_server(
    directory: str | Path,
    port: int = 0,
    faults: FaultConfig | None = None,
    *,
    index: MirrorIndex | DiskIndex | None = None,
    index_path: str | Path | None = None,
    limits: ServeLimits | None = None,
) -> MirrorServer:
    """`index`: one already open; else `open_index` (a disk index at `index_path`, or in memory)."""
    return MirrorServer(index or open_index(directory, index_path=index_path), port=port, faults=faults, limits=limits)


def serve_in_thread(
    directory: str | Path,
    port: int = 0,
    faults: FaultConfig | None = None,
    *,
    index: MirrorIndex | DiskIndex | None = None,
    index_path: str | Path | None = None,
    limits: ServeLimits | None = None,
) -> ServerHandle:
    """Start `mirror serve` in a background thread on 127.0.0.1 (port 0 = any free port)."""
    server = make_server(directory, port, faults, index=index, index_path=index_path, limits=limits)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    t.start()
    port_ = server.server_address[1]
    base = f"http://127.0.0.1:{port_}"
    return ServerHandle(url=f"{base}/api/query", base_url=base, server=server, thread=t)


__all__ = ["FaultConfig", "MirrorServer", "ServeLimits", "ServerHandle", "make_server", "serve_in_thread"]
