"""The trio layer of the coordinator, on trio's MockClock: parked requests, the timer task, appends."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
import trio
import trio.lowlevel
import trio.testing

from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from kbroker.coordinator.group import (
    GroupConfig,
    GroupState,
    JoinRequest,
    JoinResult,
    MemberIdentity,
    SyncRequest,
    SyncResult,
)
from kbroker.coordinator.offsets import OffsetCommitEntry
from kbroker.coordinator.records import Record, partition_for
from kbroker.coordinator.runtime import CoordinatorRuntime, offsets_batch, read_records
from kbroker.log.config import LogConfig
from kbroker.log.partition_log import PartitionLog
from protocol.errors import ErrorCode
from protocol.records import RecordBatch, iter_batches

E = ErrorCode
SESSION = 10_000
REBALANCE = 30_000


def req(
    member_id: str = "", client: str = "c", protocols: tuple[tuple[str, bytes], ...] = (("range", b"m"),)
) -> JoinRequest:
    return JoinRequest(member_id, None, client, "/127.0.0.1", SESSION, REBALANCE, "consumer", protocols, 5)


class MemoryWriter:
    def __init__(self) -> None:
        self.appended: list[tuple[int, Record]] = []
        self.fail = False

    async def append(self, records: Mapping[int, Sequence[Record]], now_ms: int) -> None:
        if self.fail:
            raise OSError("disk full")
        for partition, recs in records.items():
            self.appended.extend((partition, r) for r in recs)
        await trio.sleep(0.001)  # durability takes time


def runtime(delay: int = 0, writer: MemoryWriter | None = None) -> CoordinatorRuntime:
    config = CoordinatorConfig(group=GroupConfig(group_initial_rebalance_delay_ms=delay))
    return CoordinatorRuntime(GroupCoordinator(config), writer)


async def consumer(
    rt: CoordinatorRuntime, client: str, out: dict[str, tuple[JoinResult, SyncResult]]
) -> None:
    """What a v5 client does: JoinGroup, MEMBER_ID_REQUIRED, JoinGroup again, SyncGroup (leader assigns)."""
    first = await rt.join_group("g", req(client=client))
    assert first.error is E.MEMBER_ID_REQUIRED
    joined = await rt.join_group("g", req(first.member_id, client))
    assert joined.error is E.NONE
    assignments: tuple[tuple[str, bytes], ...] = ()
    if joined.leader == joined.member_id:
        assignments = tuple((m.member_id, f"for-{m.member_id}".encode()) for m in joined.members)
    synced = await rt.sync_group(
        "g", SyncRequest(joined.member_id, None, joined.generation_id, "consumer", "range", assignments)
    )
    out[client] = (joined, synced)


@pytest.mark.trio
async def test_three_members_join_through_the_initial_delay(autojump_clock: trio.testing.MockClock) -> None:
    writer = MemoryWriter()
    rt = runtime(delay=3000, writer=writer)
    out: dict[str, tuple[JoinResult, SyncResult]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(rt.run)
        start = trio.current_time()
        async with trio.open_nursery() as members:
            for i in range(3):
                members.start_soon(consumer, rt, f"c{i}", out)
                await trio.sleep(1)  # they arrive a second apart: each one extends the delay
        elapsed = trio.current_time() - start
        nursery.cancel_scope.cancel()
    joins = [out[f"c{i}"][0] for i in range(3)]
    assert {j.generation_id for j in joins} == {1}
    leaders = [j for j in joins if j.members]
    assert len(leaders) == 1
    assert leaders[0].member_id == leaders[0].leader
    for joined, synced in out.values():
        assert synced == SyncResult(E.NONE, f"for-{joined.member_id}".encode(), "consumer", "range")
    assert 5 <= elapsed < 10  # 3 s delay, extended while members kept arriving
    # The leader's assignment was appended to the group's partition before anyone got its answer.
    assert [p for p, _ in writer.appended] == [partition_for("g", 50)]


@pytest.mark.trio
async def test_session_expiry_in_virtual_time(autojump_clock: trio.testing.MockClock) -> None:
    rt = runtime()
    out: dict[str, tuple[JoinResult, SyncResult]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(rt.run)
        async with trio.open_nursery() as members:
            members.start_soon(consumer, rt, "a", out)
            members.start_soon(consumer, rt, "b", out)
        a, b = out["a"][0], out["b"][0]
        assert a.generation_id == b.generation_id
        gen = a.generation_id
        # a heartbeats every 3 s, b is silent: after its 10 s session b is gone and a is told to rejoin.
        errors = []
        for _ in range(5):
            await trio.sleep(3)
            errors.append(await rt.heartbeat("g", a.member_id, None, gen))
        assert errors[:3] == [E.NONE] * 3
        assert errors[-1] is E.REBALANCE_IN_PROGRESS
        assert b.member_id not in rt.coordinator.groups["g"].members
        again = await rt.join_group("g", req(a.member_id, "a"))
        assert (again.generation_id, [m.member_id for m in again.members]) == (gen + 1, [a.member_id])
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_rebalance_timeout_answers_the_members_that_rejoined(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rt = runtime()
    out: dict[str, tuple[JoinResult, SyncResult]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(rt.run)
        async with trio.open_nursery() as members:
            members.start_soon(consumer, rt, "a", out)
            members.start_soon(consumer, rt, "b", out)
        a, b = out["a"][0], out["b"][0]
        gen = a.generation_id

        async def keep_heartbeating() -> None:
            while True:
                await rt.heartbeat("g", b.member_id, None, gen)
                await trio.sleep(3)

        nursery.start_soon(keep_heartbeating)  # b is alive but stuck: it never rejoins
        start = trio.current_time()
        rejoined = await rt.join_group("g", req(a.member_id, "a", (("range", b"changed"),)))
        assert trio.current_time() - start == pytest.approx(REBALANCE / 1000, abs=0.01)
        assert rejoined.generation_id == gen + 1
        assert [m.member_id for m in rejoined.members] == [a.member_id]
        assert await rt.heartbeat("g", b.member_id, None, gen) is E.UNKNOWN_MEMBER_ID
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_cancelled_join_leaves_no_waiter(autojump_clock: trio.testing.MockClock) -> None:
    rt = runtime(delay=3000)
    with trio.move_on_after(1):
        await rt.join_group(
            "g", JoinRequest("", None, "c", "/h", SESSION, REBALANCE, "consumer", (("r", b""),), 3)
        )
    assert rt._waiters == {}
    assert rt.coordinator.groups["g"].state is GroupState.PREPARING_REBALANCE


@pytest.mark.trio
async def test_commit_waits_for_the_append_and_reports_a_failed_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    writer = MemoryWriter()
    rt = runtime(writer=writer)
    results = await rt.commit_offsets("g", "", None, -1, [OffsetCommitEntry("t", 0, 5)])
    assert [r.error for r in results] == [E.NONE]
    assert len(writer.appended) == 1
    writer.fail = True
    results = await rt.commit_offsets("g", "", None, -1, [OffsetCommitEntry("t", 0, 6)])
    assert [r.error for r in results] == [E.COORDINATOR_NOT_AVAILABLE]
    assert (
        rt.fetch_offsets("g", [("t", [0])]).partitions[0].offset == 6
    )  # memory moved on; the client retries


@pytest.mark.trio
async def test_leave_and_describe(autojump_clock: trio.testing.MockClock) -> None:
    rt = runtime()
    out: dict[str, tuple[JoinResult, SyncResult]] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(rt.run)
        await consumer(rt, "a", out)
        assert rt.describe_group("g").state == "Stable"
        left = await rt.leave_group("g", [MemberIdentity(out["a"][0].member_id)])
        assert left.error_for_v0_2() is E.NONE
        await trio.lowlevel.checkpoint()
        assert rt.describe_group("g").state == "Empty"
        assert [g.state for g in rt.list_groups()] == ["Empty"]
        assert await rt.delete_groups(["g"]) == (("g", E.NONE),)
        nursery.cancel_scope.cancel()


def test_now_ms_follows_an_injected_clock() -> None:
    rt = CoordinatorRuntime(GroupCoordinator(), clock=lambda: 1234)
    assert rt.now_ms() == 1234


# ---- the records of __consumer_offsets ------------------------------------------------------------------------------
# (the broker's own writer appends through the replica manager: tests/test_groups_wiring.py)


class FakeLog:
    """The part of PartitionLog the coordinator reads: log offsets and read."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.log_start_offset = 0
        self.log_end_offset = 0

    def append(self, records: bytearray) -> None:
        batch = RecordBatch(records)
        batch.base_offset = self.log_end_offset
        self.log_end_offset = batch.next_offset
        self.data += records

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        out = bytearray()
        for batch in iter_batches(self.data):
            if batch.next_offset > fetch_offset and len(out) < max_bytes:
                out += batch.buf[: batch.size]
        return bytes(out)


