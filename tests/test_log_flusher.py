"""The group committer: concurrent produces share fsyncs; an fsync failure takes the log offline for good.

The tests that count, delay or fail fsyncs by replacing `os.fsync` run the committer with the thread fsyncer
(`threaded()`): Linux's asynchronous fsync (kbroker/log/fsyncer.py, the broker's default) happens in the kernel,
where no monkeypatch reaches. The fault suite (tests/faults/test_fault_failing_disk.py) fails fsyncs in the file
system itself, through whichever path. Tests of the round logic alone run both ways."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from kbroker.common import KafkaError
from kbroker.log.config import LogConfig
from kbroker.log.flusher import GroupCommitter
from kbroker.log.fsyncer import Fsyncer
from kbroker.log.partition_log import PartitionLog
from protocol.errors import ErrorCode
from protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(60)


def batch() -> bytearray:
    return build_batch([Record(0, 0, b"k", b"v" * 50)])


def open_log(tmp_path: Path, name: str = "t-0", config: LogConfig | None = None) -> PartitionLog:
    return PartitionLog.open(tmp_path / name, config or LogConfig(), now_ms=0)


def fd_path(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


@pytest.fixture
def fsync_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths of every fsync made from now on (the storage code calls os.fsync through the os module)."""
    calls: list[str] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd_path(fd))
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def threaded() -> GroupCommitter:
    """A committer whose fsyncs are `os.fsync` calls in worker threads (so a test can replace them)."""
    return GroupCommitter(fsyncer=Fsyncer(use_aio=False))


@pytest.fixture(params=["aio", "threads"])
def make_committer(request: pytest.FixtureRequest) -> Callable[[], GroupCommitter]:
    return GroupCommitter if request.param == "aio" else threaded


def patch_fsync(
    monkeypatch: pytest.MonkeyPatch, wrapper: Callable[[Callable[[int], None], int], None]
) -> None:
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: wrapper(real, fd))


@pytest.mark.trio
async def test_a_durable_offset_returns_at_once(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    committer = GroupCommitter()
    with trio.fail_after(5):
        await committer.wait_durable(log, 0)  # nothing to wait for, and no committer task needed
    log.append_as_leader(batch(), 0, 0)
    log.flush()
    with trio.fail_after(5):
        await committer.wait_durable(log, 1)
    with pytest.raises(ValueError, match="beyond the log end offset"):
        await committer.wait_durable(log, 2)


@pytest.mark.trio
async def test_concurrent_waiters_share_one_fsync(tmp_path: Path, fsync_calls: list[str]) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(
        batch(), 0, 0
    )  # the first append of an epoch also writes the leader epoch checkpoint
    committer = threaded()
    done: list[int] = []

    async def produce(i: int) -> None:
        info = log.append_as_leader(batch(), 0, 0)
        await committer.wait_durable(log, info.last_offset + 1)
        assert log.recovery_point > info.last_offset
        done.append(i)

    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        fsync_calls.clear()
        with trio.fail_after(10):
            async with trio.open_nursery() as producers:
                for i in range(50):
                    producers.start_soon(produce, i)
        nursery.cancel_scope.cancel()
    assert sorted(done) == list(range(50))
    assert committer.rounds == 1
    assert fsync_calls == [str(log.segments[0].log_path)]
    assert log.recovery_point == log.log_end_offset == 51


@pytest.mark.trio
async def test_produces_arriving_during_an_fsync_share_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(real: Callable[[int], None], fd: int) -> None:
        threading.Event().wait(0.02)
        real(fd)

    patch_fsync(monkeypatch, slow)
    log = open_log(tmp_path)
    committer = threaded()

    async def producer() -> None:
        for _ in range(5):
            info = log.append_as_leader(batch(), 0, 0)
            await committer.wait_durable(log, info.last_offset + 1)

    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        with trio.fail_after(20):
            async with trio.open_nursery() as producers:
                for _ in range(20):
                    producers.start_soon(producer)
        nursery.cancel_scope.cancel()
    assert log.log_end_offset == 100
    # each round serves every producer waiting on it: about one round per wave, not one per produce
    assert committer.rounds <= 6


@pytest.mark.trio
async def test_fsync_failure_takes_only_that_log_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad = open_log(tmp_path, "good-0"), open_log(tmp_path, "bad-0")
    for log in (good, bad):
        log.append_as_leader(batch(), 0, 0)  # writes the leader epoch checkpoint before fsyncs fail
    failing = True

    def inject(real: Callable[[int], None], fd: int) -> None:
        if failing and "bad-0" in fd_path(fd):
            raise OSError(errno.EIO, "injected fsync failure")
        real(fd)

    patch_fsync(monkeypatch, inject)
    committer = threaded()
    outcome: dict[str, ErrorCode] = {}

    async def produce(log: PartitionLog) -> None:
        info = log.append_as_leader(batch(), 0, 0)
        try:
            await committer.wait_durable(log, info.last_offset + 1)
        except KafkaError as e:
            outcome[log.name] = e.code
        else:
            outcome[log.name] = ErrorCode.NONE

    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        with trio.fail_after(10):
            async with trio.open_nursery() as producers:
                producers.start_soon(produce, good)
                producers.start_soon(produce, bad)
        assert outcome == {"good-0": ErrorCode.NONE, "bad-0": ErrorCode.KAFKA_STORAGE_ERROR}
        assert bad.offline
        assert not good.offline

        # never retried: even once fsync works again, the offline log refuses writes and durability waits
        failing = False
        with pytest.raises(KafkaError) as e:
            bad.append_as_leader(batch(), 0, 0)
        assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        with pytest.raises(KafkaError) as e:
            await committer.wait_durable(bad, 2)
        assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        with pytest.raises(KafkaError) as e:
            bad.read(0, 100, max_offset=2)
        assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        with trio.fail_after(10):
            await produce(good)
        assert outcome["good-0"] == ErrorCode.NONE
        nursery.cancel_scope.cancel()
    bad.close()  # an offline log closes without writing anything: the next open recovers it
    assert not bad.segments[0].index_path.exists()


def test_a_write_error_takes_the_log_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = open_log(tmp_path)

    def failing_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.EIO, "injected: I/O error")

    monkeypatch.setattr(os, "write", failing_disk)
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(batch(), 0, 0)
    assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert log.offline
    assert log.log_end_offset == 0


