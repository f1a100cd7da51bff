"""The purgatory: requests parked until the partitions they wait on move (Kafka's DelayedOperationPurgatory).

Two kinds of request park here: a Fetch that has fewer than `min_bytes` to return (it waits up to `max_wait_ms`), and
an acks=-1 Produce whose batches are not yet fsynced and replicated to the ISR (it waits up to its `timeout_ms`).
Each watches the topic-partitions it is about. Whatever moves a partition (an append, a high watermark or a follower's
log end going up, an fsync round ending, a leadership change, a truncation) calls `wake(tp)`, which wakes exactly the
requests watching `tp`; each then re-checks its own condition, a plain synchronous function of partition state. An
append as leader calls `wake_appended(tp)`, which skips the acks=-1 produces: none can be completed by an append. So
the cost of an append is independent of how many other partitions and parked requests exist. Incremental fetch
sessions also listen to their partitions here (`listen`), parked or not: a wake tells them which partitions to read
next (kbroker/replication/fetch_session.py). So every change that can alter a fetch's answer must wake its partition,
including those no parked request waits for (a log start moved by retention, a log gone offline, an ISR change).

Deadlines are the expiration reaper's (`run_expiration_reaper`, Kafka's name): one task sleeps until the earliest
deadline of the parked requests and expires those due, so a parked request holds no deadline of its own in trio.
(A cancel scope with a deadline, entered and left by every parked request, cost ~6.5 µs in a warm loop, and an
acks=-1 produce parks once per request.) Without the reaper running (a ReplicaManager driven alone in a test), each
parked request keeps its own deadline.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Protocol

import trio

from kbroker.common import TopicPartition


class _Watcher:
    """One parked request. A wake before the request waits is not lost: the event stays set until it waits."""

    __slots__ = ("_event", "done", "expired", "woken", "woken_by_appends")

    def __init__(self, woken_by_appends: bool) -> None:
        self.woken_by_appends = woken_by_appends
        """Whether an append to a watched partition can complete it (a fetch can; an acks=-1 produce cannot)."""
        self._event = trio.Event()
        self.woken = False
        """Whether it was ever woken (a wake at the deadline is not lost: the caller checks this)."""
        self.expired = False
        """Its deadline passed (set by the expiration reaper)."""
        self.done = False
        """No longer parked: its entry in the reaper's heap is stale."""

    def wake(self) -> None:
        self.woken = True
        self._event.set()

    def expire(self) -> None:
        self.expired = True
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event = trio.Event()


class PartitionListener(Protocol):
    """Told of every wake of a partition it listens to, for as long as it listens (an incremental fetch session:
    kbroker/replication/fetch_session.py), whether or not a request is parked."""

    def partition_changed(self, tp: TopicPartition) -> None: ...


