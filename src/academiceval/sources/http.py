"""One polite, retrying HTTP client for every web API the sources read (arXiv's export API, OpenAlex).

What every such API needs is the same, so it is written once here: a pacer shared by every client of a host (two
clients of one API never double the request rate), a server's `Retry-After` honoured and applied to everyone using
that host, exponential backoff with "equal jitter" otherwise, tenacity retrying what a `SourceError` marks as
retryable, and a `RetriesExhaustedError` naming the service when the retries run out. What differs between APIs
(what a good answer looks like, which statuses mean "ask again") stays in the subclasses: `ArxivClient` in
`client.py`, `OpenAlexClient` in `openalex.py`. OAI-PMH (`oai.py`) uses oaipmh-scythe's own retry loop and shares
only the pacer and the header parsing.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Self, TypeVar

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from academiceval.sources.errors import RetriesExhaustedError, SourceError, TransientHTTPError

T = TypeVar("T")


class Pacer:
    """At least `interval` seconds between the starts of consecutive requests, shared by every thread."""

    def __init__(self, interval: float) -> None:
        self.interval = max(0.0, interval)
        self._lock = threading.Lock()
        self._next = 0.0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            delay = self._next - now
            if delay > 0:
                time.sleep(delay)
                now = time.monotonic()
            self._next = now + self.interval

    def push_back(self, seconds: float) -> None:
        """Delay the next request (a server's Retry-After applies to everyone using this client)."""
        with self._lock:
            self._next = max(self._next, time.monotonic() + seconds)


_PACERS: dict[tuple[str, float], Pacer] = {}
_PACERS_LOCK = threading.Lock()


def shared_pacer(url: str, interval: float) -> Pacer:
    """One pacer per (host, interval) in the process: two clients of the same API never double the request rate."""
    u = httpx.URL(url)
    key = (f"{u.scheme}://{u.host}:{u.port}", float(interval))
    with _PACERS_LOCK:
        if key not in _PACERS:
            _PACERS[key] = Pacer(interval)
        return _PACERS[key]


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asks us to wait: `retry-after-ms` (OpenAI-style servers), else `Retry-After` in seconds or
    as an HTTP date; None when absent or unreadable. Never negative (a date in the past means "now")."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after") or headers.get("Retry-After")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class RetryingHttpClient:
    """httpx client + shared pacer + tenacity retries. Thread-safe; `requests_made` counts requests sent (retries
    included), `retries` the retries. Subclasses set `service` (named in errors) and `give_up_hint`."""

    service = "the server"
    give_up_hint = "the server may be down or rate-limiting; run the same command again later"

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str,
        min_interval: float,
        timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float,
        seed: int | None,
        transport: httpx.BaseTransport | None,
    ) -> None:
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.pacer = shared_pacer(base_url, min_interval)
        self.requests_made = 0
        self.retries = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._http = httpx.Client(
            headers={"User-Agent": user_agent},
            timeout=httpx.Timeout(timeout),
            follow_redirects=True,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count_request(self, *, stream: bool) -> None:
        """Called under the lock for every request sent; a subclass may count streamed downloads apart."""
        self.requests_made += 1

    def _wait(self, state: RetryCallState) -> float:
        """A server's Retry-After (capped, and pushed onto the shared pacer) wins; else equal-jitter backoff."""
        exc = state.outcome.exception() if state.outcome else None
        backoff = min(self.backoff_max, self.backoff_base * 2 ** (state.attempt_number - 1))
        backoff = backoff / 2 + self._rng.uniform(0, backoff / 2)  # drawn every time: a seeded client replays
        if isinstance(exc, TransientHTTPError) and exc.retry_after is not None:
            ra = min(exc.retry_after, self.max_retry_after)
            self.pacer.push_back(ra)
            return max(ra, 0.0)
        return backoff

    def _send(
        self, method: str, url: str, *, params: Mapping[str, Any] | None = None, stream: bool = False
    ) -> httpx.Response:
        """One paced request. Timeouts, transport errors, 429 and 5xx become a retryable `TransientHTTPError`
        (carrying the server's Retry-After); any other status is the caller's to judge."""
        self.pacer.wait()
        with self._lock:
            self._count_request(stream=stream)
        try:
            req = self._http.build_request(method, url, params=params)
            resp = self._http.send(req, stream=stream)
        except httpx.TimeoutException as e:
            raise TransientHTTPError(f"timeout: {e!r}", source=url, hint=f"{self.service} is slow; retried") from e
        except httpx.TransportError as e:
            raise TransientHTTPError(f"connection problem: {e!r}", source=url) from e
        if resp.status_code == 429 or resp.status_code >= 500:
            ra = retry_after_seconds(resp.headers)
            resp.close()
            raise TransientHTTPError(
                f"HTTP {resp.status_code}", source=url, status=resp.status_code, retry_after=ra, hint="retried"
            )
        return resp

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)` retried while it raises a retryable `SourceError`; what survives the retries is a
        `RetriesExhaustedError` (or the non-retryable error itself)."""

        def before_sleep(state: RetryCallState) -> None:
            with self._lock:
                self.retries += 1

        try:
            for attempt in Retrying(
                retry=retry_if_exception(lambda e: isinstance(e, SourceError) and e.retryable),
                stop=stop_after_attempt(self.max_retries + 1),
                wait=self._wait,
                before_sleep=before_sleep,
                reraise=True,
            ):
                with attempt:
                    return fn(*args, **kwargs)
        except SourceError as e:
            if e.retryable:
                raise RetriesExhaustedError(
                    f"gave up after {self.max_retries + 1} attempts: {e.message}",
                    source=e.source,
                    hint=self.give_up_hint,
                ) from e
            raise
        raise AssertionError("unreachable")  # pragma: no cover
