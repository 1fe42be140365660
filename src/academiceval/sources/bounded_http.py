"""An `http.server` whose resources are bounded whatever the clients do (issue 26 item 5: 1,000 connections had
taken `mirror serve` — one thread and one 64 MiB SQLite cache per connection — from 474 MB to 8.6 GB).

- a fixed pool of worker threads answers requests (`workers`); so the index is read by at most that many threads
  (and SQLite connections, one per worker);
- at most `max_connections` connections are held at once (being answered or waiting for a worker); one more is
  answered `503` + `Retry-After` by the accepting thread and closed, which costs no thread;
- a connection idle for `idle_timeout` seconds (between or inside requests: a client that sends its headers a
  byte at a time) is closed;
- `server_close()` returns promptly: it stops accepting, cancels the waiting connections and shuts down the
  sockets the workers are reading from, so a SIGTERM ends `mirror serve` in well under a second.

Why not uvicorn or another server: `mirror serve` exists to misbehave on purpose (a body cut short of its
`Content-Length`, a stall, HTML instead of XML), which needs byte-level control of the response that ASGI servers
rightly do not give; the stdlib handler gives it, and this module only adds the bounds.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import HTTPServer
from typing import Any

_REFUSED_BODY = b"Too many connections: retry in 1 s.\r\n"
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_REFUSED_BODY), _REFUSED_BODY)
)


class BoundedHTTPServer(HTTPServer):
    """`HTTPServer` with a bounded worker pool, a connection limit and prompt close (see the module docstring)."""

    allow_reuse_address = True
    request_queue_size = 1024  # the listen backlog (socketserver's 5 made a burst of connects wait for SYN retries)

    def __init__(
        self,
        address: tuple[str, int],
        handler: Any,
        *,
        workers: int = 8,
        max_connections: int = 1024,
        idle_timeout: float = 10.0,
    ) -> None:
        if workers < 1 or max_connections < workers:
            raise ValueError("need workers >= 1 and max_connections >= workers")
        self.workers, self.max_connections, self.idle_timeout = workers, max_connections, idle_timeout
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mirror-serve")
        self._held: set[socket.socket] = set()  # accepted and not yet closed (queued or being answered)
        self._held_lock = threading.Lock()
        self._closing = False
        self.refused = 0  # connections answered 503 because `max_connections` were held
        self.peak_connections = 0
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._held_lock:
            full = self._closing or len(self._held) >= self.max_connections
            if not full:
                self._held.add(request)
                self.peak_connections = max(self.peak_connections, len(self._held))
        if full:
            self.refused += 1
            with contextlib.suppress(OSError):
                request.sendall(REFUSED)
            self.shutdown_request(request)
            return
        request.settimeout(self.idle_timeout)
        try:
            self._pool.submit(self._answer, request, client_address)
        except RuntimeError:  # the pool is shut down: we are closing
            self._release(request)

    def _answer(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self._release(request)

    def _release(self, request: Any) -> None:
        with self._held_lock:
            self._held.discard(request)
        self.shutdown_request(request)

    @property
    def connections(self) -> int:
        with self._held_lock:
            return len(self._held)

    def server_close(self) -> None:
        """Stop accepting; drop waiting connections; wake the workers blocked on a socket; wait for them briefly."""
        with self._held_lock:
            self._closing = True
            held = list(self._held)
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for s in held:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        for t in list(getattr(self._pool, "_threads", ())):
            t.join(timeout=2.0)
        with self._held_lock:
            left, self._held = list(self._held), set()
        for s in left:  # cancelled before a worker took them
            with contextlib.suppress(OSError):
                s.close()
