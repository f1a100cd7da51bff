"""The admin APIs of issue 14, tabled in process on a single node: CreatePartitions, IncrementalAlterConfigs,
AlterConfigs, DeleteRecords, DescribeLogDirs, ElectLeaders, AlterPartitionReassignments and
ListPartitionReassignments: (request, version) -> each topic's, partition's or resource's error code and the fields
that go with it, against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py).

A single node holds the only replica of everything, so there is nothing to elect or move (the cluster side:
tests/test_cluster_admin.py; the same against Apache Kafka: compat/test_admin_apis.py). After the tables, the
effects a response does not show: the partitions a producer then sees, a topic's logs taking a changed config at
once, a changed broker default reaching the topics without their own value, and everything surviving a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from protocol.errors import ErrorCode as E
from protocol.messages.alter_configs_request import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from protocol.messages.alter_configs_response import AlterConfigsResponse
from protocol.messages.alter_partition_reassignments_request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from protocol.messages.alter_partition_reassignments_response import AlterPartitionReassignmentsResponse
from protocol.messages.create_partitions_request import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from protocol.messages.create_partitions_response import CreatePartitionsResponse
from protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from protocol.messages.delete_records_response import DeleteRecordsResponse
from protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_log_dirs_request import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.describe_log_dirs_response import DescribeLogDirsResponse
from protocol.messages.elect_leaders_request import ElectLeadersRequest, TopicPartitions
from protocol.messages.elect_leaders_response import ElectLeadersResponse
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.incremental_alter_configs_request import (
    AlterableConfig as IncrementalConfig,
)
from protocol.messages.incremental_alter_configs_request import (
    AlterConfigsResource as IncrementalResource,
)
from protocol.messages.incremental_alter_configs_request import IncrementalAlterConfigsRequest
from protocol.messages.incremental_alter_configs_response import IncrementalAlterConfigsResponse
from protocol.messages.list_partition_reassignments_request import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
)
from protocol.messages.list_partition_reassignments_response import ListPartitionReassignmentsResponse
from tests.handler_tables import (
    NODE,
    OTHER,
    REMOTE_TOPIC,
    Setup,
    assert_answer,
    produce,
    records,
    started,
    wire_call,
)
from tests.inprocess import running_broker

pytestmark = pytest.mark.timeout(60)

T = "t"
"""One partition, ten records (offsets 0-9) in batches of one."""
OTHER_TOPIC = "u"
RECORDS = 10
TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
PREFERRED, UNCLEAN = 0, 1


async def with_records(broker: Broker) -> None:
    for i in range(RECORDS):
        answer = await wire_call(broker, produce(T, bytes(records(1000 + i))), 9)
        assert answer.responses[0].partition_responses[0].error_code == 0


# ---- CreatePartitions (v0-3) --------------------------------------------------------------------------------------


def grow(name: str, count: int, assignments: Sequence[Sequence[int]] | None = None, **options: Any) -> Any:
    return CreatePartitionsRequest(
        topics=[
            CreatePartitionsTopic(
                name=name,
                count=count,
                assignments=None  # type: ignore[arg-type]  # nullable in the spec
                if assignments is None
                else [CreatePartitionsAssignment(broker_ids=list(a)) for a in assignments],
            )
        ],
        timeout_ms=5000,
        **options,
    )


def grown(response: CreatePartitionsResponse) -> list[dict[str, Any]]:
    return [{"name": r.name, "error": r.error_code, "message": r.error_message} for r in response.results]


CREATE_PARTITIONS_CASES = [
    pytest.param(grow(T, 3), 3, [{"name": T, "error": E.NONE, "message": None}], id="one-to-three"),
    pytest.param(grow(T, 3), 0, [{"name": T, "error": E.NONE}], id="v0"),
    pytest.param(grow(T, 3, [[NODE], [NODE]]), 3, [{"error": E.NONE}], id="explicit-assignment"),
    pytest.param(grow(T, 1), 3, [{"error": E.INVALID_PARTITIONS}], id="same-count"),
    pytest.param(grow(OTHER_TOPIC, 2), 3, [{"error": E.INVALID_PARTITIONS}], id="fewer"),
    pytest.param(grow("nope", 2), 3, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown-topic"),
    pytest.param(
        grow(T, 3, [[NODE]]), 3, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="too-few-assignments"
    ),
    pytest.param(
        grow(T, 2, [[OTHER]]), 3, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="unregistered-broker"
    ),
    pytest.param(
        grow(T, 2, [[NODE, NODE]]), 3, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="duplicate-replica"
    ),
    pytest.param(grow(T, 2, [[]]), 3, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="empty-assignment"),
    pytest.param(
        CreatePartitionsRequest(
            topics=[CreatePartitionsTopic(name=T, count=2), CreatePartitionsTopic(name=T, count=3)]
        ),
        3,
        [{"name": T, "error": E.INVALID_REQUEST}],
        id="topic-twice-answered-once",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), CREATE_PARTITIONS_CASES)
async def test_create_partitions(
    tmp_path: Path, request_: CreatePartitionsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {}), OTHER_TOPIC: (3, {})}) as broker:
        await assert_answer(broker, request_, version, grown, expected)


@pytest.mark.trio
async def test_new_partitions_take_records_and_survive_a_restart(tmp_path: Path) -> None:
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        assert grown(await wire_call(broker, grow(T, 3, validate_only=True), 3))[0]["error"] == E.NONE
        assert broker.metadata.image().topics[T].num_partitions == 1, "validate_only changes nothing"
        assert grown(await wire_call(broker, grow(T, 3), 3))[0]["error"] == E.NONE
        answer = await wire_call(broker, produce(T, bytes(records(1)), partition=2), 9)
        assert answer.responses[0].partition_responses[0].error_code == E.NONE
    async with running_broker(tmp_path / "data") as broker:
        assert broker.metadata.image().topics[T].num_partitions == 3
        assert broker.replicas.is_leader(TopicPartition(T, 2))
        log = broker.replicas.leader_log(TopicPartition(T, 2))
        assert log is not None
        assert log.log_end_offset == 1


# ---- IncrementalAlterConfigs (v0-1) and AlterConfigs (v0-2) --------------------------------------------------------


def incremental(resource_type: int, name: str, *changes: tuple[str, int, str | None], **options: Any) -> Any:
    return IncrementalAlterConfigsRequest(
        resources=[
            IncrementalResource(
                resource_type=resource_type,
                resource_name=name,
                configs=[IncrementalConfig(name=n, config_operation=op, value=v) for n, op, v in changes],
            )
        ],
        **options,
    )


def altered(response: IncrementalAlterConfigsResponse | AlterConfigsResponse) -> list[dict[str, Any]]:
    return [
        {"type": r.resource_type, "name": r.resource_name, "error": r.error_code, "message": r.error_message}
        for r in response.responses
    ]


INCREMENTAL_ALTER_CONFIGS_CASES = [
    pytest.param(
        incremental(TOPIC, T, ("retention.ms", SET, "1000"), ("cleanup.policy", APPEND, "compact")),
        1,
        [{"type": TOPIC, "name": T, "error": E.NONE, "message": None}],
        id="topic-set-and-append",
    ),
    pytest.param(
        incremental(TOPIC, T, ("retention.ms", DELETE, None)), 0, [{"error": E.NONE}], id="v0-delete"
    ),
    pytest.param(
        incremental(TOPIC, T, ("follower.replication.throttled.replicas", SET, "0:1,0:2")),
        1,
        [{"error": E.NONE}],
        id="topic-throttled-replicas",
    ),
    pytest.param(
        incremental(TOPIC, T, ("retention.ms", SET, "soon")), 1, [{"error": E.INVALID_CONFIG}], id="bad-value"
    ),
    pytest.param(
        incremental(TOPIC, T, ("no.such.config", SET, "1")), 1, [{"error": E.INVALID_CONFIG}], id="unknown"
    ),
    pytest.param(
        incremental(TOPIC, T, ("retention.ms", APPEND, "1")),
        1,
        [{"error": E.INVALID_CONFIG}],
        id="append-to-a-long",
    ),
    pytest.param(
        incremental(TOPIC, "nope", ("retention.ms", SET, "1")),
        1,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}],
        id="unknown-topic",
    ),
    pytest.param(
        incremental(TOPIC, T, ("retention.ms", SET, "1"), ("retention.ms", DELETE, None)),
        1,
        [{"error": E.INVALID_REQUEST}],
        id="one-name-twice",
    ),
    pytest.param(
        incremental(BROKER, "", ("log.retention.ms", SET, "5000")),
        1,
        [{"error": E.NONE}],
        id="cluster-default",
    ),
    pytest.param(
        incremental(BROKER, str(NODE), ("follower.replication.throttled.rate", SET, "1000000")),
        1,
        [{"error": E.NONE}],
        id="this-broker",
    ),
    pytest.param(
        incremental(BROKER, str(NODE), ("log.dirs", SET, "/elsewhere")),
        1,
        [{"error": E.INVALID_REQUEST}],
        id="static-broker-config",
    ),
    pytest.param(
        incremental(BROKER, str(NODE), ("log.segment.bytes", SET, "1")),
        1,
        [{"error": E.INVALID_CONFIG}],
        id="broker-value-out-of-range",
    ),
    pytest.param(
        incremental(BROKER, "x", ("log.retention.ms", SET, "1")),
        1,
        [{"error": E.INVALID_REQUEST}],
        id="broker-x",
    ),
    pytest.param(
        incremental(3, "g", ("a", SET, "1")), 1, [{"error": E.INVALID_REQUEST}], id="other-resource-type"
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), INCREMENTAL_ALTER_CONFIGS_CASES)
async def test_incremental_alter_configs(
    tmp_path: Path, request_: IncrementalAlterConfigsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {"retention.ms": "60000"})}) as broker:
        await assert_answer(broker, request_, version, altered, expected)


def replace_all(resource_type: int, name: str, **configs: str) -> AlterConfigsRequest:
    return AlterConfigsRequest(
        resources=[
            AlterConfigsResource(
                resource_type=resource_type,
                resource_name=name,
                configs=[AlterableConfig(name=n.replace("_", "."), value=v) for n, v in configs.items()],
            )
        ]
    )


ALTER_CONFIGS_CASES = [
    pytest.param(replace_all(TOPIC, T, segment_bytes="100000"), 2, [{"error": E.NONE}], id="topic"),
    pytest.param(replace_all(TOPIC, T, segment_bytes="100000"), 0, [{"error": E.NONE}], id="v0"),
    pytest.param(replace_all(TOPIC, T, retention_ms="x"), 2, [{"error": E.INVALID_CONFIG}], id="bad-value"),
    pytest.param(
        replace_all(TOPIC, "nope"), 2, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown-topic"
    ),
    pytest.param(
        replace_all(BROKER, "", log_retention_ms="5000"), 2, [{"error": E.NONE}], id="cluster-default"
    ),
    pytest.param(
        replace_all(BROKER, str(NODE), listeners="x"), 2, [{"error": E.INVALID_REQUEST}], id="static"
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), ALTER_CONFIGS_CASES)
async def test_alter_configs(
    tmp_path: Path, request_: AlterConfigsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {"retention.ms": "60000"})}) as broker:
        await assert_answer(broker, request_, version, altered, expected)


async def topic_configs(broker: Broker, name: str, *keys: str) -> dict[str, tuple[str | None, int]]:
    request = DescribeConfigsRequest(
        resources=[
            DescribeConfigsResource(resource_type=TOPIC, resource_name=name, configuration_keys=list(keys))
        ]
    )
    response = await wire_call(broker, request, 4)
    return {c.name: (c.value, c.config_source) for c in response.results[0].configs}


@pytest.mark.trio
async def test_changed_configs_take_effect_at_once_and_survive_a_restart(tmp_path: Path) -> None:
    tp = TopicPartition(T, 0)
    async with started(
        tmp_path, Setup(), {T: (1, {}), OTHER_TOPIC: (1, {"segment.bytes": "50000"})}
    ) as broker:
        changes = incremental(
            TOPIC,
            T,
            ("retention.ms", SET, "1000"),
            ("cleanup.policy", APPEND, "compact"),
            ("min.insync.replicas", SET, "2"),
        )
        assert altered(await wire_call(broker, changes, 1))[0]["error"] == E.NONE
        log = broker.replicas.leader_log(tp)
        assert log is not None
        assert (log.config.retention_ms, log.config.cleanup_policy, log.config.min_insync_replicas) == (
            1000,
            frozenset({"delete", "compact"}),
            2,
        )
        # min.insync.replicas=2 on a single node: acks=all is refused at once, as a one-broker Kafka refuses it.
        refused = await wire_call(broker, produce(T, bytes(records(1)), acks=-1), 9)
        assert refused.responses[0].partition_responses[0].error_code == E.NOT_ENOUGH_REPLICAS

        # A cluster-wide default reaches the topics without their own value (and not the others).
        default = incremental(BROKER, "", ("log.segment.bytes", SET, "70000"))
        assert altered(await wire_call(broker, default, 1))[0]["error"] == E.NONE
        assert await topic_configs(broker, T, "segment.bytes", "retention.ms") == {
            "segment.bytes": ("70000", DYNAMIC_DEFAULT_BROKER_CONFIG),
            "retention.ms": ("1000", DYNAMIC_TOPIC_CONFIG),
        }
        assert await topic_configs(broker, OTHER_TOPIC, "segment.bytes") == {
            "segment.bytes": ("50000", DYNAMIC_TOPIC_CONFIG)
        }
        assert log.config.segment_bytes == 70000
        other_log = broker.replicas.leader_log(TopicPartition(OTHER_TOPIC, 0))
        assert other_log is not None
        assert other_log.config.segment_bytes == 50000
        # This broker's own value wins over the cluster-wide one.
        own = incremental(BROKER, str(NODE), ("log.segment.bytes", SET, "80000"))
        assert altered(await wire_call(broker, own, 1))[0]["error"] == E.NONE
        assert await topic_configs(broker, T, "segment.bytes") == {
            "segment.bytes": ("80000", DYNAMIC_BROKER_CONFIG)
        }

        back = incremental(
            TOPIC, T, ("min.insync.replicas", DELETE, None), ("cleanup.policy", SUBTRACT, "compact")
        )
        assert altered(await wire_call(broker, back, 0))[0]["error"] == E.NONE
        accepted = await wire_call(broker, produce(T, bytes(records(1)), acks=-1), 9)
        assert accepted.responses[0].partition_responses[0].error_code == E.NONE
    async with running_broker(tmp_path / "data") as broker:
        assert await topic_configs(broker, T, "segment.bytes", "retention.ms", "min.insync.replicas") == {
            "segment.bytes": ("80000", DYNAMIC_BROKER_CONFIG),
            "retention.ms": ("1000", DYNAMIC_TOPIC_CONFIG),
            "min.insync.replicas": ("1", DEFAULT_CONFIG),
        }
        assert await topic_configs(broker, T, "cleanup.policy") == {
            "cleanup.policy": ("delete", DYNAMIC_TOPIC_CONFIG)
        }
        log = broker.replicas.leader_log(tp)
        assert log is not None
        assert (log.config.retention_ms, log.config.segment_bytes) == (1000, 80000)


# ---- DeleteRecords (v0-2) -------------------------------------------------------------------------------------------


def delete_before(offset: int, name: str = T, partition: int = 0) -> DeleteRecordsRequest:
    return DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(
                name=name, partitions=[DeleteRecordsPartition(partition_index=partition, offset=offset)]
            )
        ],
        timeout_ms=5000,
    )


def deleted(response: DeleteRecordsResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.name,
            "partition": p.partition_index,
            "error": p.error_code,
            "low_watermark": p.low_watermark,
        }
        for t in response.topics
        for p in t.partitions
    ]


DELETE_RECORDS_CASES = [
    pytest.param(
        delete_before(4), 2, [{"topic": T, "partition": 0, "error": E.NONE, "low_watermark": 4}], id="to-4"
    ),
    pytest.param(delete_before(4), 0, [{"error": E.NONE, "low_watermark": 4}], id="v0"),
    pytest.param(delete_before(-1), 2, [{"error": E.NONE, "low_watermark": RECORDS}], id="high-watermark"),
    pytest.param(delete_before(0), 2, [{"error": E.NONE, "low_watermark": 0}], id="nothing-to-delete"),
    pytest.param(
        delete_before(RECORDS + 1), 2, [{"error": E.OFFSET_OUT_OF_RANGE, "low_watermark": -1}], id="beyond-hw"
    ),
    pytest.param(delete_before(-2), 2, [{"error": E.OFFSET_OUT_OF_RANGE}], id="negative"),
    pytest.param(delete_before(1, "nope"), 2, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown-topic"),
    pytest.param(
        delete_before(1, T, 3), 2, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown-partition"
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), DELETE_RECORDS_CASES)
async def test_delete_records(
    tmp_path: Path, request_: DeleteRecordsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        await with_records(broker)
        await assert_answer(broker, request_, version, deleted, expected)


@pytest.mark.trio
async def test_delete_records_of_a_partition_led_elsewhere(tmp_path: Path) -> None:
    async with started(tmp_path, Setup(two_brokers=True), {REMOTE_TOPIC: (1, {})}) as broker:
        metadata: Any = broker.metadata
        metadata.set_partition(TopicPartition(REMOTE_TOPIC, 0), leader=OTHER, isr=(OTHER,), replicas=(OTHER,))
        answer = deleted(await wire_call(broker, delete_before(1, REMOTE_TOPIC), 2))
        assert answer == [
            {"topic": REMOTE_TOPIC, "partition": 0, "error": E.NOT_LEADER_OR_FOLLOWER, "low_watermark": -1}
        ]


@pytest.mark.trio
async def test_a_consumer_below_the_new_log_start_is_out_of_range_and_it_survives_a_restart(
    tmp_path: Path,
) -> None:
    fetch = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        max_bytes=1 << 20,
        topics=[
            FetchTopic(
                topic=T, partitions=[FetchPartition(partition=0, fetch_offset=2, partition_max_bytes=1 << 20)]
            )
        ],
    )
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        await with_records(broker)
        assert deleted(await wire_call(broker, delete_before(5), 2))[0]["low_watermark"] == 5
        answer = (await wire_call(broker, fetch, 11)).responses[0].partitions[0]
        assert (answer.error_code, answer.log_start_offset) == (E.OFFSET_OUT_OF_RANGE, 5)
    async with running_broker(tmp_path / "data") as broker:
        answer = (await wire_call(broker, fetch, 11)).responses[0].partitions[0]
        assert (answer.error_code, answer.log_start_offset) == (E.OFFSET_OUT_OF_RANGE, 5)


# ---- DescribeLogDirs (v1-4) -----------------------------------------------------------------------------------------


def log_dirs(*topics: tuple[str, list[int]] | None) -> DescribeLogDirsRequest:
    if topics == (None,):
        return DescribeLogDirsRequest(topics=None)  # type: ignore[arg-type]  # nullable: every topic
    return DescribeLogDirsRequest(
        topics=[DescribableLogDirTopic(topic=name, partitions=parts) for name, parts in topics if name]  # type: ignore[misc]
    )


def dirs(response: DescribeLogDirsResponse) -> list[dict[str, Any]]:
    return [
        {
            "error": r.error_code,
            "absolute": r.log_dir.startswith("/"),
            "partitions": {
                f"{t.name}-{p.partition_index}": (p.partition_size > 0, p.offset_lag, p.is_future_key)
                for t in r.topics
                for p in t.partitions
                if not t.name.startswith("__")
            },
            "sizes_known": r.total_bytes > 0 and 0 <= r.usable_bytes <= r.total_bytes,
        }
        for r in response.results
    ]


DESCRIBE_LOG_DIRS_CASES = [
    pytest.param(
        log_dirs(None),
        4,
        [
            {
                "error": E.NONE,
                "absolute": True,
                "partitions": {f"{T}-0": (True, 0, False), f"{OTHER_TOPIC}-0": (False, 0, False)},
                "sizes_known": True,
            }
        ],
        id="every-partition",
    ),
    pytest.param(
        log_dirs((T, [0])), 1, [{"partitions": {f"{T}-0": (True, 0, False)}, "sizes_known": False}], id="v1"
    ),
    pytest.param(
        log_dirs((OTHER_TOPIC, [0]), ("nope", [0])),
        3,
        [{"partitions": {f"{OTHER_TOPIC}-0": (False, 0, False)}}],
        id="some",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), DESCRIBE_LOG_DIRS_CASES)
async def test_describe_log_dirs(
    tmp_path: Path, request_: DescribeLogDirsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {}), OTHER_TOPIC: (1, {})}) as broker:
        await with_records(broker)
        await assert_answer(broker, request_, version, dirs, expected)


# ---- ElectLeaders (v0-2) ---------------------------------------------------------------------------------------------


def elect(election_type: int, *partitions: tuple[str, int] | None) -> ElectLeadersRequest:
    if partitions == (None,):
        return ElectLeadersRequest(election_type=election_type, topic_partitions=None)  # type: ignore[arg-type]
    return ElectLeadersRequest(
        election_type=election_type,
        topic_partitions=[TopicPartitions(topic=name, partitions=[p]) for name, p in partitions],  # type: ignore[misc]
    )


def elected(response: ElectLeadersResponse) -> list[dict[str, Any]]:
    return [
        {"topic": r.topic, "partition": p.partition_id, "error": p.error_code}
        for r in response.replica_election_results
        for p in r.partition_result
    ]


ELECT_LEADERS_CASES = [
    pytest.param(
        elect(PREFERRED, (T, 0)),
        2,
        [{"topic": T, "partition": 0, "error": E.ELECTION_NOT_NEEDED}],
        id="preferred",
    ),
    pytest.param(elect(UNCLEAN, (T, 0)), 1, [{"error": E.ELECTION_NOT_NEEDED}], id="unclean"),
    pytest.param(elect(PREFERRED, (T, 0)), 0, [{"error": E.ELECTION_NOT_NEEDED}], id="v0"),
    pytest.param(elect(PREFERRED, None), 2, [], id="every-partition-answers-only-elections-needed"),
    pytest.param(elect(PREFERRED, ("nope", 0)), 2, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown"),
    pytest.param(elect(7, (T, 0)), 2, [{"error": E.INVALID_REQUEST}], id="unknown-election-type"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), ELECT_LEADERS_CASES)
async def test_elect_leaders(
    tmp_path: Path, request_: ElectLeadersRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        await assert_answer(broker, request_, version, elected, expected)


# ---- AlterPartitionReassignments and ListPartitionReassignments (v0) -------------------------------------------------


def reassign(name: str, partition: int, replicas: list[int] | None) -> AlterPartitionReassignmentsRequest:
    return AlterPartitionReassignmentsRequest(
        topics=[
            ReassignableTopic(
                name=name, partitions=[ReassignablePartition(partition_index=partition, replicas=replicas)]
            )
        ]
    )


def reassigned(response: AlterPartitionReassignmentsResponse) -> list[dict[str, Any]]:
    return [
        {"top": response.error_code, "topic": t.name, "partition": p.partition_index, "error": p.error_code}
        for t in response.responses
        for p in t.partitions
    ]


ALTER_PARTITION_REASSIGNMENTS_CASES = [
    pytest.param(
        reassign(T, 0, [NODE]), 0, [{"top": E.NONE, "topic": T, "partition": 0, "error": E.NONE}], id="same"
    ),
    pytest.param(
        reassign(T, 0, [NODE, OTHER]), 0, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="unregistered"
    ),
    pytest.param(reassign(T, 0, []), 0, [{"error": E.INVALID_REPLICA_ASSIGNMENT}], id="empty"),
    pytest.param(reassign(T, 0, None), 0, [{"error": E.NO_REASSIGNMENT_IN_PROGRESS}], id="cancel-none"),
    pytest.param(reassign(T, 5, [NODE]), 0, [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}], id="unknown"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), ALTER_PARTITION_REASSIGNMENTS_CASES)
async def test_alter_partition_reassignments(
    tmp_path: Path, request_: AlterPartitionReassignmentsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        await assert_answer(broker, request_, version, reassigned, expected)


def ongoing(response: ListPartitionReassignmentsResponse) -> list[dict[str, Any]]:
    return [{"error": response.error_code, "topics": [t.name for t in response.topics]}]


LIST_PARTITION_REASSIGNMENTS_CASES = [
    pytest.param(
        ListPartitionReassignmentsRequest(topics=[]),
        0,
        [{"error": E.NONE, "topics": []}],
        id="no-topic-asked",
    ),
    pytest.param(
        ListPartitionReassignmentsRequest(topics=None), 0, [{"error": E.NONE, "topics": []}], id="all"
    ),
    pytest.param(
        ListPartitionReassignmentsRequest(
            topics=[
                ListPartitionReassignmentsTopics(name=T, partition_indexes=[0]),
                ListPartitionReassignmentsTopics(name="nope", partition_indexes=[0]),
            ]
        ),
        0,
        [{"error": E.NONE, "topics": []}],
        id="some",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), LIST_PARTITION_REASSIGNMENTS_CASES)
async def test_list_partition_reassignments(
    tmp_path: Path, request_: ListPartitionReassignmentsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, Setup(), {T: (1, {})}) as broker:
        await assert_answer(broker, request_, version, ongoing, expected)
