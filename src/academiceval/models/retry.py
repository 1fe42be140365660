"""Retries for model calls: exponential backoff with full jitter on transient errors, honouring Retry-After.

Only `TransientBackendError`s (429, 5xx, timeouts, connection failures, garbled bodies) are retried; a
context-length error or an empty answer will not change on retry and is returned to the caller at once. Each
attempt holds a concurrency slot only while the request is in flight, never while sleeping, and reports its
outcome to the `AdaptiveLimiter` (429 shrinks the window, 5xx pauses growth).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from academiceval.models.base import Backend, Completion, GenerationOptions
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import RateLimitedError, ServerError, TransientBackendError
from academiceval.rounds.models import Sample


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    initial_s: float = 0.5
    max_backoff_s: float = 60.0
    max_retry_after_s: float = 300.0  # a server asking for longer than this is treated as this

    def wait(self, state: RetryCallState, rng: random.Random | None = None) -> float:
        """Retry-After when the server gave one, else full-jitter exponential backoff."""
        exc = state.outcome.exception() if state.outcome else None
        after = getattr(exc, "retry_after", None)
        if after is not None:
            return min(float(after), self.max_retry_after_s)
        cap = min(self.max_backoff_s, self.initial_s * (2 ** (state.attempt_number - 1)))
        return (rng or random).uniform(0, cap)


@dataclass
class RetryStats:
    attempts: int = 0
    retries: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    timeouts: int = 0

    def merge(self, other: RetryStats) -> None:
        self.attempts += other.attempts
        self.retries += other.retries
        self.rate_limited += other.rate_limited
        self.server_errors += other.server_errors
        self.timeouts += other.timeouts


async def generate_with_retry(
    backend: Backend,
    prompt: str,
    options: GenerationOptions,
    sample: Sample | None = None,
    *,
    limiter: AdaptiveLimiter | None = None,
    policy: RetryPolicy | None = None,
    stats: RetryStats | None = None,
) -> Completion:
    """One logical request: up to `policy.max_attempts` attempts. Raises the last error when they run out."""
    policy = policy or RetryPolicy()
    stats = stats if stats is not None else RetryStats()

    async def attempt() -> Completion:
        stats.attempts += 1
        if limiter is None:
            return await backend.generate(prompt, options, sample)
        async with limiter:
            try:
                result = await backend.generate(prompt, options, sample)
            except RateLimitedError:
                stats.rate_limited += 1
                limiter.on_rate_limited()
                raise
            except ServerError:
                stats.server_errors += 1
                limiter.on_server_error()
                raise
            except TransientBackendError as e:
                if e.code == "timeout":
                    stats.timeouts += 1
                raise
        limiter.on_success()
        return result

    try:  # the common case, without tenacity's per-call set-up (it costs more than the request on loopback)
        return await attempt()
    except TransientBackendError as first:
        if policy.max_attempts <= 1:
            raise
        first_error = first
    stats.retries += 1
    state = RetryCallState(None, None, (), {})
    state.attempt_number = 1
    state.set_exception((type(first_error), first_error, first_error.__traceback__))
    await asyncio.sleep(policy.wait(state))
    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts - 1),
        wait=lambda st: policy.wait(_shifted(st)),
        retry=retry_if_exception_type(TransientBackendError),
        reraise=True,
        before_sleep=lambda _s: setattr(stats, "retries", stats.retries + 1),
    )
    return await retrying(attempt)


def _shifted(state: RetryCallState) -> RetryCallState:
    """Tenacity counts from the second attempt here (the first ran outside it): shift for the backoff."""
    shifted = RetryCallState(state.retry_object, state.fn, state.args, state.kwargs)
    shifted.attempt_number = state.attempt_number + 1
    shifted.outcome = state.outcome
    return shifted
