"""The admin APIs of issue 14 through the Java Admin and confluent-kafka's AdminClient, the same assertions against
kbroker and Apache Kafka (single nodes; the cluster side is compat/test_cluster_admin.py):

- CreatePartitions: a topic grows, its producer writes to a new partition, a subscribed consumer group reads it;
- IncrementalAlterConfigs of a topic (set, append, delete, subtract; a bad value; an unknown topic) and of the
  brokers (a cluster-wide default the topic then shows as its source, a per-broker throttle rate), DescribeConfigs
  of a broker showing each value's source and which configs are dynamic;
- DeleteRecords: the low watermark, ListOffsets' earliest after it, a consumer below it resetting, an offset beyond
  the high watermark refused;
- DescribeLogDirs (Java): one log directory with the topic's replicas;
- ElectLeaders and partition reassignments on one broker: nothing to elect, a reassignment to the same replica,
  none in progress to cancel.

The brokers are shared by the whole session: every config a scenario changes on a broker is put back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat.clients.ops import Ops, Result
from compat.scenarios import make_ops, produce, wait_for
from compat.target import Target
from compat.tools_support import node_id

pytestmark = pytest.mark.timeout(240)

CLIENTS = ("java", "confluent-kafka")
RECORDS = 6

# How each client names an error: the Java exception's class, librdkafka's error name.
ERRORS = {
    "java": {
        "INVALID_CONFIG": "InvalidConfigurationException",
        "UNKNOWN_TOPIC": "UnknownTopicOrPartitionException",
        "OFFSET_OUT_OF_RANGE": "OffsetOutOfRangeException",
        "ELECTION_NOT_NEEDED": "ElectionNotNeededException",
        "INVALID_PARTITIONS": "InvalidPartitionsException",
        "NO_REASSIGNMENT": "NoReassignmentInProgressException",
        "INVALID_REQUEST": "InvalidRequestException",
    },
    "confluent-kafka": {
        "INVALID_CONFIG": "INVALID_CONFIG",
        "UNKNOWN_TOPIC": "UNKNOWN_TOPIC_OR_PART",
        "OFFSET_OUT_OF_RANGE": "OFFSET_OUT_OF_RANGE",
        "ELECTION_NOT_NEEDED": "ELECTION_NOT_NEEDED",
        "INVALID_PARTITIONS": "INVALID_PARTITIONS",
        "INVALID_REQUEST": "INVALID_REQUEST",
    },
}


def ok(result: Result) -> Result:
    assert "error" not in result, result
    return result


def failed(client: str, result: Result, error: str) -> None:
    assert result.get("error") == ERRORS[client][error], result


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def ops(client: str, request: pytest.FixtureRequest) -> Ops:
    return make_ops(client, request.getfixturevalue)


def test_create_partitions_reach_producers_and_consumers(target: Target, client: str, ops: Ops) -> None:
    topic = target.topic(f"grow-{client}")
    target.create_topic(topic, 1)
    # The producer learns of the topic at one partition, then writes to the third once it exists (the Java producer
    # waits for the partition to appear in its metadata; librdkafka's refuses a partition it does not know yet, and
    # a producer started afterwards writes there: test_a_subscribed_group_consumes_new_partitions).
    produce_new = [("produce", topic, "2", "10")] if client == "java" else []
    produced, grown, invalid, unknown, described, *produced_new = ops.run(
        target.bootstrap,
        [
            ("produce", topic, "0", "10"),
            ("create-partitions", topic, "3"),
            ("create-partitions", topic, "2"),
            ("create-partitions", "no-such-topic", "2"),
            ("describe", topic),
            *produce_new,
        ],
    )
    assert ok(produced)["offset"] == 0
    ok(grown)
    failed(client, invalid, "INVALID_PARTITIONS")
    failed(client, unknown, "UNKNOWN_TOPIC")
    assert ok(described)["partitions"] == [0, 1, 2]
    assert [ok(result) for result in produced_new] == [
        {"op": "produce", "partition": 2, "offset": 0} for _ in produce_new
    ]


def test_a_subscribed_group_consumes_new_partitions(target: Target) -> None:
    """Consumers pick up new partitions at their next metadata refresh (librdkafka's group consumer here)."""
    topic = target.topic("grow-group")
    target.create_topic(topic, 1)
    consumer = Consumer(
        {
            "bootstrap.servers": target.bootstrap,
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
            "session.timeout.ms": 6000,
        }
    )
    try:
        consumer.subscribe([topic])
        produce(target.bootstrap, topic, [(0, b"first", None)])
        assert _next_value(consumer) == (0, b"first")
        make_ops("confluent-kafka", lambda _: None).one(target.bootstrap, ("create-partitions", topic, "2"))
        target.wait_topic_ready(topic, 2)
        produce(target.bootstrap, topic, [(1, b"second", None)])
        assert _next_value(consumer) == (1, b"second")
    finally:
        consumer.close()


def _next_value(consumer: Consumer) -> tuple[int, bytes]:
    def poll() -> tuple[int, bytes] | None:
        message = consumer.poll(0.5)
        if message is None:
            return None
        assert message.error() is None, message.error()
        value = message.value()
        assert isinstance(value, bytes)
        return message.partition() or 0, value

    return wait_for("a record", poll, timeout=60)


def test_topic_configs_change_and_show_their_sources(target: Target, client: str, ops: Ops) -> None:
    topic = target.topic(f"configs-{client}")
    target.create_topic(topic, 1)
    altered, bad, unknown = ops.run(
        target.bootstrap,
        [
            ("alter-configs", topic, "set:retention.ms=7200000", "append:cleanup.policy=compact"),
            ("alter-configs", topic, "set:retention.ms=soon"),
            ("alter-configs", "no-such-topic", "set:retention.ms=1"),
        ],
    )
    ok(altered)
    failed(client, bad, "INVALID_CONFIG")
    failed(client, unknown, "UNKNOWN_TOPIC")
    described(
        ops,
        target,
        ("configs", topic),
        {
            "retention.ms": ("7200000", "DYNAMIC_TOPIC_CONFIG"),
            "cleanup.policy": ("delete,compact", "DYNAMIC_TOPIC_CONFIG"),
        },
    )
    ok(
        ops.one(
            target.bootstrap,
            ("alter-configs", topic, "delete:retention.ms", "subtract:cleanup.policy=compact"),
        )
    )
    described(
        ops,
        target,
        ("configs", topic),
        {
            "retention.ms": ("604800000", "DEFAULT_CONFIG"),
            "cleanup.policy": ("delete", "DYNAMIC_TOPIC_CONFIG"),
        },
    )


def described(ops: Ops, target: Target, op: tuple[str, ...], expected: dict[str, tuple[Any, Any]]) -> Result:
    """The result of a describing op once it shows `expected` (name: (value, source)). Apache Kafka answers an
    AlterConfigs once its controller has the change; the broker answering DescribeConfigs shows it a moment later."""
    last: dict[str, tuple[Any, Any]] = {}

    def check() -> Result | None:
        nonlocal last
        result = ops.one(target.bootstrap, op)
        last = _values(result, *expected)
        return result if last == expected else None

    try:
        return wait_for(f"{op} to show {expected}", check, timeout=30)
    except AssertionError:
        assert last == expected
        raise


def _values(result: Result, *names: str) -> dict[str, tuple[Any, Any]]:
    ok(result)
    return {name: (result["configs"].get(name), result["sources"].get(name)) for name in names}


@pytest.fixture
def restore_broker_configs(target: Target, ops: Ops) -> Iterator[None]:
    """Puts back what a scenario changes on the shared broker, whatever happens."""
    yield
    node = str(node_id(target))
    ops.run(
        target.bootstrap,
        [
            ("alter-broker-configs", entity, f"delete:{name}")
            for entity in ("-", node)
            for name in ("log.retention.ms", "follower.replication.throttled.rate")
        ],
    )


def test_broker_configs_change_at_run_time(
    target: Target, client: str, ops: Ops, restore_broker_configs: None
) -> None:
    """A retention default for every broker (Java's Admin; librdkafka cannot name the cluster-wide resource, so
    confluent-kafka sets it on the one broker) and a throttle rate of one broker."""
    topic = target.topic(f"broker-configs-{client}")
    target.create_topic(topic, 1)
    node = str(node_id(target))
    entity, source = (
        ("-", "DYNAMIC_DEFAULT_BROKER_CONFIG") if client == "java" else (node, "DYNAMIC_BROKER_CONFIG")
    )
    retention, own, static = ops.run(
        target.bootstrap,
        [
            ("alter-broker-configs", entity, "set:log.retention.ms=3600000"),
            ("alter-broker-configs", node, "set:follower.replication.throttled.rate=10000000"),
            ("alter-broker-configs", node, "set:log.dirs=/elsewhere"),
        ],
    )
    described_node = described(
        ops,
        target,
        ("broker-configs", node),
        {
            "log.retention.ms": ("3600000", source),
            "follower.replication.throttled.rate": ("10000000", "DYNAMIC_BROKER_CONFIG"),
        },
    )
    ok(retention)
    ok(own)
    failed(client, static, "INVALID_REQUEST")
    # (Kafka 3.9 describes the replication throttle rates as read-only though it changes them at run time; 4.x
    # and kbroker as writable.)
    assert {"log.retention.ms", "log.segment.bytes"} <= set(described_node["writable"])
    assert "log.dirs" not in described_node["writable"]
    described(ops, target, ("configs", topic), {"retention.ms": ("3600000", source)})
    if client == "java":
        described(ops, target, ("broker-configs", "-"), {"log.retention.ms": ("3600000", source)})


def test_delete_records_moves_the_log_start(target: Target, client: str, ops: Ops) -> None:
    topic = target.topic(f"delete-records-{client}")
    target.create_topic(topic, 1)
    produce(target.bootstrap, topic, [(0, b"%d" % i, None) for i in range(RECORDS)])
    deleted, earliest, beyond, again = ops.run(
        target.bootstrap,
        [
            ("delete-records", topic, "0", "3"),
            ("offsets", topic, "0", "earliest"),
            ("delete-records", topic, "0", str(RECORDS + 1)),
            ("delete-records", topic, "0", "1"),
        ],
    )
    assert ok(deleted)["low_watermark"] == 3
    assert ok(earliest)["offset"] == 3
    failed(client, beyond, "OFFSET_OUT_OF_RANGE")
    assert ok(again)["low_watermark"] == 3, "the log start never moves back"

    # A consumer positioned below the log start gets OFFSET_OUT_OF_RANGE and resets to the earliest offset.
    consumer = Consumer(
        {"bootstrap.servers": target.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 1)])

        def first() -> int | None:
            message = consumer.poll(0.5)
            if message is None:
                return None
            assert message.error() is None, message.error()
            return message.offset()

        assert wait_for("the first record after the reset", first) == 3
    finally:
        consumer.close()
    strict = Consumer(
        {"bootstrap.servers": target.bootstrap, "group.id": topic, "auto.offset.reset": "error"}
    )
    try:
        strict.assign([TopicPartition(topic, 0, 1)])

        def error() -> str | None:
            message = strict.poll(0.5)
            failure = message.error() if message is not None else None
            return str(failure.name()) if failure is not None else None

        assert wait_for("an offset-out-of-range error", error) == "_AUTO_OFFSET_RESET"
    finally:
        strict.close()


