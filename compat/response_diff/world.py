"""The state both brokers are brought into before the table runs: the same topics, the same records (fixed
timestamps), the same groups in every state a classic group can be held in, made by the same requests.

Topics
- LOG (1 partition, retention.ms=-1): offsets 0-2 in one batch with timestamps 1000, 4000, 2000, offsets 3-4 in
  a second with 3000, 3500; every record has a key, a value and a header. The fetch, list-offsets and epoch rows
  read it.
- EMPTY (1 partition): no record.
- CONFIGURED (2 partitions): topic configs of its own (CONFIGURED_CONFIGS), for DescribeConfigs.
- SMALL (1 partition): max.message.bytes=SMALL_MAX_MESSAGE_BYTES, for MESSAGE_TOO_LARGE.
- PRODUCE (1 partition, retention.ms=-1): the produce rows append here, so no other row depends on how many they wrote.
- IDEMPOTENT (1 partition, retention.ms=-1): two batches (sequences 0-2 and 3-4) of one idempotent producer, whose
  id (each broker's own) gets the stand-in `<producer of rd-idempotent>`. DescribeProducers reads it.
- delete_topic(v), delete_by_id_topic(v) for every DeleteTopics version: the delete rows remove them.

Groups (classic, protocol type "consumer", committed offsets on LOG)
- EMPTY_GROUP: offsets committed without members (a "simple" consumer): Empty.
- STABLE_GROUP: one member joined and synced: Stable.
- COMPLETING_GROUP: one member joined, its SyncGroup never sent: CompletingRebalance.
- PREPARING_GROUP: one member joined and synced, then a second one's JoinGroup waits (on a connection of its own,
  its answer never read) for the first to rejoin: PreparingRebalance.
- DELETED_GROUP: offsets committed, then the group deleted: Dead.
- UNKNOWN_GROUP: never used.
- leave_group(v) for every LeaveGroup version: one member joined and synced (Stable); the leave rows remove it.
- delete_group(v) for every DeleteGroups version, and OFFSET_DELETE_GROUP: offsets committed without members
  (Empty); the delete rows remove them.
Every member a setup joins gets the stand-in `<member GROUP/NUMBER>` for its id; `Peer.members` keeps the id and
generation of each group's first member, for the rows that speak as that member.
Sessions and rebalances time out after MEMBER_TIMEOUT_MS, far beyond the table's run, so no state moves by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from compat.response_diff.peer import Peer
from compat.target import Target
from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.records import Record, build_batch
from tests.test_groups_support import Wire, assignment, subscription

LOG = "rd-log"
EMPTY = "rd-empty"
CONFIGURED = "rd-configured"
SMALL = "rd-small"
PRODUCE = "rd-produce"
IDEMPOTENT = "rd-idempotent"
IDEMPOTENT_SEQUENCES = (3, 2)  # records per batch
IDEMPOTENT_TIMESTAMP = 5000
UNKNOWN_TOPIC = "rd-no-such-topic"
OFFSETS_TOPIC = "__consumer_offsets"

CONFIGURED_CONFIGS = {
    "cleanup.policy": "compact",
    "retention.ms": "3600000",
    "segment.bytes": "1048576",
    "min.insync.replicas": "1",
    "max.message.bytes": "500000",
}
SMALL_MAX_MESSAGE_BYTES = 200
# The records' fixed timestamps are from 1970: Kafka's time-based retention would delete them (even from the active
# segment) at its first retention check, 30 s after start, and kbroker's at its own time.
KEEP_FOREVER = [CreatableTopicConfig(name="retention.ms", value="-1")]

LOG_TIMESTAMPS = ((1000, 4000, 2000), (3000, 3500))
LOG_END = 5

EMPTY_GROUP = "rd-g-empty"
STABLE_GROUP = "rd-g-stable"
COMPLETING_GROUP = "rd-g-completing"
PREPARING_GROUP = "rd-g-preparing"
DELETED_GROUP = "rd-g-deleted"
UNKNOWN_GROUP = "rd-g-unknown"
OFFSET_DELETE_GROUP = "rd-g-offset-delete"
GROUPS_WITH_STATE = (EMPTY_GROUP, STABLE_GROUP, COMPLETING_GROUP, PREPARING_GROUP)
EVERY_GROUP = (*GROUPS_WITH_STATE, DELETED_GROUP, UNKNOWN_GROUP)
MEMBER_TIMEOUT_MS = 600_000
PROTOCOL_TYPE = "consumer"
ASSIGNOR = "range"

# Committed offsets: (group, offset, metadata)
COMMITS = {
    EMPTY_GROUP: (2, "m-empty"),
    STABLE_GROUP: (4, "m-stable"),
    DELETED_GROUP: (1, None),
    OFFSET_DELETE_GROUP: (3, None),
}

READY_TIMEOUT_S = 60.0
TOPIC_API_VERSIONS = range(10)
"""Every version of CreateTopics and DeleteTopics any broker here has (they end at 7 and 6): the delete topics are
made for each, and the rows that check what those APIs did ask about each."""


def delete_topic(version: int) -> str:
    return f"rd-del-v{version}"


def delete_by_id_topic(version: int) -> str:
    return f"rd-delid-v{version}"


GROUP_API_VERSIONS = range(10)
"""Every version of LeaveGroup and DeleteGroups any broker here has (they end at 5 and 2): a group for each."""


def leave_group(version: int) -> str:
    return f"rd-g-leave-v{version}"


def delete_group(version: int) -> str:
    return f"rd-g-delete-v{version}"


def log_batches() -> list[bytes]:
    batches = []
    offset = 0
    for timestamps in LOG_TIMESTAMPS:
        records = [
            Record(i, ts, b"k%d" % (offset + i), b"v%d" % (offset + i), (("h", b"%d" % (offset + i)),))
            for i, ts in enumerate(timestamps)
        ]
        batches.append(bytes(build_batch(records)))
        offset += len(timestamps)
    return batches


def batch_of_size(size: int) -> bytes:
    """One record whose batch is about `size` bytes."""
    return bytes(build_batch([Record(0, 1000, None, b"x" * max(size - 70, 1))]))


class Setup:
    """Brings one broker into the world's state; keeps the connection of PREPARING_GROUP's waiting member open."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.parked: list[Wire] = []

    def run(self) -> None:
        peer = self.peer
        peer.learn_versions()
        self.create_topics()
        for batch in log_batches():
            self.produce(LOG, batch)
        self.produce_idempotent()
        self.wait_for_coordinator()
        self.commit(EMPTY_GROUP)
        self.commit(DELETED_GROUP)
        self.commit(OFFSET_DELETE_GROUP)
        for version in GROUP_API_VERSIONS:
            self.commit(delete_group(version), COMMITS[OFFSET_DELETE_GROUP])
            self.join_and_sync(leave_group(version))
        deleted = self.expect(
            DeleteGroupsRequest(groups_names=[DELETED_GROUP]), lambda r: r.results[0].error_code
        )
        assert deleted.results[0].error_code == 0
        leader, generation = self.join_and_sync(STABLE_GROUP)
        self.commit(STABLE_GROUP, generation=generation, member_id=leader)
        self.join(COMPLETING_GROUP, 1)
        self.join_and_sync(PREPARING_GROUP)
        self.park_second_member(PREPARING_GROUP)
        peer.learn_topics()

    def close(self) -> None:
        for wire in self.parked:
            wire.close()
        self.parked.clear()

    def expect(self, request: Any, error: Callable[[Any], int], version: int | None = None) -> Any:
        """The answer to `request` (at the highest version this broker has, unless given), asked again while the
        broker answers with a retriable error (a coordinator loading, a partition not led yet)."""
        version = self.peer.max_version(type(request)) if version is None else version
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            response = self.peer.call(request, version)
            code = error(response)
            if code not in RETRIABLE:
                return response
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.peer.name}: {type(request).__name__} still answers {code}")
            time.sleep(0.1)

    def create_topics(self) -> None:
        topics = [
            CreatableTopic(name=LOG, num_partitions=1, replication_factor=1, configs=KEEP_FOREVER),
            CreatableTopic(name=EMPTY, num_partitions=1, replication_factor=1),
            CreatableTopic(
                name=CONFIGURED,
                num_partitions=2,
                replication_factor=1,
                configs=[CreatableTopicConfig(name=k, value=v) for k, v in CONFIGURED_CONFIGS.items()],
            ),
            CreatableTopic(
                name=SMALL,
                num_partitions=1,
                replication_factor=1,
                configs=[CreatableTopicConfig(name="max.message.bytes", value=str(SMALL_MAX_MESSAGE_BYTES))],
            ),
            CreatableTopic(name=PRODUCE, num_partitions=1, replication_factor=1, configs=KEEP_FOREVER),
            CreatableTopic(name=IDEMPOTENT, num_partitions=1, replication_factor=1, configs=KEEP_FOREVER),
        ]
        for version in TOPIC_API_VERSIONS:
            for name in (delete_topic(version), delete_by_id_topic(version)):
                topics.append(CreatableTopic(name=name, num_partitions=1, replication_factor=1))
        response = self.peer.call(CreateTopicsRequest(topics=topics, timeout_ms=30_000), 7)
        errors = {t.name: t.error_code for t in response.topics if t.error_code}
        assert not errors, f"{self.peer.name}: CreateTopics errors {errors}"
        target = Target(self.peer.name, self.peer.bootstrap)
        for topic in topics:
            target.wait_topic_ready(topic.name, topic.num_partitions, READY_TIMEOUT_S)

    def produce(self, topic: str, batch: bytes) -> None:
        request = ProduceRequest(
            acks=-1,
            timeout_ms=30_000,
            topic_data=[
                TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=batch)])
            ],
        )
        response = self.peer.call(request, 9)
        code = response.responses[0].partition_responses[0].error_code
        assert code == 0, f"{self.peer.name}: producing to {topic} failed with {code}"

    def wait_for_coordinator(self) -> None:
        """Kafka creates __consumer_offsets at the first FindCoordinator and answers COORDINATOR_NOT_AVAILABLE until
        its partitions are loaded."""
        for group in (*EVERY_GROUP, OFFSET_DELETE_GROUP):
            self.expect(FindCoordinatorRequest(key=group), lambda r: r.error_code, version=3)

    def produce_idempotent(self) -> None:
        """IDEMPOTENT's batches, from a producer id InitProducerId gives."""
        given = self.expect(InitProducerIdRequest(transactional_id=None), lambda r: r.error_code, version=4)
        assert given.error_code == 0, f"{self.peer.name}: InitProducerId failed with {given.error_code}"
        self.peer.stand_ins[("producer_id", given.producer_id)] = f"<producer of {IDEMPOTENT}>"
        offset = 0
        for count in IDEMPOTENT_SEQUENCES:
            records = [
                Record(i, IDEMPOTENT_TIMESTAMP + offset + i, None, b"i%d" % (offset + i))
                for i in range(count)
            ]
            batch = build_batch(
                records,
                producer_id=given.producer_id,
                producer_epoch=given.producer_epoch,
                base_sequence=offset,
            )
            self.produce(IDEMPOTENT, bytes(batch))
            offset += count

    def commit(
        self,
        group: str,
        commit: tuple[int, str | None] | None = None,
        *,
        generation: int = -1,
        member_id: str = "",
    ) -> None:
        offset, metadata = COMMITS[group] if commit is None else commit
        request = OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            topics=[
                OffsetCommitRequestTopic(
                    name=LOG,
                    partitions=[
                        OffsetCommitRequestPartition(
                            partition_index=0, committed_offset=offset, committed_metadata=metadata
                        )
                    ],
                )
            ],
        )
        response = self.expect(request, lambda r: r.topics[0].partitions[0].error_code, version=8)
        code = response.topics[0].partitions[0].error_code
        assert code == 0, f"{self.peer.name}: OffsetCommit of {group} failed with {code}"

    def join_request(self, group: str, member_id: str) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=group,
            session_timeout_ms=MEMBER_TIMEOUT_MS,
            rebalance_timeout_ms=MEMBER_TIMEOUT_MS,
            member_id=member_id,
            protocol_type=PROTOCOL_TYPE,
            protocols=[JoinGroupRequestProtocol(name=ASSIGNOR, metadata=subscription(LOG))],
        )

    def join(self, group: str, number: int) -> tuple[str, int]:
        """Member `number` of `group` joins (asked for a member id first, KIP-394) and becomes its leader; its id
        gets the stand-in `<member GROUP/NUMBER>`."""
        first = self.expect(self.join_request(group, ""), lambda r: r.error_code, version=5)
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED, f"{self.peer.name}: {first}"
        member_id = first.member_id
        self.peer.stand_ins[member_id] = f"<member {group}/{number}>"
        joined = self.peer.call(self.join_request(group, member_id), 5)
        assert joined.error_code == 0, f"{self.peer.name}: {joined}"
        assert joined.leader == member_id, f"{self.peer.name}: {joined}"
        if number == 1:
            self.peer.members[group] = (member_id, joined.generation_id)
        return member_id, joined.generation_id

    def join_and_sync(self, group: str) -> tuple[str, int]:
        member_id, generation = self.join(group, 1)
        synced = self.peer.call(
            SyncGroupRequest(
                group_id=group,
                generation_id=generation,
                member_id=member_id,
                protocol_type=PROTOCOL_TYPE,
                protocol_name=ASSIGNOR,
                assignments=[
                    SyncGroupRequestAssignment(member_id=member_id, assignment=assignment(LOG, [0]))
                ],
            ),
            5,
        )
        assert synced.error_code == 0, f"{self.peer.name}: {synced}"
        return member_id, generation

    def park_second_member(self, group: str) -> None:
        """A second member's JoinGroup moves the group to PreparingRebalance, where it stays until the first
        rejoins (never); its answer is never read. Returns once DescribeGroups shows the state."""
        first = self.peer.call(self.join_request(group, ""), 5)
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED, f"{self.peer.name}: {first}"
        self.peer.stand_ins[first.member_id] = f"<member {group}/2>"
        wire = self.peer.connect()
        self.parked.append(wire)
        wire.send(self.join_request(group, first.member_id), 5)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            described = self.peer.call(DescribeGroupsRequest(groups=[group]), 5)
            if described.groups[0].group_state == "PreparingRebalance":
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.peer.name}: {group} is {described.groups[0].group_state}")
            time.sleep(0.05)


END_TXN = 26
"""The API key of EndTxn: a broker that advertises it has transactions."""
TRANSACTION_KEY_TYPE = 1


def await_transaction_coordinator(peer: Peer, transactional_id: str) -> None:
    """On a broker with transactions, wait until `transactional_id`'s coordinator is there. Kafka creates
    __transaction_state at the first FindCoordinator for a transactional id (which is why only the table's last rows
    ask) and answers COORDINATOR_NOT_AVAILABLE until its partitions are loaded; it names itself coordinator as soon
    as it leads the partition, but answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS to the transaction APIs
    until its coordinator has loaded it, which DescribeTransactions (no side effect) shows."""
    if END_TXN in peer.versions:
        setup = Setup(peer)
        setup.expect(
            FindCoordinatorRequest(key=transactional_id, key_type=TRANSACTION_KEY_TYPE),
            lambda r: r.error_code,
            version=3,
        )
        setup.expect(
            DescribeTransactionsRequest(transactional_ids=[transactional_id]),
            lambda r: r.transaction_states[0].error_code,
            version=0,
        )


RETRIABLE = {
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
}
