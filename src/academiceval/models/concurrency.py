"""Adaptive concurrency (AIMD): how many requests may be in flight right now.

A 429 means the server (or the provider's quota) is saturated: halve the window, at most once per
`cooldown_s` so a burst of 429s from the same saturated moment counts once. After `limit` successes in a row
the window grows by one, back up to `max_limit`. Server errors (5xx) pause growth without shrinking — they say
something is wrong, not that we are too fast. Kept apart from retries (`models.retry`), like inspect_ai.

The limiter lives on one event loop (no locks needed): a free slot is taken synchronously, otherwise the caller
waits in FIFO order and a release hands its slot straight to the oldest waiter.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from types import TracebackType


class AdaptiveLimiter:
    def __init__(self, max_limit: int = 16, *, min_limit: int = 1, cooldown_s: float = 1.0, decrease: float = 0.5):
        if max_limit < 1:
            raise ValueError("max_limit must be >= 1")
        self.max_limit = max_limit
        self.min_limit = max(1, min(min_limit, max_limit))
        self.limit = max_limit
        self.cooldown_s = cooldown_s
        self.decrease = decrease
        self.in_flight = 0
        self.peak_in_flight = 0
        self.shrinks = 0
        self._successes = 0
        self._last_shrink = -1e9
        self._growth_paused_until = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_acquire(self) -> bool:
        """Take a free slot without waiting; False when the caller must `await acquire()` (FIFO behind waiters)."""
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # the slot was taken for us by `_wake`
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted just as we were cancelled: give it back
            else:
                self._waiters.remove(fut)
            raise

    def _take(self) -> None:
        self.in_flight += 1
        if self.in_flight > self.peak_in_flight:
            self.peak_in_flight = self.in_flight

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self._take()
                fut.set_result(None)

    async def __aenter__(self) -> AdaptiveLimiter:
        await self.acquire()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    # ---- feedback ---------------------------------------------------------------------------------
    def on_success(self) -> None:
        if self.limit >= self.max_limit or time.monotonic() < self._growth_paused_until:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._wake()

    def on_rate_limited(self) -> None:
        now = time.monotonic()
        self._successes = 0
        if now - self._last_shrink < self.cooldown_s:
            return
        self._last_shrink = now
        new = max(self.min_limit, int(self.limit * self.decrease))
        if new < self.limit:
            self.limit = new
            self.shrinks += 1

    def on_server_error(self) -> None:
        self._successes = 0
        self._growth_paused_until = time.monotonic() + self.cooldown_s
