"""Group commit: many concurrent produces share one fsync per log.

Two ways in: `request_flush(log, end_offset)` asks for a flush and returns at once (an acks=-1 produce, which then
waits in the purgatory for its partition to move: `on_flushed` is called for every log a round flushed, or failed
to), and `await wait_durable(log, end_offset)` returns once every offset below `end_offset` of `log` is fsynced (a
follower before it fetches more). One background task (`run`, started in the broker's nursery) repeatedly takes
every log with a request or a waiter, captures a flush plan for each (on the trio thread), runs all the fsyncs in
one worker thread, then wakes the waiters. While that fsync runs, new requests queue up for the next round, so the
number of fsyncs follows the disk's speed, not the request rate.

An fsync error takes the log offline and fails its waiters with KAFKA_STORAGE_ERROR. The flush is never retried:
after a failed fsync the kernel may have dropped the dirty pages, so a later "successful" fsync would acknowledge
data that is not on disk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import trio

from kbroker.common import KafkaError
from kbroker.log.partition_log import FlushPlan, PartitionLog
from kbroker.stats import LatencyHistogram
from protocol.errors import ErrorCode

logger = logging.getLogger(__name__)


class _Waiter:
    __slots__ = ("end_offset", "error", "event", "truncations")

    def __init__(self, end_offset: int, truncations: int) -> None:
        self.end_offset = end_offset
        # the log's truncation count when the wait began: if it changes, the offsets may name other data
        self.truncations = truncations
        self.event = trio.Event()
        self.error: KafkaError | None = None


def _execute_all(
    plans: list[FlushPlan | None], fsync_seconds: LatencyHistogram
) -> list[BaseException | None]:
    """Worker thread: run every plan, collecting each one's error instead of stopping at the first. Each plan's
    time goes into `fsync_seconds` (Kafka's LogFlushRateAndTimeMs); only this thread touches it during a round."""
    errors: list[BaseException | None] = []
    for plan in plans:
        if plan is None:
            errors.append(None)
            continue
        started = time.perf_counter()
        try:
            plan.execute()
        except Exception as e:
            errors.append(e)
        else:
            errors.append(None)
        fsync_seconds.observe(time.perf_counter() - started)
    return errors


def _offline_error(log: PartitionLog) -> KafkaError:
    return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {log.name} is offline after a disk error")


class GroupCommitter:
    def __init__(self, on_flushed: Callable[[PartitionLog], None] | None = None) -> None:
        self._waiters: dict[PartitionLog, list[_Waiter]] = {}
        self._requests: dict[PartitionLog, int] = {}
        self._work = trio.Event()
        self._on_flushed = on_flushed
        # Rounds of fsyncs done so far: lets tests (and metrics) see how many produces shared one.
        self.rounds = 0
        self.fsync_seconds = LatencyHistogram()
        """How long each log's flush took (metrics)."""

    def request_flush(self, log: PartitionLog, end_offset: int) -> None:
        """Have `log` fsynced up to `end_offset` (exclusive) soon; `on_flushed(log)` tells when a round ends."""
        if log.offline or log.recovery_point >= end_offset:
            return
        if end_offset > self._requests.get(log, 0):
            self._requests[log] = end_offset
        self._work.set()

    async def wait_durable(self, log: PartitionLog, end_offset: int) -> None:
        """Return once `log` is fsynced up to `end_offset` (exclusive: pass AppendInfo.last_offset + 1).

        Raises KafkaError with KAFKA_STORAGE_ERROR if the log is or goes offline.
        """
        if log.offline:
            raise _offline_error(log)
        if log.recovery_point >= end_offset:
            await trio.lowlevel.checkpoint()
            return
        if end_offset > log.log_end_offset:
            raise ValueError(
                f"cannot wait for offset {end_offset} beyond the log end offset {log.log_end_offset}"
            )
        waiter = _Waiter(end_offset, log.truncations)
        self._waiters.setdefault(log, []).append(waiter)
        self._work.set()
        await waiter.event.wait()
        if waiter.error is not None:
            raise waiter.error

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await self._work.wait()
            self._work = trio.Event()
            await self._flush_round()

    async def _flush_round(self) -> None:
        pending, self._waiters = self._waiters, {}
        requested, self._requests = self._requests, {}
        logs = list(dict.fromkeys([*pending, *requested]))
        plans: list[FlushPlan | None] = []
        for log in logs:
            try:
                plans.append(log.begin_flush())
            except KafkaError as e:
                plans.append(None)
                self._fail(pending.get(log, []), e)
        # Not cancellable: an fsync in flight must finish before its outcome can be known, and the plans' file
        # descriptors are closed by the worker.
        errors = await trio.to_thread.run_sync(_execute_all, plans, self.fsync_seconds)
        self.rounds += 1
        for log, plan, error in zip(logs, plans, errors, strict=True):
            if plan is not None:
                if error is not None:
                    self._fail(pending.get(log, []), log.fail_flush(error))
                else:
                    log.end_flush(plan)
                    self._settle(log, pending.get(log, []), requested.get(log, 0))
            if self._on_flushed is not None:
                self._on_flushed(log)

    def _settle(self, log: PartitionLog, waiters: list[_Waiter], requested: int) -> None:
        for waiter in waiters:
            if waiter.truncations != log.truncations:
                # Only a leader that became a follower truncates: its unacknowledged writes may be gone.
                waiter.error = KafkaError(
                    ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    f"the log of {log.name} was truncated before the write was durable",
                )
                waiter.event.set()
            elif log.recovery_point >= waiter.end_offset:
                waiter.event.set()
            else:
                # Appended after this round's plan was captured.
                self._waiters.setdefault(log, []).append(waiter)
                self._work.set()
        if requested > log.recovery_point:
            self.request_flush(log, min(requested, log.log_end_offset))

    @staticmethod
    def _fail(waiters: list[_Waiter], error: KafkaError) -> None:
        for waiter in waiters:
            waiter.error = error
            waiter.event.set()
