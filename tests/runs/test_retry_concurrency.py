"""Retries (backoff, Retry-After) and adaptive concurrency (AIMD), with fakes where timing must be exact."""

from __future__ import annotations

import asyncio
import random

import pytest
from tenacity import RetryCallState

from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import ContextLengthError, RateLimitedError, ServerError
from academiceval.models.retry import RetryPolicy, RetryStats, generate_with_retry


class ScriptedBackend:
    """Raises the scripted errors in order, then answers; records the peak number of concurrent calls."""

    name, model = "scripted", "m"
    capabilities = Capabilities()

    def __init__(self, script: list[Exception] | None = None, delay: float = 0.0) -> None:
        self.script, self.delay, self.calls, self.active, self.peak = list(script or []), delay, 0, 0, 0

    def cache_identity(self):
        return {"backend": self.name, "model": self.model}

    async def generate(self, prompt, options, sample=None):
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(self.delay)
            if self.script:
                raise self.script.pop(0)
            return Completion(text=f"ok {prompt}")
        finally:
            self.active -= 1

    async def aclose(self):
        pass


FAST = RetryPolicy(max_attempts=4, initial_s=0.001, max_backoff_s=0.004)


def test_policy_wait_honours_retry_after_then_backs_off():
    def state(n, exc):
        s = RetryCallState(None, None, (), {})
        s.attempt_number = n
        s.set_exception((type(exc), exc, None))
        return s

    p = RetryPolicy(initial_s=1.0, max_backoff_s=8.0)
    assert p.wait(state(1, RateLimitedError("x", retry_after=3.5))) == 3.5
    assert p.wait(state(1, RateLimitedError("x", retry_after=900))) == 900  # the bound is max_wait_s (gives up)
    rng = random.Random(0)
    waits = [p.wait(state(n, ServerError("x")), rng) for n in range(1, 8) for _ in range(50)]
    assert all(0 <= w <= 8.0 for w in waits)
    assert max(p.wait(state(1, ServerError("x")), rng) for _ in range(200)) <= 1.0  # cap doubles per attempt
    assert max(p.wait(state(4, ServerError("x")), rng) for _ in range(200)) > 4.0


def test_retries_transient_then_succeeds():
    b = ScriptedBackend([RateLimitedError("429", retry_after=0.0), ServerError("500")])
    stats = RetryStats()
    lim = AdaptiveLimiter(8)
    c = asyncio.run(generate_with_retry(b, "p", GenerationOptions(), limiter=lim, policy=FAST, stats=stats))
    assert c.text == "ok p" and b.calls == 3 and stats.retries == 2 and stats.rate_limited == 1
    assert lim.limit == 4 and lim.in_flight == 0  # halved once by the 429


def test_permanent_error_is_not_retried_and_exhaustion_reraises():
    b = ScriptedBackend([ContextLengthError("too long")])
    with pytest.raises(ContextLengthError):
        asyncio.run(generate_with_retry(b, "p", GenerationOptions(), policy=FAST))
    assert b.calls == 1
    b = ScriptedBackend([ServerError("500")] * 10)
    with pytest.raises(ServerError):
        asyncio.run(generate_with_retry(b, "p", GenerationOptions(), policy=FAST))
    assert b.calls == FAST.max_attempts


def test_limiter_bounds_concurrency():
    b = ScriptedBackend(delay=0.01)
    lim = AdaptiveLimiter(5)

    async def go():
        await asyncio.gather(*(generate_with_retry(b, str(i), GenerationOptions(), limiter=lim) for i in range(40)))

    asyncio.run(go())
    assert b.peak == 5 and lim.peak_in_flight == 5 and b.calls == 40


def test_aimd_shrinks_on_429_and_grows_back():
    lim = AdaptiveLimiter(16, cooldown_s=0.0)
    lim.on_rate_limited()
    assert lim.limit == 8
    lim.on_rate_limited()
    lim.on_rate_limited()
    lim.on_rate_limited()
    lim.on_rate_limited()
    assert lim.limit == 1  # never below min_limit
    successes = 0
    while lim.limit < 16:
        lim.on_success()
        successes += 1
        assert successes < 1000
    assert successes == sum(range(1, 16))  # additive increase: `limit` successes per step
    lim.on_success()
    assert lim.limit == 16  # never above max


def test_burst_of_429s_counts_once_and_5xx_pauses_growth():
    lim = AdaptiveLimiter(16, cooldown_s=60.0)
    for _ in range(10):
        lim.on_rate_limited()
    assert lim.limit == 8 and lim.shrinks == 1
    lim.on_server_error()
    for _ in range(100):
        lim.on_success()
    assert lim.limit == 8


def test_waiters_resume_when_limit_shrinks_and_regrows():
    """After a shrink, excess waiters wait; releases still wake them and everything completes."""
    b = ScriptedBackend([RateLimitedError("429", retry_after=0.0)] * 6, delay=0.002)
    lim = AdaptiveLimiter(6, cooldown_s=0.0)

    async def go():
        return await asyncio.gather(
            *(generate_with_retry(b, str(i), GenerationOptions(), limiter=lim, policy=FAST) for i in range(30))
        )

    out = asyncio.run(go())
    assert len(out) == 30 and lim.in_flight == 0 and lim.shrinks >= 1
