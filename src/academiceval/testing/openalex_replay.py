"""A local OpenAlex stand-in that replays recorded work records, for testing `sources.openalex` offline.

There is no network here, so the recorded file (`tests/sources/data/openalex_recorded.json`) was written by hand
from OpenAlex's documented work schema (`id`, `doi`, `title`, `display_name`, `publication_year`,
`publication_date`, `ids`, `authorships[].author.display_name`, `abstract_inverted_index`, `primary_location`,
`locations[].landing_page_url`, `type`) for works the corpus's reference lists cite; the OpenAlex ids in it are
placeholders. The server answers the two request forms the client sends the way the API does:

- `GET /works?filter=doi:A|B|…` — the recorded works with those DOIs (a DOI it does not hold is simply absent);
- `GET /works?filter=title.search:WORDS[,publication_year:Y1-Y2]` — works whose title holds every word;

with `{"meta": {...}, "results": [...]}` pages; an unknown filter is a 400 with OpenAlex's error body shape.
`faults` queues statuses to answer first (429 with `Retry-After: 0`, 503), so retries can be tested. Every request
is logged (path and query, `api_key` masked) for assertions on batching and the polite-pool `mailto`.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit


def _norm_doi(raw: str) -> str:
    return re.sub(r"^https?://(?:dx\.)?doi\.org/", "", raw.strip().lower())


def _words(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


@dataclass
class ReplayState:
    works: list[dict[str, Any]]
    faults: list[int] = field(default_factory=list)  # statuses to answer before any real answer
    log: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self.lock:
            self.log.append({"path": path, **{k: ("***" if k == "api_key" else v) for k, v in query.items()}})
            if self.faults:
                status = self.faults.pop(0)
                return status, {"error": f"replayed fault {status}"}, {"Retry-After": "0"} if status == 429 else {}
        if path.rstrip("/") != "/works":
            return 404, {"error": "Not found", "message": f"no such endpoint: {path}"}, {}
        results: list[dict[str, Any]] = []
        for clause in (query.get("filter") or "").split(","):
            name, _, value = clause.partition(":")
            if name == "doi":
                wanted = {_norm_doi(v) for v in value.split("|")}
                results = [w for w in self.works if _norm_doi(str(w.get("doi") or "")) in wanted]
            elif name == "title.search":
                words = set(_words(value))
                results = [w for w in self.works if words <= set(_words(str(w.get("title") or "")))]
            elif name == "publication_year":
                lo, _, hi = value.partition("-")
                results = [w for w in results if int(lo) <= int(w.get("publication_year") or 0) <= int(hi or lo)]
            else:
                return 400, {"error": "Invalid query parameters error.", "message": f"{name} is not a valid field"}, {}
        per_page = int(query.get("per-page") or 25)
        page = results[:per_page]
        return 200, {"meta": {"count": len(results), "page": 1, "per_page": per_page}, "results": page}, {}


class _Handler(BaseHTTPRequestHandler):
    state: ReplayState

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        status, body, headers = self.state.answer(parts.path, dict(parse_qsl(parts.query)))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@dataclass
class ReplayServer:
    url: str
    state: ReplayState
    _server: ThreadingHTTPServer

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def serve_recorded(recorded: Path) -> ReplayServer:
    """Serve the recorded works on 127.0.0.1 (a free port) in a daemon thread; `stop()` when done."""
    works = json.loads(recorded.read_text(encoding="utf-8"))["works"]
    state = ReplayState(works=works)
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return ReplayServer(f"http://127.0.0.1:{server.server_address[1]}", state, server)
