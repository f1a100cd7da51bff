"""The one clock of the broker: wall-clock milliseconds, injected wherever time decides something.

Log retention, segment rolls, ISR lag, follower fetch times, the group coordinator's session timeouts and committed
offsets' expiry all read `clock.now_ms()`; waiting is always trio's (`trio.sleep`, cancel scopes). The broker runs on
`SystemClock`. Tests run under trio's `MockClock` with a `TrioClock`, whose milliseconds advance with trio's virtual
time, so every timeout above is testable without sleeping.
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


class SystemClock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)


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
