"""Group commit: many concurrent produces share one fsync per log.

Two ways in: `request_flush(log, end_offset)` asks for a flush and returns at once (an acks=-1 produce, which then
waits in the purgatory for its partition to move: `on_flushed` is called for every log a flush made durable, or
failed to), and `await wait_durable(log, end_offset)` returns once every offset below `end_offset` of `log` is
fsynced. `execute_plans` is the same machinery for a caller with flush plans of its own (a follower's replication
round).

The committer works in rounds: it captures a flush plan (on the trio thread) for every log with a request or a
waiter and fsyncs all their files at once through the `Fsyncer` (kbroker/log/fsyncer.py: Linux asynchronous I/O,
so that no Python thread is handed work per round; worker threads where that is not available), then settles every
waiter of the round's logs and starts the next round if anything was appended meanwhile. With asynchronous I/O the
round is submitted with `Fsyncer.start` and settled in its callback, which begins the next round itself: the
committer's task (`run`, started in the broker's nursery) only begins a round after an idle spell. A round needing
a worker thread (below), or without asynchronous I/O, is run by that task with `execute_plans`. So requests
arriving while a round runs share the next one (the number of fsyncs follows the disk's speed, not the request
rate), and a round costs about one fsync's latency however many logs it covers: on ext4 (and XFS) concurrent
fsyncs join one journal commit, so they also end together. A plan with more to do after its data's fsync (a segment
was rolled: its indexes, then the directory) finishes in a worker thread.

A round may linger (log.flush.linger.ms, kbroker's own setting) before it begins, for more acks=-1 produce requests
(`request_arrived`): only when the round before it carried more requests than have come since, and those had come
close together (at most half the linger apart on average). That is a pipelining producer (the Java client keeps 5
requests in flight and sends the next ones as the answers come back) or many producers. Without the linger such a
producer's requests are spread over more rounds (0.68 rounds per request under kafka-producer-perf-test), and each
round costs the broker ~100 µs of CPU whatever it carries (an io_submit, a kernel worker per file preempting the
event loop on its CPU, the completion, the settling; bench/README.md). Requests that come one at a time (a producer
waiting for each answer, or a rate-limited one) never make a round wait: a round that carried one request, or
several that came far apart, is followed by one that begins at once.

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
from kbroker.log.fsyncer import Fsyncer
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


def _offline_error(log: PartitionLog) -> KafkaError:
    return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {log.name} is offline after a disk error")


def _finish_each(plans: list[FlushPlan]) -> list[BaseException | None]:
    """Worker thread: what plans have to do after their data's fsync."""
    errors: list[BaseException | None] = []
    for plan in plans:
        try:
            plan.finish()
        except BaseException as exc:  # handed to the trio thread, which takes the log offline
            errors.append(exc)
        else:
            errors.append(None)
    return errors


def _data_fds(plans: list[FlushPlan]) -> tuple[list[int], list[int]]:
    """Every plan's data file descriptors, and for each the index of the plan it belongs to."""
    fds: list[int] = []
    owners: list[int] = []
    for index, plan in enumerate(plans):
        fds += plan.data_fds
        owners += [index] * len(plan.data_fds)
    return fds, owners


def _errors_by_plan(
    count: int, owners: list[int], fsync_errors: list[OSError | None]
) -> list[BaseException | None]:
    """Each of `count` plans' first fsync error, or None (`owners` as from `_data_fds`)."""
    errors: list[BaseException | None] = [None] * count
    for owner, failed in zip(owners, fsync_errors, strict=True):
        if failed is not None and errors[owner] is None:
            errors[owner] = failed
    return errors