class BatchWriter:
    """An OffsetsWriter appending each partition's records as one batch, the way the broker's writer builds them."""

    def __init__(self, append: Callable[[int, bytearray], None]) -> None:
        self._append = append
        self.batches: list[int] = []

    async def append(self, records: Mapping[int, Sequence[Record]], now_ms: int) -> None:
        for partition, recs in records.items():
            if recs:
                self._append(partition, offsets_batch(recs, now_ms))
                self.batches.append(partition)
        await trio.lowlevel.checkpoint()


@pytest.mark.trio
async def test_offsets_batches_and_read_records_round_trip() -> None:
    logs: dict[int, FakeLog] = {}
    writer = BatchWriter(lambda p, batch: logs.setdefault(p, FakeLog()).append(batch))
    coord = GroupCoordinator()
    rt = CoordinatorRuntime(coord, writer, clock=lambda: 1000)
    await rt.commit_offsets("g", "", None, -1, [OffsetCommitEntry("t", 0, 5), OffsetCommitEntry("t", 1, 6)])
    await rt.commit_offsets("g", "", None, -1, [OffsetCommitEntry("t", 0, 7)])
    await rt.commit_offsets("h", "", None, -1, [OffsetCommitEntry("t", 0, 8)])
    assert writer.batches == [partition_for("g", 50), partition_for("g", 50), partition_for("h", 50)]
    restarted = GroupCoordinator()
    for partition, log in logs.items():
        batches = list(iter_batches(log.data))
        assert all(b.max_timestamp == 1000 for b in batches)
        restarted.load(partition, read_records(log, max_bytes=1), now_ms=2000)
    assert [p.offset for p in restarted.fetch_offsets("g", [("t", [0, 1])]).partitions] == [7, 6]
    assert [p.offset for p in restarted.fetch_offsets("h", [("t", [0])]).partitions] == [8]


def test_offsets_batch_holds_keys_and_tombstones() -> None:
    batch = RecordBatch(offsets_batch([(b"k1", b"v1"), (b"k2", None)], 5))
    assert (batch.record_count, batch.base_timestamp, batch.producer_id) == (2, 5, -1)


@pytest.mark.trio
async def test_with_the_real_partition_log(tmp_path: Path) -> None:
    logs = {p: PartitionLog.open(tmp_path / f"__consumer_offsets-{p}", LogConfig(), 0) for p in range(50)}

    def append(partition: int, batch: bytearray) -> None:
        logs[partition].append_as_leader(batch, 3, 1000)

    writer = BatchWriter(append)
    rt = CoordinatorRuntime(GroupCoordinator(), writer, clock=lambda: 1000)
    await rt.commit_offsets("g", "", None, -1, [OffsetCommitEntry("t", 0, 5, 3, "meta")])
    restarted = GroupCoordinator()
    for p, log in logs.items():
        log.advance_high_watermark(log.log_end_offset)
        restarted.load(p, read_records(log), now_ms=2000)
    (fetched,) = restarted.fetch_offsets("g", [("t", [0])]).partitions
    assert (fetched.offset, fetched.leader_epoch, fetched.metadata) == (5, 3, "meta")