def test_a_read_error_takes_the_log_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EIO on read: KAFKA_STORAGE_ERROR for the request (Kafka's KafkaStorageException), not an OSError that would
    close the client's connection."""
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0, 0)

    def failing_disk(fd: int, size: int, offset: int) -> bytes:
        raise OSError(errno.EIO, "injected: I/O error")

    monkeypatch.setattr(os, "pread", failing_disk)
    with pytest.raises(KafkaError) as e:
        log.read(0, 1 << 20, log.log_end_offset)
    assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert log.offline


def test_a_full_disk_refuses_the_append_and_the_log_serves_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC after part of a batch went in: the segment is cut back to where it was, the producer gets
    KAFKA_STORAGE_ERROR, and the log stays online: once there is space again, the same append succeeds."""
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0, 0)
    size = log.segments[-1].size
    real_write = os.write
    full = True

    def half_then_full(fd: int, data: bytes) -> int:
        view = memoryview(data)
        if not full:
            return real_write(fd, view)
        if len(view) > 10:
            return real_write(fd, view[:10])  # some of it fits
        raise OSError(errno.ENOSPC, "injected: no space left")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(batch(), 0, 0)
    assert e.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert "no space left" in str(e.value)
    assert not log.offline
    assert log.log_end_offset == 1
    assert os.path.getsize(log.segments[-1].log_path) == size  # the partial batch was cut off
    full = False
    info = log.append_as_leader(batch(), 0, 0)
    assert (info.base_offset, log.log_end_offset) == (1, 2)
    log.flush()
    log.close()
    reopened = open_log(tmp_path)
    assert reopened.log_end_offset == 2


@pytest.mark.trio
async def test_a_truncation_during_the_fsync_fails_the_waiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def held_in_worker(real: Callable[[int], None], fd: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            release.wait(10)
        real(fd)

    patch_fsync(monkeypatch, held_in_worker)
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0, 0)
    log.flush()  # offset 0 is durable
    committer = threaded()
    outcome: list[ErrorCode] = []
    answered = trio.Event()

    async def wait_for_offset_1() -> None:
        try:
            await committer.wait_durable(log, 2)
        except KafkaError as e:
            outcome.append(e.code)
        answered.set()

    log.append_as_leader(batch(), 0, 0)
    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        nursery.start_soon(wait_for_offset_1)
        await trio.testing.wait_all_tasks_blocked()  # the round's fsync is held in the worker
        log.truncate_to(1)  # a new leader's log diverged: offset 1 goes, and is written again
        log.append_as_leader(batch(), 0, 0)
        release.set()
        with trio.fail_after(10):
            await answered.wait()
        nursery.cancel_scope.cancel()
    assert outcome == [ErrorCode.NOT_LEADER_OR_FOLLOWER]
    assert log.recovery_point == 1, "the round's flush covered data that was truncated: not counted"


@pytest.mark.trio
async def test_rolled_segments_are_sealed_by_the_committer(tmp_path: Path, fsync_calls: list[str]) -> None:
    log = open_log(tmp_path, config=LogConfig(segment_bytes=500))
    committer = threaded()
    for _ in range(10):
        info = log.append_as_leader(batch(), 0, 0)
    sealed = log.segments[:-1]
    assert sealed
    fsync_calls.clear()
    assert not any(s.index_path.exists() for s in sealed), "index files only after the data is durable"
    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        with trio.fail_after(10):
            await committer.wait_durable(log, info.last_offset + 1)
        nursery.cancel_scope.cancel()
    assert all(s.index_path.exists() and s.time_index_path.exists() for s in sealed)
    assert not log.segments[-1].index_path.exists()
    assert str(log.directory) in fsync_calls, "the new segment files' directory entries are fsynced"
    data_syncs = [p for p in fsync_calls if p.endswith(".log")]
    assert sorted(data_syncs) == sorted(str(s.log_path) for s in log.segments)


@pytest.mark.trio
async def test_a_round_serves_every_waiter_and_seals_rolled_segments(
    tmp_path: Path, make_committer: Callable[[], GroupCommitter]
) -> None:
    """The same round logic through either fsyncer: waiters arriving together share a round, a log whose segments
    rolled gets their index files once its data is durable, and the recovery point reaches the log end."""
    log = open_log(tmp_path, config=LogConfig(segment_bytes=500))
    committer = make_committer()
    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        # The broker's default must really be the asynchronous path on Linux (not a silent fallback to threads).
        assert committer.fsyncer.aio == (make_committer is GroupCommitter)

        async def produce() -> None:
            info = log.append_as_leader(batch(), 0, 0)
            await committer.wait_durable(log, info.last_offset + 1)

        with trio.fail_after(10):
            async with trio.open_nursery() as producers:
                for _ in range(30):
                    producers.start_soon(produce)
        nursery.cancel_scope.cancel()
    assert committer.rounds == 1
    assert log.recovery_point == log.log_end_offset == 30
    sealed = log.segments[:-1]
    assert sealed
    assert all(s.index_path.exists() and s.time_index_path.exists() for s in sealed)


@pytest.mark.trio
async def test_rounds_that_follow_one_another_are_begun_in_the_fsyncers_callback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With asynchronous fsyncs a round is settled in the fsyncer's callback, and what was appended meanwhile
    begins the next round right there: a producer that keeps appending while rounds run gets round after round
    without the committer's task being woken for each (a trio task switch per round).

    Which task submits each round tells where it was begun: the fsyncer's task runs the callbacks, the
    committer's task begins a round only when the chain ran dry (an fsync that ended before the producer appended
    again: how often depends on the disk and the machine's load, so the test counts rounds, not a ratio)."""
    log = open_log(tmp_path)
    committer = GroupCommitter()
    submitted_by: list[str] = []
    real_start = committer.fsyncer.start

    def start(fds: Sequence[int], on_done: Callable[[list[OSError | None]], None]) -> bool:
        submitted_by.append(trio.lowlevel.current_task().name)
        return real_start(fds, on_done)

    monkeypatch.setattr(committer.fsyncer, "start", start)

    def begun_in_callback() -> int:
        return sum("Fsyncer.run" in name for name in submitted_by)

    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        assert committer.fsyncer.aio
        with trio.move_on_after(20):
            while begun_in_callback() < 20:
                info = log.append_as_leader(batch(), 0, 0)
                committer.request_flush(log, info.last_offset + 1)
                await trio.lowlevel.checkpoint()
        assert begun_in_callback() >= 20, f"in 20 s, {len(submitted_by)} rounds, by {set(submitted_by)}"
        with trio.fail_after(10):
            await committer.wait_durable(log, log.log_end_offset)
        nursery.cancel_scope.cancel()
    assert log.recovery_point == log.log_end_offset
    # Every round was submitted by one of the two tasks (the old way: every one by the committer's).
    by_committer = sum("GroupCommitter.run" in name for name in submitted_by)
    assert by_committer >= 1, submitted_by
    assert by_committer + begun_in_callback() == len(submitted_by), submitted_by


