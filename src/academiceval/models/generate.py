"""The one model-call path: response cache → (an identical call already in flight) → retries → backend.

Both the runner (`runs.worker`) and the LLM judge (`scores.judge`) call a model through a `Generator`, so a
prompt is keyed, cached, retried and throttled the same way wherever it comes from:

1. the cache key is `models.cache.cache_key(backend.cache_identity(), options, sha256(prompt))` — plus a digest of
   the sample for backends whose answer depends on it (`Capabilities.reads_sample`, the baselines);
2. a cached answer is returned without touching the backend (`Generated.source == "cache"`);
3. a call whose key is already in flight awaits that call's outcome instead of sending the request again
   (`"shared"`);
4. otherwise it asks the backend as `models.retry.generate_with_retry` does: transient errors are retried with
   full-jitter backoff or the server's Retry-After, each attempt holding a slot of the `AdaptiveLimiter` (when
   given) only while it is in flight;
5. a non-empty answer is written to the cache; errors never are (a transient one must be retried, a permanent
   one is the caller's to record).

The outcome comes back as a `Generated` (the completion or the final error, where it came from, the attempts and
the latency) rather than as an exception, because the runner records failures as data; `Generated.unwrap()`
raises for callers that prefer exceptions (the judge). The shape follows inspect_ai's `model/_cache.py` (key =
identity + options + input) and `model/_retry.py` (Retry-After first, then exponential backoff).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal

from academiceval.models.base import Backend, Capabilities, Completion, GenerationOptions
from academiceval.models.cache import ResponseCache, key_from_prefix, key_prefix
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import TransientBackendError
from academiceval.models.retry import RetryPolicy, RetryStats, attempt, retry_after
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample

Outcome = Completion | BaseException
Source = Literal["backend", "cache", "shared"]


@dataclass(slots=True)
class Generated:
    """What one call produced. Exactly one of `completion` / `error` is set."""

    key: str
    completion: Completion | None = None
    error: BaseException | None = None
    source: Source = "backend"  # "cache": a stored answer; "shared": the answer of an identical call in flight
    attempts: int = 0  # requests sent for this call (0 for cache and shared)
    latency_s: float = 0.0
    committed: bool = True  # a cache hit's row is durable (False: written by this process, not yet committed)

    @property
    def outcome(self) -> Outcome:
        return self.completion if self.completion is not None else self.error

    @property
    def cached(self) -> bool:
        return self.source != "backend"

    def unwrap(self) -> Completion:
        """The completion, or raise the call's final error."""
        if self.completion is None:
            raise self.error
        return self.completion


def text_of(result: object) -> str:
    """The answer text of `backend.generate(...)` (a Completion) or of `Generator.generate(...)` (a Generated,
    unwrapped: its error is raised), for callers that accept either."""
    unwrap = getattr(result, "unwrap", None)
    completion = unwrap() if callable(unwrap) else result
    return str(getattr(completion, "text", "") or "")


def prompt_digest(prompt: str) -> str:
    return sha256_hex(prompt)


class Generator:
    """A backend behind the response cache, the retry policy and (optionally) an adaptive concurrency limit.

    Lives on one event loop at a time (cache and in-flight table are touched from the loop thread only); it may be
    reused by successive `asyncio.run`s as long as no call is left in flight between them. `stats` accumulates the
    attempts, retries, 429s, 5xx and timeouts of every call."""

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        limiter: AdaptiveLimiter | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.backend = backend
        self.capabilities: Capabilities = backend.capabilities
        self.identity = backend.cache_identity()
        self.cache = cache
        self.limiter = limiter
        self.policy = policy or RetryPolicy()
        self.stats = RetryStats()
        # key -> the future twins await; None while no twin has asked (most calls have none: no future is made)
        self._inflight: dict[str, asyncio.Future[Outcome] | None] = {}

    # ---- keys ------------------------------------------------------------------------------------------
    def prefix(self, options: GenerationOptions) -> bytes:
        """The part of the key fixed by the backend and the options (callers with many prompts keep it)."""
        return key_prefix(self.identity, options)

    def key(self, prefix: bytes, prompt_sha256: str, sample: Sample | None = None) -> str:
        """`cache_key(identity, options, prompt_sha256)`; for a backend that reads the sample, the sample's
        digest is part of the key too (two samples rendered to the same prompt may get different answers)."""
        if self.capabilities.reads_sample and sample is not None:
            digest = sha256_hex(sample.model_dump_json())
            return key_from_prefix(prefix, f"{prompt_sha256}|sample:{digest}")
        return key_from_prefix(prefix, prompt_sha256)

    # ---- the call --------------------------------------------------------------------------------------
    async def generate(
        self,
        prompt: str,
        options: GenerationOptions,
        sample: Sample | None = None,
        *,
        key: str | None = None,
        prompt_sha256: str | None = None,
    ) -> Generated:
        """cache → shared in-flight call → retried request → cache. Never raises a call's error (see
        `Generated.unwrap`); cancellation propagates.

        `sample` is what the backend sees (baselines read it). `key` / `prompt_sha256` may be passed by callers
        that computed them already (the runner keys a sample by its original fields while a RAG baseline sees
        what retrieval kept)."""
        sha = prompt_sha256 or prompt_digest(prompt)
        if key is None:
            key = self.key(self.prefix(options), sha, sample)
        cache = self.cache
        if cache is not None:
            hit = cache.get(key)
            if hit is not None:
                return Generated(key, hit, source="cache", committed=cache.is_committed(key))
        if key in self._inflight:  # the same request is already in flight for another caller
            twin = self._inflight[key]
            if twin is None:
                twin = self._inflight[key] = asyncio.get_running_loop().create_future()
            out = await asyncio.shield(twin)
            return _generated(key, out, source="shared")
        self._inflight[key] = None
        t0 = time.perf_counter()
        mine = RetryStats()
        try:
            # `generate_with_retry` unrolled into this coroutine (two coroutine layers less per request): the first
            # attempt made here, the attempts after a transient error by `retry_after`
            try:
                out: Outcome = await attempt(self.backend, prompt, options, sample, self.limiter, mine)
            except TransientBackendError as first:
                if self.policy.max_attempts <= 1:
                    raise
                out = await retry_after(
                    first, self.backend, prompt, options, sample, limiter=self.limiter, policy=self.policy, stats=mine
                )
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a backend bug must not sink the caller's batch: it becomes the outcome
            out = e
        finally:
            self.stats.merge(mine)
            fut = self._inflight.pop(key)
        if cache is not None and isinstance(out, Completion) and out.text and out.text.strip():
            cache.put(key, self.identity, sha, out)
        if fut is not None:
            fut.set_result(out)
        return _generated(key, out, source="backend", attempts=mine.attempts, latency_s=time.perf_counter() - t0)


def _generated(key: str, out: Outcome, *, source: Source, attempts: int = 0, latency_s: float = 0.0) -> Generated:
    if isinstance(out, Completion):
        return Generated(key, out, source=source, attempts=attempts, latency_s=latency_s)
    return Generated(key, error=out, source=source, attempts=attempts, latency_s=latency_s)
