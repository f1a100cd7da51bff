"""Group commit: many concurrent produces share one fsync per log.

Two ways in: `request_flush(log, end_offset)` asks for a flush and returns at once (an acks=-1 produce, which then
waits in the purgatory for its partition to move: `on_flushed` is called for every log a flush made durable, or
failed to), and `await wait_durable(log, end_offset)` returns once every offset below `end_offset` of `log` is
fsynced (a follower before it fetches more).

The committer's task (`run`, started in the broker's nursery) works in rounds: it captures a flush plan (on the
trio thread) for every log with a request or a waiter and hands the round's plans to a small pool of long-lived
flusher threads, which run them side by side; the thread that finishes the round's last plan queues it back and
wakes the task once, which settles every waiter of the round's logs and starts the next round if anything was
appended meanwhile. So requests arriving while a round runs share the next one (the number of fsyncs follows the
disk's speed, not the request rate), no thread is started or handed over per request or per round, and a round
costs about one fsync's latency however many logs it covers: on ext4 (and XFS) concurrent fsyncs join one journal
commit, so they also end together.

An fsync error takes the log offline and fails its waiters with KAFKA_STORAGE_ERROR. The flush is never retried:
after a failed fsync the kernel may have dropped the dirty pages, so a later "successful" fsync would acknowledge
data that is not on disk.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable

import trio

from kbroker.common import KafkaError
from kbroker.log.partition_log import FlushPlan, PartitionLog
from kbroker.stats import LatencyHistogram
from protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

FLUSHER_THREADS = 4
"""Flushes of different logs that can run at once. More add little: their fsyncs share the file system's journal
commits anyway, and the disk's queue is what they wait for."""


class _Waiter:
    __slots__ = ("end_offset", "error", "event", "truncations")

    def __init__(self, end_offset: int, truncations: int) -> None:
        self.end_offset = end_offset
        # the log's truncation count when the wait began: if it changes, the offsets may name other data
        self.truncations = truncations
        self.event = trio.Event()
        self.error: KafkaError | None = None


class _Flush:
    """One log's plan on its way through a flusher thread; `error` and `seconds` are set by the thread."""

    __slots__ = ("error", "log", "plan", "seconds")

    def __init__(self, log: PartitionLog, plan: FlushPlan) -> None:
        self.log = log
        self.plan = plan
        self.error: BaseException | None = None
        self.seconds = 0.0


def _offline_error(log: PartitionLog) -> KafkaError:
    return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {log.name} is offline after a disk error")


