"""The one clock of the broker: wall-clock milliseconds, injected wherever time decides something.

Log retention, segment rolls, record timestamps (LogAppendTime) and SASL session lifetimes read `clock.now_ms()`.
What measures a duration between two moments of this process (ISR lag and follower fetch times, the group
coordinator's session and rebalance timeouts, committed offsets' expiry) reads a `SteadyClock` over it instead: wall
time as of its first use, advanced by the monotonic clock, so that a step of the system clock (NTP, a VM resumed, `date
-s`) neither expires a live group member or in-sync follower nor keeps a dead one for as long as the clock went back.
Waiting is always trio's (`trio.sleep`, cancel scopes). The broker runs on `SystemClock`. Tests run under trio's
`MockClock` with a `TrioClock`, whose milliseconds advance with trio's virtual time, so every timeout above is testable
without sleeping.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import trio


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the epoch (record timestamps and committed offsets store it, so it is wall time)."""
        ...

    def monotonic_ms(self) -> int:
        """Milliseconds on a clock that never jumps (its origin is arbitrary): for durations only."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def monotonic_ms(self) -> int:
        return int(time.monotonic() * 1000)


class TrioClock:
    """Wall-clock milliseconds taken once, then advanced by trio's clock (virtual under MockClock).

    Call it from inside `trio.run` only.
    """

    def __init__(self, start_ms: int | None = None) -> None:
        self._start_ms = start_ms
        self._trio_start: float | None = None

    def now_ms(self) -> int:
        now = trio.current_time()
        if self._trio_start is None:
            self._trio_start = now
            if self._start_ms is None:
                self._start_ms = int(time.time() * 1000)
        assert self._start_ms is not None
        return self._start_ms + math.floor((now - self._trio_start) * 1000)

    def monotonic_ms(self) -> int:
        return math.floor(trio.current_time() * 1000)


class SteadyClock:
    """`clock`'s wall time when first asked, advanced since by its monotonic time: wall-clock milliseconds (close to
    the real ones, stored in commit timestamps) that never jump when the system clock is stepped."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._origin: tuple[int, int] | None = None  # (wall, monotonic) at the first call

    def now_ms(self) -> int:
        monotonic = self._clock.monotonic_ms()
        if self._origin is None:
            self._origin = (self._clock.now_ms(), monotonic)
        wall, start = self._origin
        return wall + monotonic - start

    def monotonic_ms(self) -> int:
        return self._clock.monotonic_ms()
