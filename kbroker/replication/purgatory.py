"""The purgatory: requests parked until the partitions they wait on move (Kafka's DelayedOperationPurgatory).

Two kinds of request park here: a Fetch that has fewer than `min_bytes` to return (it waits up to `max_wait_ms`), and
an acks=-1 Produce whose batches are not yet fsynced and replicated to the ISR (it waits up to its `timeout_ms`).
Each watches the topic-partitions it is about. Whatever moves a partition (an append, a high watermark or a follower's
log end going up, an fsync round ending, a leadership change, a truncation) calls `wake(tp)`, which wakes exactly the
requests watching `tp`; each then re-checks its own condition, a plain synchronous function of partition state. So
the cost of an append is independent of how many other partitions and parked requests exist. Incremental fetch
sessions also listen to their partitions here (`listen`), parked or not: a wake tells them which partitions to read
next (kbroker/replication/fetch_session.py). So every change that can alter a fetch's answer must wake its partition,
including those no parked request waits for (a log start moved by retention, a log gone offline, an ISR change).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

import trio

from kbroker.common import TopicPartition


class _Watcher:
    """One parked request. A wake before the request waits is not lost: the event stays set until it waits."""

    __slots__ = ("_event", "woken")

    def __init__(self) -> None:
        self._event = trio.Event()
        self.woken = False
        """Whether it was ever woken (a wake at the deadline is not lost: the caller checks this)."""

    def wake(self) -> None:
        self.woken = True
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

    def wake(self, tp: TopicPartition) -> None:
        """`tp` moved: every request watching it looks again, and every listener of it is told."""
        watchers = self._watchers.get(tp)
        if watchers:
            self.wakes += len(watchers)
            for watcher in watchers:
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
        self, keys: Iterable[TopicPartition], is_complete: Callable[[], bool], deadline: float
    ) -> bool:
        """Park until `is_complete()` (checked now, then after every wake of one of `keys`) or trio's clock
        reaches `deadline`. Returns whether it completed."""
        completed, _ = await self.park(keys, is_complete, deadline)
        return completed

    async def park(
        self, keys: Iterable[TopicPartition], is_complete: Callable[[], bool], deadline: float
    ) -> tuple[bool, bool]:
        """`wait_until`, also saying whether any of `keys` was woken meanwhile: if none was, nothing the request
        watches has moved since it parked (a long-polling fetch can answer with what it read when it came in)."""
        if is_complete():
            return True, False
        watcher = _Watcher()
        watched = list(dict.fromkeys(keys))
        for key in watched:
            self._watchers.setdefault(key, set()).add(watcher)
        try:
            with trio.move_on_at(deadline):
                while True:
                    await watcher.wait()
                    if is_complete():
                        return True, True
        finally:
            for key in watched:
                watchers = self._watchers.get(key)
                if watchers is not None:
                    watchers.discard(watcher)
                    if not watchers:
                        del self._watchers[key]
        if not watcher.woken:
            return False, False
        return is_complete(), True
