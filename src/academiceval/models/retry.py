"""Retries for model calls: exponential backoff with full jitter on transient errors, honouring Retry-After.

Only `TransientBackendError`s (429, 5xx, timeouts, connection failures, garbled bodies) are retried; a
context-length error or an empty answer will not change on retry and is returned to the caller at once. Each
attempt holds a concurrency slot only while the request is in flight, never while sleeping, and reports its
outcome to the `AdaptiveLimiter` (429 shrinks the window, 5xx pauses growth).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from academiceval.models.base import Backend, Completion, GenerationOptions
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import RateLimitedError, ServerError, TransientBackendError
from academiceval.store.models import Sample

DEFAULT_MAX_WAIT_S = 300.0  # `run --max-wait`: the most one request may spend waiting between its attempts
SHOW_WAIT_S = 5.0  # waits at least this long are reported to `on_wait` (the progress line shows them)

WaitFn = Callable[[float, BaseException], None]  # (seconds about to be waited, the error that caused it)


@dataclass(frozen=True)
class RetryPolicy:
    """How one request is retried. `max_wait_s` bounds the total time a request spends *waiting* between its
    attempts: a `Retry-After` (or a backoff) that would take it past the bound ends the request at once with the
    error it kept getting (`rate_limited` for a 429, `malformed_response` for a garbled body; retryable: a rerun
    asks again), so a server answering `Retry-After: 86400` never makes a run sit silent for hours. Waits of
    `show_wait_s` or more are reported to `on_wait` before they start."""

    max_attempts: int = 6
    initial_s: float = 0.5
    max_backoff_s: float = 60.0
    max_wait_s: float = DEFAULT_MAX_WAIT_S
    show_wait_s: float = SHOW_WAIT_S
    on_wait: WaitFn | None = field(default=None, compare=False)

    def wait(self, state: RetryCallState, rng: random.Random | None = None) -> float:
        """Retry-After when the server gave one, else full-jitter exponential backoff."""
        exc = state.outcome.exception() if state.outcome else None
        after = getattr(exc, "retry_after", None)
        if after is not None:
            return float(after)
        cap = min(self.max_backoff_s, self.initial_s * (2 ** (state.attempt_number - 1)))
        return (rng or random).uniform(0, cap)


class _WaitBudget:
    """The waiting left to one request; `before_sleep` gives up (with the last error's kind) instead of overrunning
    it."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.left = policy.max_wait_s

    def spend(self, seconds: float, error: BaseException) -> None:
        if seconds > self.left:
            asked = getattr(error, "retry_after", None)
            why = (
                f"the server asked to wait {asked:g} s (Retry-After)"
                if asked is not None
                else f"waiting {seconds:.0f} s more after: {error}"
            )
            # the request ends with the error it kept getting (a garbled answer stays malformed_response, a 5xx
            # server_error); only a wait the server asked for on a 429 — or an error of no known kind — is rate_limited
            kind = type(error) if isinstance(error, TransientBackendError) else RateLimitedError
            raise kind(
                f"gave up: {why}, past the wait limit of {self.policy.max_wait_s:g} s",
                hint="rerun later (this sample is requested again) or raise --max-wait",
                retry_after=asked,
                status=getattr(error, "status", None),
            ) from None
        self.left -= seconds
        if self.policy.on_wait is not None and seconds >= self.policy.show_wait_s:
            self.policy.on_wait(seconds, error)


@dataclass(slots=True)
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


_DEFAULT_POLICY = RetryPolicy()


async def attempt(
    backend: Backend,
    prompt: str,
    options: GenerationOptions,
    sample: Sample | None,
    limiter: AdaptiveLimiter | None,
    stats: RetryStats,
) -> Completion:
    """One attempt: a limiter slot held only while the request is in flight, its outcome reported to the limiter."""
    stats.attempts += 1
    if limiter is None:
        return await backend.generate(prompt, options, sample)
    if not limiter.try_acquire():
        await limiter.acquire()
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
    finally:
        limiter.release()
    limiter.on_success()
    return result


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
    policy = policy or _DEFAULT_POLICY
    stats = stats if stats is not None else RetryStats()
    try:  # the common case, without tenacity's per-call set-up (it costs more than the request on loopback)
        return await attempt(backend, prompt, options, sample, limiter, stats)
    except TransientBackendError as first:
        if policy.max_attempts <= 1:
            raise
        first_error = first
    return await retry_after(first_error, backend, prompt, options, sample, limiter=limiter, policy=policy, stats=stats)


async def retry_after(
    first_error: TransientBackendError,
    backend: Backend,
    prompt: str,
    options: GenerationOptions,
    sample: Sample | None = None,
    *,
    limiter: AdaptiveLimiter | None,
    policy: RetryPolicy,
    stats: RetryStats,
) -> Completion:
    """The attempts after a first one that failed with `first_error` (transient; `policy.max_attempts` > 1):
    `generate_with_retry` past its first attempt. `models.generate.Generator` makes the first attempt itself (one
    coroutine layer less per request) and comes here only when it failed."""
    budget = _WaitBudget(policy)
    state = RetryCallState(None, None, (), {})
    state.attempt_number = 1
    state.set_exception((type(first_error), first_error, first_error.__traceback__))
    first_wait = policy.wait(state)
    budget.spend(first_wait, first_error)
    stats.retries += 1
    await asyncio.sleep(first_wait)

    def before_sleep(st: RetryCallState) -> None:
        budget.spend(st.next_action.sleep if st.next_action else 0.0, st.outcome.exception())
        stats.retries += 1

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts - 1),
        wait=lambda st: policy.wait(_shifted(st)),
        retry=retry_if_exception_type(TransientBackendError),
        reraise=True,
        before_sleep=before_sleep,
    )
    return await retrying(attempt, backend, prompt, options, sample, limiter, stats)


def _shifted(state: RetryCallState) -> RetryCallState:
    """Tenacity counts from the second attempt here (the first ran outside it): shift for the backoff."""
    shifted = RetryCallState(state.retry_object, state.fn, state.args, state.kwargs)
    shifted.attempt_number = state.attempt_number + 1
    shifted.outcome = state.outcome
    return shifted
