"""A node whose wall clock jumps forward and back (an NTP step, a VM resumed, an operator's `date -s`), through the
broker's one injected clock (kbroker/clock.py): a `JumpingClock` is a TrioClock whose wall time can be stepped while
trio's virtual (monotonic) time runs on undisturbed, as the real system's monotonic clock does.

Wall time is only for what is stored (record timestamps, commit timestamps, retention against them); durations are
measured on the monotonic clock. So a jump must not expire a group member that keeps heartbeating, nor keep a dead
one for as long as the clock went back; must not push an in-sync follower out of the ISR nor keep a stopped one in
it; and must not leave the time index out of order (LogAppendTime stamps going back).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from kbroker.app import Broker
from kbroker.clock import TrioClock
from kbroker.common import TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.partition_log import PartitionLog
from protocol.errors import ErrorCode as E
from protocol.messages.heartbeat_request import HeartbeatRequest
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from tests.inprocess import call, running_broker
from tests.test_virtual_time import TP, follower_fetch, memory, produce, three_brokers

pytestmark = pytest.mark.timeout(60)

START_MS = 1_700_000_000_000
HOUR_MS = 3_600_000
LAG_MS = 10_000
SESSION_MS = 10_000


class JumpingClock(TrioClock):
    """Wall time that can be stepped; the monotonic time under it (trio's) never jumps."""

    def __init__(self, start_ms: int) -> None:
        super().__init__(start_ms)
        self.step_ms = 0

    def now_ms(self) -> int:
        return super().now_ms() + self.step_ms

    def jump(self, ms: int) -> None:
        self.step_ms += ms


@pytest.mark.trio
async def test_clock_steps_neither_shrink_a_live_isr_nor_keep_a_stopped_follower(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    clock = JumpingClock(START_MS)
    overrides = {"replica.lag.time.max.ms": str(LAG_MS)}
    async with running_broker(tmp_path / "data", overrides, metadata=three_brokers, clock=clock) as b:
        metadata = memory(b)
        await b.metadata.create_topic("r", 1, 3, {})
        partition = b.replicas.partitions[TP]
        # Both followers keep up under load: each second they fetch up to the log end, then a record comes in (so
        # at an ISR check they are a moment behind, caught up a second ago). Meanwhile the clock leaps an hour.
        for second in range(3 * LAG_MS // 1000):
            for follower in (1, 2):
                assert await follower_fetch(b, follower, partition.log.log_end_offset) == E.NONE
            await produce(b, f"v{second}".encode())
            if second == 3:
                # The leap lands between a catch-up and the next: at least one ISR check (every lag/2) sees it.
                clock.jump(HOUR_MS)
                await trio.sleep(LAG_MS / 2000 + 0.5)
            await trio.sleep(1)
        assert metadata.alter_partition_calls == []
        assert metadata.state(TP).isr == (0, 1, 2)

        # Two hours back, and follower 2 stops: it leaves the ISR after the lag time, not two hours later.
        clock.jump(-2 * HOUR_MS)
        stopped = trio.current_time()
        while metadata.state(TP).isr != (0, 1):
            assert trio.current_time() - stopped < 2 * LAG_MS / 1000, "the stopped follower stayed in the ISR"
            assert await follower_fetch(b, 1, partition.log.log_end_offset) == E.NONE
            await produce(b, b"more")
            await trio.sleep(1)


async def join_and_sync(broker: Broker, group: str) -> tuple[str, int]:
    """One consumer joins `group` (session.timeout.ms 10 s) and syncs as its leader: (member id, generation)."""
    join = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=SESSION_MS,
        rebalance_timeout_ms=SESSION_MS,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
    )
    joined = await call(broker, join, 3)
    assert joined.error_code == E.NONE
    sync = SyncGroupRequest(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=joined.member_id,
        assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")],
    )
    synced = await call(broker, sync, 3)
    assert synced.error_code == E.NONE
    return joined.member_id, joined.generation_id


@pytest.mark.trio
async def test_clock_steps_neither_expire_a_live_group_member_nor_keep_a_dead_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    clock = JumpingClock(START_MS)
    async with running_broker(tmp_path / "data", clock=clock) as b:
        member_id, generation = await join_and_sync(b, "g")
        heartbeat = HeartbeatRequest(group_id="g", generation_id=generation, member_id=member_id)
        # Heartbeats every 3 s for a minute; after 10 s the clock leaps an hour.
        for second in range(0, 60, 3):
            if second == 9:
                clock.jump(HOUR_MS)
                # Another group's member joins: the coordinator's timers run (at the leapt time) before the next
                # heartbeat of ours.
                await join_and_sync(b, "other")
            response = await call(b, heartbeat, 3)
            assert response.error_code == E.NONE, f"{second} s: {E(response.error_code).name}"
            await trio.sleep(3)
        # Two hours back, and the member stops heartbeating: it is expired after session.timeout.ms.
        clock.jump(-2 * HOUR_MS)
        stopped = trio.current_time()
        coordinator = b.groups.coordinator
        while coordinator.groups["g"].members:
            assert trio.current_time() - stopped < 2 * SESSION_MS / 1000, "the silent member was kept"
            await trio.sleep(0.5)


@pytest.mark.trio
async def test_log_append_times_going_back_keep_the_time_index_ordered(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """LogAppendTime stamps follow the wall clock, back and forth; the time index keeps only increasing entries
    (an entry says no earlier batch has a later timestamp), and ListOffsets by time answers the first record at or
    after the time asked, before and after a restart that rebuilds the indexes."""
    clock = JumpingClock(START_MS)
    configs = {"message.timestamp.type": "LogAppendTime", "index.interval.bytes": "1"}
    steps = [0, -HOUR_MS, 2 * HOUR_MS, -HOUR_MS // 2, -2 * HOUR_MS, HOUR_MS]
    stamps: list[int] = []
    tp = TopicPartition("t", 0)
    async with running_broker(tmp_path / "data", clock=clock) as b:
        await b.metadata.create_topic("t", 1, 1, configs)
        for i, step in enumerate(steps):
            clock.jump(step)
            stamps.append(clock.now_ms())
            assert await produce(b, f"v{i}".encode(), topic="t") == i
            await trio.sleep(1)
        plog = b.replicas.leader_log(tp)
        assert plog is not None
        check_time_lookups(plog, stamps)
    reopened = PartitionLog.open(tmp_path / "data" / "t-0", LogConfig(), START_MS)
    try:
        check_time_lookups(reopened, stamps)
    finally:
        reopened.close()


def check_time_lookups(plog: PartitionLog, stamps: list[int]) -> None:
    for segment in plog.segments:
        entries = list(segment._time_timestamps)  # the in-memory time index
        assert entries == sorted(set(entries)), entries
    for asked in sorted({*stamps, *(s + 1 for s in stamps), min(stamps) - 1}):
        expected = next(((o, t) for o, t in enumerate(stamps) if t >= asked), None)
        assert plog.offset_for_timestamp(asked, max_offset=len(stamps)) == expected, asked