class Purgatory:
    def __init__(self) -> None:
        self._watchers: dict[TopicPartition, set[_Watcher]] = {}
        self._listeners: dict[TopicPartition, set[PartitionListener]] = {}
        self.wakes = 0
        """How many times a parked request was woken (for tests and metrics)."""
        # The expiration reaper's: parked requests by deadline (entries of requests no longer parked are left in
        # place, counted in `_stale`, and dropped when they reach the top or outnumber the others), and the cancel
        # scope of its sleep while it runs.
        self._timeouts: list[tuple[float, int, _Watcher]] = []
        self._stale = 0
        self._sequence = itertools.count()
        self._reaper: trio.CancelScope | None = None
        self._reaping = False

    async def run_expiration_reaper(self) -> None:
        """Expire parked requests when their deadline passes, until cancelled; then every one still parked."""
        self._reaping = True
        try:
            while True:
                with trio.CancelScope(deadline=self._next_deadline()) as self._reaper:
                    await trio.sleep_forever()
                self._reaper = None
                self._expire(trio.current_time())
        finally:
            self._reaper = None
            self._reaping = False
            self._expire(math.inf)

    def _next_deadline(self) -> float:
        timeouts = self._timeouts
        while timeouts and timeouts[0][2].done:
            heapq.heappop(timeouts)
            self._stale -= 1
        return timeouts[0][0] if timeouts else math.inf

    def _expire(self, now: float) -> None:
        timeouts = self._timeouts
        while timeouts and (timeouts[0][0] <= now or timeouts[0][2].done):
            _, _, watcher = heapq.heappop(timeouts)
            if watcher.done:
                self._stale -= 1
            else:
                watcher.done = True
                watcher.expire()

    def _add_timeout(self, watcher: _Watcher, deadline: float) -> None:
        heapq.heappush(self._timeouts, (deadline, next(self._sequence), watcher))
        reaper = self._reaper
        if reaper is not None and deadline < reaper.deadline:
            reaper.deadline = deadline

    def _unpark(self, watcher: _Watcher) -> None:
        if watcher.done:  # expired: the reaper has taken its entry out
            return
        watcher.done = True
        self._stale += 1
        if self._stale > 64 and self._stale * 2 > len(self._timeouts):
            self._timeouts = [entry for entry in self._timeouts if not entry[2].done]
            heapq.heapify(self._timeouts)
            self._stale = 0

    def wake(self, tp: TopicPartition) -> None:
        """`tp` moved: every request watching it looks again, and every listener of it is told."""
        self._wake(tp, every=True)

    def wake_appended(self, tp: TopicPartition) -> None:
        """Records were appended to `tp` as its leader: `wake`, but for the requests an append cannot complete
        (parked with `woken_by_appends=False`: acks=-1 produces, which wait for an fsync round and the high
        watermark; an append moves the high watermark only with an ISR of one, and then past the produces already
        parked). So Kafka's append checks its fetch purgatory, not its produce purgatory."""
        self._wake(tp, every=False)

    def _wake(self, tp: TopicPartition, every: bool) -> None:
        watchers = self._watchers.get(tp)
        if watchers:
            for watcher in watchers:
                if every or watcher.woken_by_appends:
                    self.wakes += 1
                    watcher.wake()
        listeners = self._listeners.get(tp)
        if listeners:
            for listener in list(listeners):
                listener.partition_changed(tp)

    def listen(self, tp: TopicPartition, listener: PartitionListener) -> None:
        self._listeners.setdefault(tp, set()).add(listener)

    def unlisten(self, tp: TopicPartition, listener: PartitionListener) -> None:
        listeners = self._listeners.get(tp)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[tp]

    def listening(self, tp: TopicPartition) -> int:
        """How many listeners `tp` has (for tests)."""
        return len(self._listeners.get(tp, ()))

    def watching(self, tp: TopicPartition) -> int:
        """How many parked requests watch `tp` (for tests and metrics)."""
        return len(self._watchers.get(tp, ()))

    async def wait_until(
        self,
        keys: Iterable[TopicPartition],
        is_complete: Callable[[], bool],
        deadline: float,
        *,
        woken_by_appends: bool = True,
    ) -> bool:
        """Park until `is_complete()` (checked now, then after every wake of one of `keys`) or trio's clock
        reaches `deadline`. Returns whether it completed."""
        completed, _ = await self.park(keys, is_complete, deadline, woken_by_appends=woken_by_appends)
        return completed

    async def park(
        self,
        keys: Iterable[TopicPartition],
        is_complete: Callable[[], bool],
        deadline: float,
        *,
        woken_by_appends: bool = True,
    ) -> tuple[bool, bool]:
        """`wait_until`, also saying whether any of `keys` was woken meanwhile: if none was, nothing the request
        watches has moved since it parked (a long-polling fetch can answer with what it read when it came in)."""
        if is_complete():
            return True, False
        watcher = _Watcher(woken_by_appends)
        watched = list(dict.fromkeys(keys))
        for key in watched:
            self._watchers.setdefault(key, set()).add(watcher)
        reaped = self._reaping
        try:
            if reaped:
                self._add_timeout(watcher, deadline)
                while True:
                    await watcher.wait()
                    if watcher.expired:
                        break
                    if is_complete():
                        return True, True
            else:
                with trio.move_on_at(deadline):
                    while True:
                        await watcher.wait()
                        if is_complete():
                            return True, True
        finally:
            if reaped:
                self._unpark(watcher)
            for key in watched:
                watchers = self._watchers.get(key)
                if watchers is not None:
                    watchers.discard(watcher)
                    if not watchers:
                        del self._watchers[key]
        if not watcher.woken:
            return False, False
        return is_complete(), True
