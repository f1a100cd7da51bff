"""The coordinator inside a broker, in process: `__consumer_offsets` creation, ownership, durability, topic deletion.

A real broker runs in the test's trio run (tests/inprocess.py) and the handlers are called directly, so these tests
can reach what the wire does not show: the fsync state after an acknowledged commit, a log that went offline, and (on
in-memory cluster metadata, tests/memory_metadata.py) a `__consumer_offsets` partition whose leadership moved to
another broker and back.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from kbroker.coordinator.group import GroupState
from kbroker.coordinator.records import partition_for
from kbroker.metadata.image import OFFSETS_TOPIC
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
from tests.inprocess import call, running_broker, wait_until
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

PARTITIONS = 5
OTHER_BROKER = 7


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    """A single node (its own files for metadata), with topic t of 2 partitions."""
    async with running_broker(tmp_path / "data") as b:
        await b.metadata.create_topic("t", 2, 1, {})
        yield b


def cluster_metadata(config: BrokerConfig) -> MemoryMetadata:
    """This node (0) and another broker, so that leaderships can move away and back."""
    return MemoryMetadata(config, {0: ("127.0.0.1", 9092), OTHER_BROKER: ("127.0.0.1", 9)})


@pytest.fixture
async def member(tmp_path: Path) -> AsyncIterator[Broker]:
    async with running_broker(tmp_path / "data", metadata=cluster_metadata) as b:
        await b.metadata.create_topic("t", 2, 1, {})
        yield b


def offsets(partition: int) -> TopicPartition:
    return TopicPartition(OFFSETS_TOPIC, partition)


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
    response = await call(broker, request, version)
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
    return await call(broker, request, version)


@pytest.mark.trio
async def test_startup_creates_the_offsets_topic_and_owns_every_partition(broker: Broker) -> None:
    topic = broker.metadata.image().topics.get(OFFSETS_TOPIC)
    assert topic is not None
    assert topic.is_internal
    assert topic.num_partitions == PARTITIONS
    assert (
        topic.replication_factor == 1
    )  # a single node holds one replica, whatever offsets.topic.replication.factor
    assert topic.configs == {"cleanup.policy": "compact", "segment.bytes": "104857600"}
    assert all(broker.groups.owns(p) for p in range(PARTITIONS))


@pytest.mark.trio
async def test_an_acknowledged_commit_is_fsynced_and_visible(broker: Broker) -> None:
    group = group_in(3)
    assert await commit(broker, group, 42) == [E.NONE]
    plog = broker.replicas.leader_log(offsets(3))
    assert plog is not None
    assert plog.log_end_offset == 1
    # Durable before the answer (survives power loss), and readable by consumers of __consumer_offsets.
    assert plog.recovery_point == plog.log_end_offset
    assert plog.high_watermark == plog.log_end_offset


@pytest.mark.trio
async def test_a_commit_that_cannot_be_written_gets_coordinator_not_available(
    broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    group = group_in(1)
    plog = broker.replicas.leader_log(offsets(1))
    assert plog is not None
    plog.offline = True  # what a failed fsync leaves behind
    with caplog.at_level(logging.INFO):
        assert await commit(broker, group, 7) == [E.COORDINATOR_NOT_AVAILABLE]
    # An expected failure (a failover gives the same): one WARNING line that says why, no ERROR, no traceback.
    said = [r for r in caplog.records if r.name == "kbroker.coordinator.runtime"]
    assert [(r.levelname, r.exc_info) for r in said] == [("WARNING", None)]
    assert "KAFKA_STORAGE_ERROR" in said[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.trio
async def test_a_partition_whose_leadership_moves_away_and_back(member: Broker) -> None:
    metadata = member.metadata
    assert isinstance(metadata, MemoryMetadata)
    group = group_in(2)
    assert await commit(member, group, 9) == [E.NONE]
    metadata.set_partition(offsets(2), leader=OTHER_BROKER, isr=(OTHER_BROKER,), replicas=(0, OTHER_BROKER))
    await wait_until(lambda: not member.groups.owns(2))
    assert member.groups.owns(1)

    # FindCoordinator names the new leader.
    found = await call(member, FindCoordinatorRequest(key=group), 3)
    assert (found.error_code, found.node_id, found.port) == (E.NONE, OTHER_BROKER, 9)
    other = await call(member, FindCoordinatorRequest(key=group_in(1)), 3)
    assert (other.error_code, other.node_id) == (E.NONE, 0)

    # Every group API says NOT_COORDINATOR, where each version puts errors.
    joined = await call(
        member,
        JoinGroupRequest(
            group_id=group,
            session_timeout_ms=10_000,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
        ),
        5,
    )
    assert joined.error_code == E.NOT_COORDINATOR
    assert joined.protocol_name == ""  # not nullable before v7
    assert await commit(member, group, 10) == [E.NOT_COORDINATOR]
    v1 = await fetch(member, group, 1)
    assert [
        (p.partition_index, p.committed_offset, p.error_code) for t in v1.topics for p in t.partitions
    ] == [(0, -1, E.NOT_COORDINATOR)]
    v7 = await fetch(member, group, 7)
    assert (v7.error_code, v7.topics) == (E.NOT_COORDINATOR, [])
    v8 = await fetch(member, group, 8)
    assert [(g.group_id, g.error_code, g.topics) for g in v8.groups] == [(group, E.NOT_COORDINATOR, [])]
    described = await call(member, DescribeGroupsRequest(groups=[group]), 5)
    assert described.groups[0].error_code == E.NOT_COORDINATOR
    deleted = await call(member, DeleteGroupsRequest(groups_names=[group]), 2)
    assert deleted.results[0].error_code == E.NOT_COORDINATOR

    # Leadership comes back (a new epoch): the partition is read back from its log.
    metadata.set_partition(offsets(2), leader=0, isr=(0,), replicas=(0, OTHER_BROKER))
    assert member.groups.owns(2)
    again = await fetch(member, group, 8)
    assert again.groups[0].topics[0].partitions[0].committed_offset == 9


@pytest.mark.trio
async def test_a_parked_join_learns_not_coordinator_when_leadership_moves(member: Broker) -> None:
    metadata = member.metadata
    assert isinstance(metadata, MemoryMetadata)
    group = group_in(4)
    request = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=60_000,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
    )
    first = await call(member, request, 3)
    assert first.error_code == E.NONE
    # A second member joins: the group rebalances and parks it until the first member rejoins too (up to 60 s).
    results: list[int] = []

    async def second_member() -> None:
        response = await call(member, request, 3)
        results.append(response.error_code)

    coordinator = member.groups.coordinator
    async with trio.open_nursery() as nursery:
        nursery.start_soon(second_member)
        # Parked: the group is rebalancing with both members and no answer has gone out.
        await wait_until(
            lambda: (
                coordinator.groups[group].state is GroupState.PREPARING_REBALANCE
                and len(coordinator.groups[group].members) == 2
            )
        )
        assert results == []
        metadata.set_partition(
            offsets(4), leader=OTHER_BROKER, isr=(OTHER_BROKER,), replicas=(0, OTHER_BROKER)
        )
    assert results == [E.NOT_COORDINATOR]


@pytest.mark.trio
async def test_deleting_a_topic_deletes_its_committed_offsets(broker: Broker) -> None:
    group = group_in(0)
    assert await commit(broker, group, 5) == [E.NONE]
    plog = broker.replicas.leader_log(offsets(0))
    assert plog is not None
    before = plog.log_end_offset
    await broker.metadata.delete_topic("t")
    # The tombstone is written by a task of the group service.
    await wait_until(lambda: plog.log_end_offset > before)
    await broker.metadata.create_topic("t", 2, 1, {})
    response = await fetch(broker, group, 8)
    assert response.groups[0].topics[0].partitions[0].committed_offset == -1


@pytest.mark.trio
async def test_restart_reads_groups_back_and_keeps_the_topic_partition_count(tmp_path: Path) -> None:
    group = group_in(2)
    async with running_broker(tmp_path / "data") as first:
        await first.metadata.create_topic("t", 2, 1, {})
        assert await commit(first, group, 77) == [E.NONE]

    # The setting changed, but groups live where the existing topic's partition count puts them.
    async with running_broker(tmp_path / "data", {"offsets.topic.num.partitions": "50"}) as second:
        topic = second.metadata.image().topics.get(OFFSETS_TOPIC)
        assert topic is not None
        assert topic.num_partitions == PARTITIONS
        response = await fetch(second, group, 8)
        assert response.groups[0].topics[0].partitions[0].committed_offset == 77