class GroupCommitter:
    def __init__(
        self, on_flushed: Callable[[PartitionLog], None] | None = None, threads: int = FLUSHER_THREADS
    ) -> None:
        self._waiters: dict[PartitionLog, list[_Waiter]] = {}
        self._requests: dict[PartitionLog, int] = {}
        self._in_flight: set[PartitionLog] = set()
        self._work = trio.Event()
        self._on_flushed = on_flushed
        self._threads = threads
        # flusher threads take plans from `_plans` and put them, executed, on `_finished`
        self._plans: queue.SimpleQueue[_Flush | None] = queue.SimpleQueue()
        self._finished: collections.deque[_Flush] = collections.deque()
        self._round_size = (
            0  # flushes in the round in flight: the thread that finishes the last one wakes the task
        )
        self._token: trio.lowlevel.TrioToken | None = None
        # Flushes done so far (one log each): lets tests (and metrics) see how many produces shared one.
        self.rounds = 0
        self.fsync_seconds = LatencyHistogram()
        """How long each log's flush took (metrics)."""

    def request_flush(self, log: PartitionLog, end_offset: int) -> None:
        """Have `log` fsynced up to `end_offset` (exclusive) soon; `on_flushed(log)` tells when its flush ends."""
        if log.offline or log.recovery_point >= end_offset:
            return
        if end_offset > self._requests.get(log, 0):
            self._requests[log] = end_offset
            if log not in self._in_flight:
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
        if log not in self._in_flight:
            self._work.set()
        await waiter.event.wait()
        if waiter.error is not None:
            raise waiter.error

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._token = trio.lowlevel.current_trio_token()
        threads = [
            threading.Thread(target=self._flusher_thread, name=f"kbroker-flusher-{i}", daemon=True)
            for i in range(self._threads)
        ]
        for thread in threads:
            thread.start()
        task_status.started()
        try:
            while True:
                await self._work.wait()
                self._work = trio.Event()
                self._settle_finished()
                self._start_flushes()
        finally:
            # A flush in flight must finish before its outcome is known (and its waiters answered); the plans'
            # duplicated descriptors are closed by the flusher thread.
            with trio.CancelScope(shield=True):
                while self._in_flight:
                    await self._work.wait()
                    self._work = trio.Event()
                    self._settle_finished()
            for _ in threads:
                self._plans.put(None)

    def _start_flushes(self) -> None:
        """Once the last round's flushes have all ended, start the next round: hand a plan to the flusher threads
        for every log that needs one."""
        if self._in_flight:
            return
        flushes: list[_Flush] = []
        for log in [*self._waiters, *self._requests]:
            if log in self._in_flight:
                continue
            waiters = self._waiters.get(log)
            if not waiters and log.recovery_point >= self._requests.get(log, 0):
                self._requests.pop(log, None)
                continue
            try:
                plan = log.begin_flush()
            except KafkaError as e:
                self._requests.pop(log, None)
                self._fail(self._waiters.pop(log, []), e)
                if self._on_flushed is not None:
                    self._on_flushed(log)
                continue
            self._in_flight.add(log)
            flushes.append(_Flush(log, plan))
        self._round_size = len(flushes)
        for flush in flushes:
            self._plans.put(flush)

    def _flusher_thread(self) -> None:
        """A flusher thread: execute plans until told to stop (None)."""
        plans, finished = self._plans, self._finished
        while (flush := plans.get()) is not None:
            started = time.perf_counter()
            try:
                flush.plan.execute()
            except BaseException as e:  # handed to the trio thread, which takes the log offline
                flush.error = e
            flush.seconds = time.perf_counter() - started
            finished.append(flush)
            # The round's fsyncs end together (they share the journal commit), and a produce usually waits for
            # several of its logs: one wake-up per round, from whichever thread finds the round complete (no one
            # takes from `finished` before that wake-up, so the last to append always does; two may: harmless).
            if len(finished) == self._round_size:
                assert self._token is not None
                try:
                    self._token.run_sync_soon(self._wake)
                except trio.RunFinishedError:
                    return

    def _wake(self) -> None:
        # On the trio thread: the task may have replaced the event since the flusher thread asked.
        self._work.set()

    def _settle_finished(self) -> None:
        if len(self._finished) < self._round_size:
            return
        self._round_size = 0
        while self._finished:
            flush = self._finished.popleft()
            log = flush.log
            self._in_flight.discard(log)
            self.rounds += 1
            self.fsync_seconds.observe(flush.seconds)
            if flush.error is not None:
                error = log.fail_flush(flush.error)
                self._requests.pop(log, None)
                self._fail(self._waiters.pop(log, []), error)
            else:
                log.end_flush(flush.plan)
                self._settle(log)
            if self._on_flushed is not None:
                self._on_flushed(log)

    def _settle(self, log: PartitionLog) -> None:
        waiters = self._waiters.pop(log, None)
        if waiters:
            waiting = []
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
                    waiting.append(waiter)  # appended after this flush's plan was captured: the next one
            if waiting:
                self._waiters[log] = waiting
        requested = self._requests.get(log)
        if requested is not None:
            if requested > log.recovery_point:
                self._requests[log] = min(requested, log.log_end_offset)
            else:
                del self._requests[log]

    @staticmethod
    def _fail(waiters: list[_Waiter], error: KafkaError) -> None:
        for waiter in waiters:
            waiter.error = error
            waiter.event.set()