def test_log_dirs(target: Target, request: pytest.FixtureRequest) -> None:
    ops = make_ops("java", request.getfixturevalue)
    topic = target.topic("log-dirs")
    target.create_topic(topic, 2)
    produce(target.bootstrap, topic, [(0, b"x" * 100, None)])
    node = node_id(target)
    (dirs,) = ops.run(target.bootstrap, [("log-dirs", topic)])
    assert ok(dirs)["dirs"] == 1
    sizes = dirs["sizes"]
    assert sorted(sizes) == [f"{node}:0", f"{node}:1"]
    assert sizes[f"{node}:0"] > 100
    assert sizes[f"{node}:1"] == 0


def test_one_broker_has_nothing_to_elect_or_move(target: Target, client: str, ops: Ops) -> None:
    topic = target.topic(f"elect-{client}")
    target.create_topic(topic, 1)
    node = str(node_id(target))
    preferred, unclean, reassigned, ongoing, cancelled = ops.run(
        target.bootstrap,
        [
            ("elect-leaders", "PREFERRED", topic, "0"),
            ("elect-leaders", "UNCLEAN", topic, "0"),
            ("reassign", topic, "0", node),
            ("reassignments",),
            ("reassign", topic, "0", "cancel"),
        ],
    )
    failed(client, preferred, "ELECTION_NOT_NEEDED")
    failed(client, unclean, "ELECTION_NOT_NEEDED")
    if client == "java":
        ok(reassigned)
        assert ok(ongoing)["reassignments"] == {}
        failed(client, cancelled, "NO_REASSIGNMENT")