def descriptors_of(path: Path) -> int:
    """How many of this process's descriptors are open on `path`."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                count += 1
        except OSError:  # closed meanwhile (listdir's own descriptor)
            continue
    return count


@pytest.mark.trio
async def test_a_committer_stopped_mid_stream_leaves_no_duplicated_descriptor(tmp_path: Path) -> None:
    """Each round's plan holds duplicated descriptors of the segments until the round is settled. A committer
    stopped while a producer keeps asking for flushes (its last rounds' completions come in as the fsyncer stops,
    and may begin rounds that never run) closes every one of them."""
    log = open_log(tmp_path)
    segment = log.segments[0].log_path

    async def producer(committer: GroupCommitter, enough: trio.Event) -> None:
        while True:
            info = log.append_as_leader(batch(), 0, 0)
            committer.request_flush(log, info.last_offset + 1)
            if committer.rounds >= 5:
                enough.set()
            await trio.lowlevel.checkpoint()

    for _ in range(10):
        committer = GroupCommitter()
        enough = trio.Event()
        async with trio.open_nursery() as nursery:
            await nursery.start(committer.run)
            nursery.start_soon(producer, committer, enough)
            with trio.fail_after(10):
                await enough.wait()
            nursery.cancel_scope.cancel()
        assert descriptors_of(segment) == 1  # the log's own
    log.close()


# ---- log.flush.linger.ms: a round may wait for as many acks=-1 requests as the one before it carried -------------
# In virtual time (MockClock, rate 0): a linger ends only when the test jumps the clock, so whether the committer
# lingers is seen in `lingered` once every task is blocked, before any jump.


def arrive(committer: GroupCommitter, log: PartitionLog) -> int:
    """One acks=-1 produce request, as ReplicaManager.append_records makes it: append, ask for the flush, count the
    request. The offset to wait for."""
    info = log.append_as_leader(batch(), 0, 0)
    committer.request_flush(log, info.last_offset + 1)
    committer.request_arrived()
    return info.last_offset + 1


async def arrives_at_once(committer: GroupCommitter, log: PartitionLog) -> None:
    """One more request, whose round begins without lingering, and is durable."""
    lingered = committer.lingered
    end = arrive(committer, log)
    await trio.testing.wait_all_tasks_blocked()
    assert committer.lingered == lingered
    await committer.wait_durable(log, end)


@contextlib.asynccontextmanager
async def running(tmp_path: Path, linger_ms: int) -> AsyncIterator[tuple[GroupCommitter, PartitionLog]]:
    """A running committer with log.flush.linger.ms = `linger_ms`, and a log with one durable record (the epoch's
    first append also writes its checkpoint)."""
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0, 0)
    log.flush()
    committer = GroupCommitter(linger_ms=linger_ms)
    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        yield committer, log
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_round_lingers_for_as_many_requests_as_the_round_before(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    async with running(tmp_path, 1000) as (committer, log):
        for _ in range(3):  # three requests together (a pipelining producer): one round
            end = arrive(committer, log)
        await committer.wait_durable(log, end)
        assert (committer.rounds, committer.lingered) == (1, 0)

        arrive(committer, log)
        await trio.testing.wait_all_tasks_blocked()
        assert committer.lingered == 1  # not begun: the round before carried three requests
        arrive(committer, log)
        end = arrive(committer, log)  # the third: the round begins, without the clock moving
        await committer.wait_durable(log, end)
        assert (committer.rounds, committer.lingered) == (2, 1)
        assert trio.current_time() == 0

        # A linger ends after log.flush.linger.ms even when fewer come.
        end = arrive(committer, log)
        await trio.testing.wait_all_tasks_blocked()
        assert committer.lingered == 2
        mock_clock.jump(1.0)
        await committer.wait_durable(log, end)
        assert committer.rounds == 3
    assert log.recovery_point == log.log_end_offset == 8


@pytest.mark.trio
async def test_requests_one_at_a_time_or_far_apart_never_make_a_round_linger(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    async with running(tmp_path, 1000) as (committer, log):
        for _ in range(3):  # a producer that waits for each answer: rounds of one request
            await arrives_at_once(committer, log)

        # Two requests in one round, but 0.6 s apart (more than half the linger): the next round does not wait
        # for a second one.
        arrive(committer, log)
        mock_clock.jump(0.6)
        end = arrive(committer, log)
        await committer.wait_durable(log, end)
        await arrives_at_once(committer, log)
    assert committer.rounds == 5


@pytest.mark.trio
async def test_no_linger_when_it_is_zero(tmp_path: Path, mock_clock: trio.testing.MockClock) -> None:
    async with running(tmp_path, 0) as (committer, log):
        for _ in range(3):
            end = arrive(committer, log)
        await committer.wait_durable(log, end)
        await arrives_at_once(committer, log)
    assert committer.rounds == 2
