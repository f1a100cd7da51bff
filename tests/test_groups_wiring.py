"""The coordinator inside a broker, in process: `__consumer_offsets` creation, ownership, durability, topic deletion.

A real `Broker` runs in trio (its listener on a free port, unused) and the handlers are called directly, so these
tests can reach what a single node never shows on the wire: a partition this broker does not coordinate (cluster
mode's `on_resign_offsets_leader`), a log that went offline, the fsync state after an acknowledged commit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

import kbroker.handlers  # noqa: F401  (registers the handlers)
from kbroker.broker import Broker
from kbroker.config import BrokerConfig
from kbroker.coordinator.records import partition_for
from kbroker.coordinator.wiring import OFFSETS_TOPIC
from kbroker.handlers import (
    delete_groups,
    describe_groups,
    find_coordinator,
    join_group,
    offset_commit,
    offset_fetch,
)
from kbroker.handlers.registry import RequestContext
from protocol.errors import ErrorCode as E
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)

pytestmark = pytest.mark.timeout(60)

PARTITIONS = 5


def make_broker(data_dir: Path, **overrides: str) -> Broker:
    config = {
        "log.dirs": str(data_dir),
        "listeners": "PLAINTEXT://127.0.0.1:0",
        "offsets.topic.num.partitions": str(PARTITIONS),
        "group.initial.rebalance.delay.ms": "0",
        **overrides,
    }
    return Broker(BrokerConfig(config))


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    b = make_broker(tmp_path / "data")
    async with trio.open_nursery() as nursery:
        await nursery.start(b.run)
        b.create_topic("t", 2, 1, {})
        yield b
        nursery.cancel_scope.cancel()
    b.close()


def ctx(broker: Broker, version: int) -> RequestContext:
    return RequestContext(
        broker=broker,
        api_key=-1,
        api_version=version,
        correlation_id=1,
        client_id="wiring-test",
        client_host="127.0.0.1:5555",
        connection_id=1,
    )


def group_in(partition: int, prefix: str = "g") -> str:
    """A group id whose __consumer_offsets partition is `partition`."""
    for i in range(10_000):
        group = f"{prefix}-{i}"
        if partition_for(group, PARTITIONS) == partition:
            return group
    raise AssertionError("no group id found")


async def commit(broker: Broker, group: str, offset: int, version: int = 8) -> list[int]:
    request = OffsetCommitRequest(
        group_id=group,
        topics=[
            OffsetCommitRequestTopic(
                name="t",
                partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)],
            )
        ],
    )
    response = await offset_commit.handle(ctx(broker, version), request)
    return [p.error_code for t in response.topics for p in t.partitions]


async def fetch(broker: Broker, group: str, version: int) -> Any:  # OffsetFetchResponse
    if version >= 8:
        request = OffsetFetchRequest(
            groups=[
                OffsetFetchRequestGroup(
                    group_id=group, topics=[OffsetFetchRequestTopics(name="t", partition_indexes=[0])]
                )
            ]
        )
    else:
        request = OffsetFetchRequest(
            group_id=group, topics=[OffsetFetchRequestTopic(name="t", partition_indexes=[0])]
        )
    return await offset_fetch.handle(ctx(broker, version), request)


@pytest.mark.trio
async def test_startup_creates_the_offsets_topic_and_owns_every_partition(broker: Broker) -> None:
    topic = broker.topics.get(OFFSETS_TOPIC)
    assert topic is not None
    assert topic.is_internal
    assert topic.num_partitions == PARTITIONS
    assert topic.replication_factor == 1  # offsets.topic.replication.factor 3, capped by one live broker
    assert topic.configs == {"cleanup.policy": "compact", "segment.bytes": "104857600"}
    assert all(broker.coordinator_owns(p) for p in range(PARTITIONS))


@pytest.mark.trio
async def test_an_acknowledged_commit_is_fsynced_and_visible(broker: Broker) -> None:
    group = group_in(3)
    assert await commit(broker, group, 42) == [E.NONE]
    plog = broker.partition_log(OFFSETS_TOPIC, 3)
    assert plog is not None
    assert plog.log_end_offset == 1
    # Durable before the answer (survives power loss), and readable by consumers of __consumer_offsets.
    assert plog.recovery_point == plog.log_end_offset
    assert plog.high_watermark == plog.log_end_offset


@pytest.mark.trio
async def test_a_commit_that_cannot_be_written_gets_coordinator_not_available(broker: Broker) -> None:
    group = group_in(1)
    plog = broker.partition_log(OFFSETS_TOPIC, 1)
    assert plog is not None
    plog.offline = True  # what a failed fsync leaves behind
    assert await commit(broker, group, 7) == [E.COORDINATOR_NOT_AVAILABLE]


@pytest.mark.trio
async def test_a_partition_we_do_not_coordinate(broker: Broker) -> None:
    group = group_in(2)
    assert await commit(broker, group, 9) == [E.NONE]
    await broker.on_resign_offsets_leader(2)
    assert not broker.coordinator_owns(2)
    assert broker.coordinator_owns(1)

    # FindCoordinator: we lead the partition but do not serve it, so the client should look again later.
    found = await find_coordinator.handle(ctx(broker, 3), FindCoordinatorRequest(key=group))
    assert found.error_code == E.COORDINATOR_NOT_AVAILABLE
    other = await find_coordinator.handle(ctx(broker, 3), FindCoordinatorRequest(key=group_in(1)))
    assert other.error_code == E.NONE

    # Every group API says NOT_COORDINATOR, where each version puts errors.
    joined = await join_group.handle(
        ctx(broker, 5),
        JoinGroupRequest(
            group_id=group,
            session_timeout_ms=10_000,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
        ),
    )
    assert joined.error_code == E.NOT_COORDINATOR
    assert joined.protocol_name == ""  # not nullable before v7
    assert await commit(broker, group, 10) == [E.NOT_COORDINATOR]
    v1 = await fetch(broker, group, 1)
    assert [
        (p.partition_index, p.committed_offset, p.error_code) for t in v1.topics for p in t.partitions
    ] == [(0, -1, E.NOT_COORDINATOR)]
    v7 = await fetch(broker, group, 7)
    assert (v7.error_code, v7.topics) == (E.NOT_COORDINATOR, [])
    v8 = await fetch(broker, group, 8)
    assert [(g.group_id, g.error_code, g.topics) for g in v8.groups] == [(group, E.NOT_COORDINATOR, [])]
    described = await describe_groups.handle(ctx(broker, 5), DescribeGroupsRequest(groups=[group]))
    assert described.groups[0].error_code == E.NOT_COORDINATOR
    deleted = await delete_groups.handle(ctx(broker, 2), DeleteGroupsRequest(groups_names=[group]))
    assert deleted.results[0].error_code == E.NOT_COORDINATOR

    # Leadership comes back: the partition is read back from its log.
    broker.on_become_offsets_leader(2)
    again = await fetch(broker, group, 8)
    assert again.groups[0].topics[0].partitions[0].committed_offset == 9


@pytest.mark.trio
async def test_a_parked_join_learns_not_coordinator_on_resign(broker: Broker) -> None:
    group = group_in(4)
    request = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=60_000,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
    )
    first = await join_group.handle(ctx(broker, 3), request)
    assert first.error_code == E.NONE
    # A second member joins: the group rebalances and parks it until the first member rejoins too (up to 60 s).
    results: list[int] = []

    async def second_member() -> None:
        response = await join_group.handle(ctx(broker, 3), request)
        results.append(response.error_code)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(second_member)
        await trio.sleep(0.2)
        assert results == []  # parked until the first member rejoins
        await broker.on_resign_offsets_leader(4)
    assert results == [E.NOT_COORDINATOR]


@pytest.mark.trio
async def test_deleting_a_topic_deletes_its_committed_offsets(broker: Broker) -> None:
    group = group_in(0)
    assert await commit(broker, group, 5) == [E.NONE]
    plog = broker.partition_log(OFFSETS_TOPIC, 0)
    assert plog is not None
    before = plog.log_end_offset
    await broker.delete_topic_async("t")
    # The tombstone is written by a task in the broker's nursery.
    for _ in range(500):
        if plog.log_end_offset > before:
            break
        await trio.sleep(0.01)
    else:
        raise AssertionError("no tombstone for the deleted topic's offsets")
    broker.create_topic("t", 2, 1, {})
    response = await fetch(broker, group, 8)
    assert response.groups[0].topics[0].partitions[0].committed_offset == -1


@pytest.mark.trio
async def test_restart_reads_groups_back_and_keeps_the_topic_partition_count(tmp_path: Path) -> None:
    group = group_in(2)
    first = make_broker(tmp_path / "data")
    async with trio.open_nursery() as nursery:
        await nursery.start(first.run)
        first.create_topic("t", 2, 1, {})
        assert await commit(first, group, 77) == [E.NONE]
        nursery.cancel_scope.cancel()
    first.close()

    # The setting changed, but groups live where the existing topic's partition count puts them.
    second = make_broker(tmp_path / "data", **{"offsets.topic.num.partitions": "50"})
    async with trio.open_nursery() as nursery:
        await nursery.start(second.run)
        topic = second.topics.get(OFFSETS_TOPIC)
        assert topic is not None
        assert topic.num_partitions == PARTITIONS
        response = await fetch(second, group, 8)
        assert response.groups[0].topics[0].partitions[0].committed_offset == 77
        nursery.cancel_scope.cancel()
    second.close()
