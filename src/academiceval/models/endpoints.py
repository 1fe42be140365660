"""Many OpenAI-compatible endpoints serving one model, behind one backend (`run --base-url A --base-url B ...`).

`EndpointPool` is a backend like `OpenAIBackend` (one attempt per call; the caller's `models.generate.Generator`
caches and retries), which dispatches each attempt to the *least-loaded* endpoint that is up: the one with the
lowest observed latency (an EWMA) × (1 + (in-flight + 1) / window), each endpoint having its own
`AdaptiveLimiter` (a 429 from one server halves that server's window only). A fast server is preferred while
it has room; when every window is full, each server is refilled as it frees slots, so each serves in
proportion to its speed.

Health: a connection failure takes an endpoint out at once; `fail_threshold` (5) server errors or timeouts in a row
do too. An endpoint that is out gets no requests for a cool-down (`cooldown_s`, doubling while it stays down, up
to `max_cooldown_s`); then it is *probed* with one request at a time until one succeeds. The failed attempt
raises its (transient) error as usual, so the Generator's retry sends it again — to another endpoint. When every
endpoint is out, an attempt waits for the first cool-down to end.

The cache identity leaves the endpoints out (`{"backend": "openai", "model": ..., "endpoints": "any"}`): the same
model on several servers gives the same answers, so an answer cached from one server is a hit on any other, and
adding or removing a server keeps the cache. Each completion says which endpoint answered (`raw["endpoint"]`,
the `endpoint` field of a run record).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import (
    ConnectionFailedError,
    RateLimitedError,
    RequestTimeoutError,
    ServerError,
)
from academiceval.models.openai_backend import OpenAIBackend, normalize_base_url
from academiceval.store.models import Sample


def parse_endpoints(urls: list[str]) -> list[str]:
    """Normalised endpoint URLs; a bad URL or a duplicate (after normalising) is a ConfigError naming it."""
    out: list[str] = []
    for raw in urls:
        url = normalize_base_url(raw)  # ConfigError for a non-http(s) URL
        if url in out:
            raise ConfigError(
                f"endpoint {raw!r} is listed twice (as {url})", hint="give each server once (--base-url / --endpoints)"
            )
        out.append(url)
    return out


def read_endpoints_file(path: str) -> list[str]:
    """One URL per line; blank lines and `#` comments are skipped."""
    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - small file, read once
    except OSError as e:
        raise ConfigError(f"--endpoints {path}: cannot read it ({e.strerror})") from None
    urls = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    urls = [u for u in urls if u]
    if not urls:
        raise ConfigError(f"--endpoints {path}: no URL in the file", hint="one URL per line")
    return urls


@dataclass
class Endpoint:
    url: str
    backend: OpenAIBackend
    limiter: AdaptiveLimiter
    requests: int = 0  # attempts sent here
    answered: int = 0
    failures: int = 0
    taken_out: int = 0  # how many times it was taken out of the rotation
    consecutive: int = 0  # failures in a row
    down_until: float = 0.0
    probing: bool = False  # back from a cool-down: one request at a time until one succeeds
    cooldown: float = 0.0
    latency_s: float = 0.0  # EWMA of answered requests' latency (0: none yet)

    def capacity(self) -> int:
        return 1 if self.probing else self.limiter.limit

    def load(self) -> float:
        """The load of an endpoint with a free slot: its latency (EWMA of answered requests) weighted by how full
        its window would be with this request (a window shrunk by a 429 counts fuller). A fast server is preferred
        while it has room (the last requests of a run do not wait on the slowest server); at saturation every
        window is full, each freed slot is refilled at once, and each server serves in proportion to its speed."""
        return (1.0 + (self.limiter.in_flight + 1) / self.capacity()) * (self.latency_s or 1e-3)


class EndpointPool:
    """Backend for `openai/<model>` on several servers; see the module docstring."""

    name = "openai"
    capabilities = Capabilities(validate=True)

    def __init__(
        self,
        model: str,
        *,
        base_urls: list[str],
        api_key: str | None = None,
        timeout: float = 600.0,
        system_prompt: str | None = None,
        max_connections: int = 16,
        fail_threshold: int = 5,
        cooldown_s: float = 5.0,
        max_cooldown_s: float = 60.0,
    ) -> None:
        urls = parse_endpoints(base_urls)
        if not urls:
            raise ConfigError("no endpoint given")
        self.model = model
        self.fail_threshold = max(1, fail_threshold)
        self.cooldown_s, self.max_cooldown_s = cooldown_s, max(cooldown_s, max_cooldown_s)
        self.max_connections = max_connections
        self.endpoints = [
            Endpoint(
                u,
                OpenAIBackend(model, base_url=u, api_key=api_key, timeout=timeout, system_prompt=system_prompt),
                AdaptiveLimiter(max_connections),
            )
            for u in urls
        ]
        self._freed: asyncio.Event | None = None

    def __repr__(self) -> str:
        return f"EndpointPool(model={self.model!r}, endpoints={[e.url for e in self.endpoints]!r})"

    @property
    def urls(self) -> list[str]:
        return [e.url for e in self.endpoints]

    def cache_identity(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "endpoints": "any"}

    def stats(self) -> dict[str, dict[str, int]]:
        """Per endpoint: attempts sent, answers, failures, times taken out."""
        return {
            e.url: {"requests": e.requests, "answered": e.answered, "failures": e.failures, "taken_out": e.taken_out}
            for e in self.endpoints
        }

    async def validate(self) -> None:
        """Every endpoint must be reachable and serve the model (its /models lists it), before any work."""
        await asyncio.gather(*(e.backend.validate() for e in self.endpoints))

    async def aclose(self) -> None:
        await asyncio.gather(*(e.backend.aclose() for e in self.endpoints), return_exceptions=True)

    # ---- dispatch ---------------------------------------------------------------------------------
    def _event(self) -> asyncio.Event:
        if self._freed is None:
            self._freed = asyncio.Event()
        return self._freed

    async def _take(self) -> Endpoint:
        """A slot on the least-loaded endpoint that is up (waits while all are full or out)."""
        while True:
            now = time.monotonic()
            best: Endpoint | None = None
            for e in self.endpoints:
                if e.down_until > now or e.limiter.in_flight >= e.capacity():
                    continue
                if best is None or e.load() < best.load():
                    best = e
            if best is not None:
                best.limiter._take()  # synchronous: the pool is the only user of the endpoint's limiter
                return best
            wake = [e.down_until - now for e in self.endpoints if e.down_until > now]
            event = self._event()
            event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(wake) if wake else None)

    def _release(self, e: Endpoint) -> None:
        e.limiter.release()
        self._event().set()

    def _failed(self, e: Endpoint, err: BaseException) -> None:
        e.failures += 1
        e.consecutive += 1
        if e.down_until > time.monotonic():
            return  # already out (other requests in flight failed with it)
        if e.probing or isinstance(err, ConnectionFailedError) or e.consecutive >= self.fail_threshold:
            e.cooldown = min(self.max_cooldown_s, e.cooldown * 2 if e.cooldown else self.cooldown_s)
            e.down_until = time.monotonic() + e.cooldown
            e.probing = True  # when the cool-down ends: one request at a time until one succeeds
            e.taken_out += 1
            self._event().set()  # waiters re-pick (another endpoint may be free)

    def _succeeded(self, e: Endpoint) -> None:
        e.answered += 1
        e.consecutive = 0
        if e.probing:
            e.probing, e.cooldown = False, 0.0
            self._event().set()  # its full window is open again

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion:
        e = await self._take()
        e.requests += 1
        t0 = time.monotonic()
        try:
            out = await e.backend.generate(prompt, options, sample)
        except RateLimitedError:
            e.limiter.on_rate_limited()  # this server is saturated: its window shrinks, the others' do not
            raise
        except (ConnectionFailedError, RequestTimeoutError, ServerError) as err:
            e.limiter.on_server_error()
            self._failed(e, err)
            raise
        finally:
            self._release(e)
        took = time.monotonic() - t0
        e.latency_s = took if not e.latency_s else 0.8 * e.latency_s + 0.2 * took
        e.limiter.on_success()
        self._succeeded(e)
        out.raw["endpoint"] = e.url
        return out
