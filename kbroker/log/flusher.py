"""Group commit: many concurrent produces share one fsync per log.

`await committer.wait_durable(log, end_offset)` returns once every offset below `end_offset` of `log` is fsynced.
One background task (`run`, started in the broker's nursery) repeatedly takes every log that has waiters, captures
a flush plan for each (on the trio thread), runs all the fsyncs in one worker thread, then wakes the waiters. While
that fsync runs, new waiters queue up for the next round, so the number of fsyncs follows the disk's speed, not the
request rate.

An fsync error takes the log offline and fails its waiters with KAFKA_STORAGE_ERROR. The flush is never retried:
after a failed fsync the kernel may have dropped the dirty pages, so a later "successful" fsync would acknowledge
data that is not on disk.
"""

from __future__ import annotations

import logging

import trio

from kbroker.log.errors import LogError
from kbroker.log.partition_log import FlushPlan, PartitionLog
from protocol.errors import ErrorCode

logger = logging.getLogger(__name__)


class _Waiter:
    __slots__ = ("end_offset", "error", "event", "truncations")

    def __init__(self, end_offset: int, truncations: int) -> None:
        self.end_offset = end_offset
        # the log's truncation count when the wait began: if it changes, the offsets may name other data
        self.truncations = truncations
        self.event = trio.Event()
        self.error: LogError | None = None


def _execute_all(plans: list[FlushPlan | None]) -> list[BaseException | None]:
    """Worker thread: run every plan, collecting each one's error instead of stopping at the first."""
    errors: list[BaseException | None] = []
    for plan in plans:
        if plan is None:
            errors.append(None)
            continue
        try:
            plan.execute()
        except Exception as e:
            errors.append(e)
        else:
            errors.append(None)
    return errors


class GroupCommitter:
    def __init__(self) -> None:
        self._waiters: dict[PartitionLog, list[_Waiter]] = {}
        self._work = trio.Event()
        # Rounds of fsyncs done so far: lets tests (and metrics) see how many produces shared one.
        self.rounds = 0

    async def wait_durable(self, log: PartitionLog, end_offset: int) -> None:
        """Return once `log` is fsynced up to `end_offset` (exclusive: pass AppendInfo.last_offset + 1).

        Raises LogError with KAFKA_STORAGE_ERROR if the log is or goes offline.
        """
        if log.offline:
            raise LogError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {log.name} is offline after a disk error"
            )
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
        logs = list(pending)
        plans: list[FlushPlan | None] = []
        for log in logs:
            try:
                plans.append(log.begin_flush())
            except LogError as e:
                plans.append(None)
                self._fail(pending[log], e)
        # Not cancellable: an fsync in flight must finish before its outcome can be known, and the plans' file
        # descriptors are closed by the worker.
        errors = await trio.to_thread.run_sync(_execute_all, plans)
        self.rounds += 1
        for log, plan, error in zip(logs, plans, errors, strict=True):
            if plan is None:
                continue
            if error is not None:
                self._fail(pending[log], log.fail_flush(error))
                continue
            log.end_flush(plan)
            for waiter in pending[log]:
                if waiter.truncations != log.truncations:
                    # Only a leader that became a follower truncates: its unacknowledged writes may be gone.
                    waiter.error = LogError(
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

    @staticmethod
    def _fail(waiters: list[_Waiter], error: LogError) -> None:
        for waiter in waiters:
            waiter.error = error
            waiter.event.set()