class GroupCommitter:
    def __init__(
        self,
        on_flushed: Callable[[PartitionLog], None] | None = None,
        fsyncer: Fsyncer | None = None,
        *,
        linger_ms: float = 0,
    ) -> None:
        self._waiters: dict[PartitionLog, list[_Waiter]] = {}
        self._requests: dict[PartitionLog, int] = {}
        self._in_flight: set[PartitionLog] = set()
        self._handed_over: list[tuple[PartitionLog, FlushPlan]] = []
        """A round begun in the fsyncer's callback that its task must run (`execute_plans`)."""
        self._work = trio.Event()
        self._on_flushed = on_flushed
        self.fsyncer = fsyncer or Fsyncer()
        self._linger = linger_ms / 1000
        self._arrived = 0
        """acks=-1 produce requests (`request_arrived`) since the last round began, ..."""
        self._first_arrival = self._last_arrival = 0.0
        """... the first's and the last's trio time ..."""
        self._expected = 0
        self._expected_gap = 0.0
        """... and what the last round began with: how many, and their mean time apart."""
        self._gathered: trio.Event | None = None
        """Set when `_expected` requests have arrived, while the committer's task lingers for them."""
        # Flushes done so far (one log each): lets tests (and metrics) see how many produces shared one.
        self.rounds = 0
        self.lingered = 0
        """Rounds that waited for more requests before they began (tests)."""
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

    def request_arrived(self) -> None:
        """An acks=-1 produce request asked for its logs' flushes (`request_flush`): what a round lingers for."""
        now = trio.current_time()
        if not self._arrived:
            self._first_arrival = now
        self._last_arrival = now
        self._arrived += 1
        if self._gathered is not None and self._arrived >= self._expected:
            self._gathered.set()

    def _lingers(self) -> bool:
        """Whether the next round should wait for more requests first (see the module's docstring)."""
        return (
            0 < self._arrived < self._expected and self._linger > 0 and self._expected_gap * 2 <= self._linger
        )

    async def _linger_for_requests(self) -> None:
        self.lingered += 1
        self._gathered = trio.Event()
        try:
            with trio.move_on_after(self._linger):
                await self._gathered.wait()
        finally:
            self._gathered = None

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
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.fsyncer.run)
                task_status.started()
                try:
                    while True:
                        await self._work.wait()
                        if self._lingers():
                            await self._linger_for_requests()
                        self._work = trio.Event()
                        while True:
                            flushes, self._handed_over = self._handed_over or self._begin_round(), []
                            if not flushes or self._submit_round(flushes):
                                break  # (a submitted round is settled in its callback, which begins the next)
                            # Not cancellable (execute_plans): a round's outcome must be known before it is settled.
                            errors = await self.execute_plans([plan for _, plan in flushes])
                            self._settle_round(flushes, errors)
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            # A round begun in the fsyncer's callback as it stopped (its last completions) never runs.
            for _, plan in self._handed_over:
                plan.close()
            self._handed_over = []

    async def execute_plans(self, plans: list[FlushPlan]) -> list[BaseException | None]:
        """Run flush plans: every data file's fsync at once, then, in a worker thread, what the plans that rolled
        a segment have left (indexes, the directory); each plan's error, or None. The plans' descriptors are
        closed. Not cancellable: the outcome must be known (a failed plan takes its log offline)."""
        started = time.perf_counter()
        fds, owners = _data_fds(plans)
        try:
            errors = _errors_by_plan(len(plans), owners, await self.fsyncer.fsync_all(fds))
            rest = [i for i, plan in enumerate(plans) if errors[i] is None and plan.needs_finish]
            if rest:
                with trio.CancelScope(shield=True):
                    finished = await trio.to_thread.run_sync(_finish_each, [plans[i] for i in rest])
                for i, finish_error in zip(rest, finished, strict=True):
                    errors[i] = finish_error
        finally:
            self._closed(plans, started)
        return errors

    def _submit_round(self, flushes: list[tuple[PartitionLog, FlushPlan]]) -> bool:
        """Start the round's fsyncs through `Fsyncer.start`, to be settled in its callback; False if that cannot
        be (no AIO, or a plan with more to do than its fsyncs: that needs a worker thread), for `execute_plans`.
        Then the plans own their descriptors (a log whose plan cannot is settled as failed and left out)."""
        plans = [plan for _, plan in flushes]
        if any(plan.needs_finish for plan in plans):
            self._own(flushes)
            return False
        fds, owners = _data_fds(plans)
        started = time.perf_counter()

        def fsynced(fsync_errors: list[OSError | None]) -> None:
            self._closed(plans, started)
            self._settle_round(flushes, _errors_by_plan(len(plans), owners, fsync_errors))
            # What was appended meanwhile starts now, from here: waking the committer's task for it would cost a
            # trio task switch per round. Unless the round should linger: the task does that.
            if self._lingers():
                self._work.set()
                return
            following = self._begin_round()
            if following and not self._submit_round(following):
                self._handed_over = following
                self._work.set()

        if self.fsyncer.start(fds, fsynced):
            return True
        self._own(flushes)
        return False

    def _own(self, flushes: list[tuple[PartitionLog, FlushPlan]]) -> None:
        """Plans to run after an await: borrowed descriptors would not be theirs by then (see FlushPlan)."""
        failed: list[tuple[tuple[PartitionLog, FlushPlan], BaseException]] = []
        for flush in flushes:
            try:
                flush[1].own()
            except OSError as exc:
                failed.append((flush, exc))
        for flush, error in failed:
            flushes.remove(flush)
            flush[1].close()
            self._settle_round([flush], [error])

    def _closed(self, plans: list[FlushPlan], started: float) -> None:
        """Close a round's plans (their duplicated descriptors) and record how long the round took."""
        for plan in plans:
            plan.close()
        seconds = time.perf_counter() - started
        for _ in plans:
            self.fsync_seconds.observe(seconds)

    def _begin_round(self) -> list[tuple[PartitionLog, FlushPlan]]:
        """A plan for every log that needs a flush now (none while a round is in flight)."""
        if self._in_flight:
            return []
        flushes: list[tuple[PartitionLog, FlushPlan]] = []
        for log in [*self._waiters, *self._requests]:
            if log in self._in_flight:
                continue
            waiters = self._waiters.get(log)
            if not waiters and log.recovery_point >= self._requests.get(log, 0):
                self._requests.pop(log, None)
                continue
            try:
                # (Borrowed descriptors when AIO may take them at once: `_submit_round` makes them the plan's own
                # otherwise.)
                plan = log.begin_flush(borrow=self.fsyncer.aio)
            except KafkaError as e:
                self._requests.pop(log, None)
                self._fail(self._waiters.pop(log, []), e)
                if self._on_flushed is not None:
                    self._on_flushed(log)
                continue
            self._in_flight.add(log)
            flushes.append((log, plan))
        if flushes:  # what the next round may linger for
            self._expected, self._arrived = self._arrived, 0
            if self._expected > 1:
                self._expected_gap = (self._last_arrival - self._first_arrival) / (self._expected - 1)
        return flushes

    def _settle_round(
        self, flushes: list[tuple[PartitionLog, FlushPlan]], errors: list[BaseException | None]
    ) -> None:
        for (log, plan), error in zip(flushes, errors, strict=True):
            self._in_flight.discard(log)
            self.rounds += 1
            if error is not None:
                failure = log.fail_flush(error)
                self._requests.pop(log, None)
                self._fail(self._waiters.pop(log, []), failure)
            else:
                log.end_flush(plan)
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
