"""CreateTopics, DeleteTopics and DescribeConfigs, tabled in process: (request, version) -> each topic's or resource's
error code and the fields that go with it, against a real broker (tests/inprocess.py, through the codec:
tests/handler_tables.py).

The broker runs with log.retention.ms and log.segment.bytes set (so sources 1, 4 and 5 all show) and has TOPICS.
Rows marked `kafka_differs` state Kafka's answer where kbroker answers otherwise; their reason says both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.config import BrokerConfig
from protocol.errors import ErrorCode as E
from protocol.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from protocol.messages.create_topics_response import CreateTopicsResponse
from protocol.messages.delete_topics_request import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.delete_topics_response import DeleteTopicsResponse
from protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_configs_response import DescribeConfigsResponse
from protocol.primitives import ZERO_UUID
from tests.handler_tables import (
    NODE,
    OTHER,
    Setup,
    assert_answer,
    kafka_differs,
    started,
    topic_id_of,
    wire_call,
)

pytestmark = pytest.mark.timeout(60)

T = "t"
COLLIDER = "x_y"
"""`x.y` collides with it (Kafka's metric names map '.' to '_')."""
CONFIGURED = "configured"
CONFIGURED_CONFIGS = {"retention.ms": "1000", "cleanup.policy": "compact"}
BROKER_SETTINGS = {"log.retention.ms": "3600000", "log.segment.bytes": "2000000"}

# Config sources (DescribeConfigs' ConfigSource ids)
TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5

SINGLE = Setup(BROKER_SETTINGS)
TWO_BROKERS = Setup(BROKER_SETTINGS, two_brokers=True)
NO_DELETE = Setup({**BROKER_SETTINGS, "delete.topic.enable": "false"})
THREE_PARTITIONS = Setup({**BROKER_SETTINGS, "num.partitions": "3"})
TOPICS = {T: (1, {}), COLLIDER: (1, {}), CONFIGURED: (1, CONFIGURED_CONFIGS)}


# ---- CreateTopics (v2-7) ----------------------------------------------------------------------------------------


def topic(
    name: str,
    partitions: int = 1,
    replication_factor: int = 1,
    configs: Mapping[str, str | None] | None = None,
    assignments: list[list[int]] | None = None,
    partition_indexes: list[int] | None = None,
) -> CreatableTopic:
    """A topic to create; `assignments` lists each partition's brokers (partition i unless `partition_indexes`)."""
    return CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication_factor,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
        assignments=[
            CreatableReplicaAssignment(partition_index=i, broker_ids=brokers)
            for i, brokers in zip(
                partition_indexes or range(len(assignments or [])), assignments or [], strict=True
            )
        ],
    )


def create(*topics: CreatableTopic, validate_only: bool = False) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=list(topics), timeout_ms=5000, validate_only=validate_only)


def created(response: CreateTopicsResponse, broker: Broker) -> list[dict[str, Any]]:
    existing = broker.metadata.image().topics
    rows = []
    for t in response.topics:
        row = {
            "name": t.name,
            "error": t.error_code,
            "num_partitions": t.num_partitions,
            "replication_factor": t.replication_factor,
            "has_topic_id": t.topic_id != ZERO_UUID,
            "topic_config_error": t.topic_config_error_code,
            "configs": len(t.configs),
            "exists": t.name in existing,
            "partitions_created": existing[t.name].num_partitions if t.name in existing else None,
        }
        row.update({f"config:{c.name}": (c.value, c.config_source) for c in t.configs})
        rows.append(row)
    return rows


def create_failed(name: str, error: E) -> dict[str, Any]:
    return {
        "name": name,
        "error": error,
        "num_partitions": -1,
        "replication_factor": -1,
        "has_topic_id": False,
    }


DONE = {"error": E.NONE, "has_topic_id": True, "exists": True, "topic_config_error": E.NONE}

CREATE_TOPICS_CASES = [
    pytest.param(
        SINGLE,
        create(topic("new", 2, 1, {"retention.ms": "1000"})),
        7,
        [
            {
                **DONE,
                "name": "new",
                "num_partitions": 2,
                "replication_factor": 1,
                "partitions_created": 2,
                "config:retention.ms": ("1000", TOPIC_CONFIG),
                "config:segment.bytes": ("2000000", STATIC_BROKER_CONFIG),
                "config:max.message.bytes": ("1048588", DEFAULT_CONFIG),
            }
        ],
        id="created-with-id-partitions-and-configs",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", 2)),
        4,
        [
            {
                "error": E.NONE,
                "has_topic_id": False,
                "num_partitions": -1,
                "replication_factor": -1,
                "configs": 0,
                "exists": True,
                "partitions_created": 2,
            }
        ],
        id="v4-answers-only-the-error",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", 2, 1, {"cleanup.policy": "compact"}), validate_only=True),
        7,
        [
            {
                "error": E.NONE,
                "num_partitions": 2,
                "replication_factor": 1,
                "exists": False,
                "config:cleanup.policy": ("compact", TOPIC_CONFIG),
                "config:retention.ms": ("3600000", STATIC_BROKER_CONFIG),
            }
        ],
        id="validate-only-creates-nothing",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", 2)),
        6,
        [
            {
                "error": E.NONE,
                "has_topic_id": False,
                "num_partitions": 2,
                "replication_factor": 1,
                "exists": True,
            }
        ],
        id="v5-6-answer-partitions-and-configs-but-no-id",
    ),
    pytest.param(
        THREE_PARTITIONS,
        create(topic("new", -1, -1)),
        7,
        [{**DONE, "num_partitions": 3, "replication_factor": 1, "partitions_created": 3}],
        id="minus-one-takes-the-broker-defaults",
    ),
    pytest.param(
        THREE_PARTITIONS,
        create(topic("new", -1, -1)),
        4,
        [{"error": E.NONE, "num_partitions": -1, "exists": True, "partitions_created": 3}],
        id="v4-minus-one-takes-the-broker-defaults",
    ),
    pytest.param(SINGLE, create(topic(T)), 7, [create_failed(T, E.TOPIC_ALREADY_EXISTS)], id="topic-exists"),
    pytest.param(
        SINGLE, create(topic("x.y")), 7, [create_failed("x.y", E.INVALID_TOPIC_EXCEPTION)], id="name-collides"
    ),
    pytest.param(
        SINGLE, create(topic("a b")), 7, [create_failed("a b", E.INVALID_TOPIC_EXCEPTION)], id="illegal-name"
    ),
    pytest.param(
        SINGLE, create(topic("new", 0)), 7, [create_failed("new", E.INVALID_PARTITIONS)], id="0-partitions"
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -2)),
        7,
        [create_failed("new", E.INVALID_PARTITIONS)],
        id="negative-partitions",
    ),
    pytest.param(
        SINGLE, create(topic("new", 1, 0)), 7, [create_failed("new", E.INVALID_REPLICATION_FACTOR)], id="rf-0"
    ),
    pytest.param(
        SINGLE,
        create(topic("new", 1, 2)),
        7,
        [create_failed("new", E.INVALID_REPLICATION_FACTOR)],
        id="rf-above-live-brokers",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", configs={"no.such.config": "1"})),
        7,
        [create_failed("new", E.INVALID_CONFIG)],
        id="unknown-config",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", configs={"retention.ms": "soon"})),
        7,
        [create_failed("new", E.INVALID_CONFIG)],
        id="config-value-not-a-number",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", configs={"cleanup.policy": "shred"})),
        7,
        [create_failed("new", E.INVALID_CONFIG)],
        id="config-value-not-allowed",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", configs={"retention.ms": None})),
        7,
        [create_failed("new", E.INVALID_CONFIG)],
        id="config-value-null",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -1, -1, assignments=[[NODE]])),
        7,
        [{**DONE, "num_partitions": 1, "replication_factor": 1}],
        id="replica-assignment",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -1, -1, assignments=[[NODE]], partition_indexes=[1])),
        7,
        [create_failed("new", E.INVALID_REPLICA_ASSIGNMENT)],
        id="assignment-with-a-gap",
    ),
    pytest.param(
        TWO_BROKERS,
        create(topic("new", -1, -1, assignments=[[NODE], [NODE, OTHER]])),
        7,
        [create_failed("new", E.INVALID_REPLICA_ASSIGNMENT)],
        id="assignments-of-unequal-sizes",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -1, -1, assignments=[[OTHER]])),
        7,
        [create_failed("new", E.INVALID_REPLICA_ASSIGNMENT)],
        id="assignment-to-an-unknown-broker",
    ),
    pytest.param(
        TWO_BROKERS,
        create(topic("new", -1, -1, assignments=[[OTHER, OTHER]])),
        7,
        [create_failed("new", E.INVALID_REPLICA_ASSIGNMENT)],
        id="assignment-names-a-broker-twice",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -1, -1, assignments=[[]])),
        7,
        [create_failed("new", E.INVALID_REPLICA_ASSIGNMENT)],
        id="assignment-with-no-broker",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", 1, -1, assignments=[[NODE]])),
        7,
        [create_failed("new", E.INVALID_REQUEST)],
        id="assignment-with-num-partitions",
    ),
    pytest.param(
        SINGLE,
        create(topic("new", -1, 1, assignments=[[NODE]])),
        7,
        [create_failed("new", E.INVALID_REQUEST)],
        id="assignment-with-replication-factor",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("setup", "request_", "version", "expected"), CREATE_TOPICS_CASES)
async def test_create_topics(
    tmp_path: Path, setup: Setup, request_: CreateTopicsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, setup, TOPICS) as broker:
        await assert_answer(broker, request_, version, lambda r: created(r, broker), expected)


@pytest.mark.trio
@pytest.mark.parametrize(
    "answers_per_name",
    [
        pytest.param(None, id="a-name-given-twice-fails-and-is-not-created"),
        pytest.param(
            1,
            id="a-name-given-twice-is-answered-once",
        ),
    ],
)
async def test_create_topics_with_a_name_twice(tmp_path: Path, answers_per_name: int | None) -> None:
    async with started(tmp_path, SINGLE, TOPICS) as broker:
        request = create(topic("twice"), topic("twice", 2), topic("once"))
        rows = created(await wire_call(broker, request, 7), broker)
    twice = [(r["error"], r["exists"]) for r in rows if r["name"] == "twice"]
    assert set(twice) == {(E.INVALID_REQUEST, False)}
    assert [(r["error"], r["exists"]) for r in rows if r["name"] == "once"] == [(E.NONE, True)]
    if answers_per_name is not None:
        assert len(twice) == answers_per_name


# ---- DeleteTopics (v1-6) ----------------------------------------------------------------------------------------


def delete_by_name(*names: str) -> DeleteTopicsRequest:
    """v1-5 name topics in `topic_names`, v6 in `topics`: both are filled, each version encodes its own."""
    return DeleteTopicsRequest(
        topic_names=list(names), topics=[DeleteTopicState(name=n) for n in names], timeout_ms=5000
    )


def delete_by_id(*topic_ids: Any) -> DeleteTopicsRequest:
    return DeleteTopicsRequest(
        topics=[DeleteTopicState(name=None, topic_id=i) for i in topic_ids], timeout_ms=5000
    )


def deleted(response: DeleteTopicsResponse, broker: Broker) -> list[dict[str, Any]]:
    existing = broker.metadata.image().topics
    return [
        {
            "name": r.name,
            "topic_id": r.topic_id,
            "error": r.error_code,
            "message": r.error_message,
            "still_exists": r.name in existing if r.name is not None else None,
        }
        for r in response.responses
    ]


UNKNOWN_ID = topic_id_of("no-such-topic")

DELETE_TOPICS_CASES = [
    pytest.param(
        SINGLE,
        delete_by_name(T),
        6,
        [{"name": T, "topic_id": topic_id_of(T), "error": E.NONE, "still_exists": False}],
        id="by-name",
    ),
    pytest.param(
        SINGLE,
        delete_by_id(topic_id_of(T)),
        6,
        [{"name": T, "topic_id": topic_id_of(T), "error": E.NONE, "still_exists": False}],
        id="by-id",
    ),
    pytest.param(
        SINGLE,
        delete_by_name(T),
        5,
        [{"name": T, "topic_id": ZERO_UUID, "error": E.NONE, "still_exists": False}],
        id="v5-topic-names",
    ),
    pytest.param(
        SINGLE,
        delete_by_name(T),
        1,
        [{"name": T, "error": E.NONE, "still_exists": False}],
        id="v1-topic-names",
    ),
    pytest.param(
        SINGLE,
        delete_by_name("nope", T),
        6,
        [
            {"name": "nope", "topic_id": ZERO_UUID, "error": E.UNKNOWN_TOPIC_OR_PARTITION},
            {"name": T, "error": E.NONE, "still_exists": False},
        ],
        id="unknown-name-beside-a-known-one",
    ),
    pytest.param(
        SINGLE,
        delete_by_name("nope"),
        4,
        [{"name": "nope", "error": E.UNKNOWN_TOPIC_OR_PARTITION}],
        id="v4-unknown-name",
    ),
    # The messages Kafka sends with these errors (compat/test_response_diff.py).
    pytest.param(
        SINGLE,
        delete_by_name("nope"),
        6,
        [
            {
                "error": E.UNKNOWN_TOPIC_OR_PARTITION,
                "message": "This server does not host this topic-partition.",
            }
        ],
        id="unknown-name-message",
    ),
    pytest.param(
        SINGLE,
        delete_by_id(UNKNOWN_ID),
        6,
        [
            {
                "name": None,
                "topic_id": UNKNOWN_ID,
                "error": E.UNKNOWN_TOPIC_ID,
                "message": "This server does not host this topic ID.",
            }
        ],
        id="unknown-id",
    ),
    pytest.param(
        SINGLE,
        delete_by_name("__consumer_offsets"),
        6,
        [{"name": "__consumer_offsets", "error": E.INVALID_REQUEST, "still_exists": True}],
        id="internal-topic",
    ),
    pytest.param(
        NO_DELETE,
        delete_by_name(T),
        6,
        [{"name": T, "error": E.TOPIC_DELETION_DISABLED, "still_exists": True}],
        id="deletion-disabled",
    ),
    pytest.param(
        NO_DELETE,
        delete_by_name(T),
        2,
        [{"name": T, "error": E.INVALID_REQUEST, "still_exists": True}],
        id="deletion-disabled-before-v3",
    ),
    pytest.param(
        NO_DELETE,
        delete_by_name("nope"),
        6,
        [{"name": "nope", "error": E.TOPIC_DELETION_DISABLED}],
        id="deletion-disabled-even-for-an-unknown-topic",
    ),
    pytest.param(
        SINGLE,
        delete_by_name(T, T),
        6,
        [{"name": T, "topic_id": ZERO_UUID, "error": E.INVALID_REQUEST, "still_exists": True}],
        id="a-name-twice",
    ),
    pytest.param(
        SINGLE,
        DeleteTopicsRequest(topics=[DeleteTopicState(name=T, topic_id=topic_id_of(T))], timeout_ms=5000),
        6,
        [{"name": T, "topic_id": topic_id_of(T), "error": E.INVALID_REQUEST, "still_exists": True}],
        id="name-and-id-both-given",
    ),
    pytest.param(
        SINGLE,
        delete_by_id(ZERO_UUID),
        6,
        [{"name": None, "topic_id": ZERO_UUID, "error": E.INVALID_REQUEST}],
        id="neither-name-nor-id",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("setup", "request_", "version", "expected"), DELETE_TOPICS_CASES)
async def test_delete_topics(
    tmp_path: Path, setup: Setup, request_: DeleteTopicsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, setup, TOPICS) as broker:
        await assert_answer(broker, request_, version, lambda r: deleted(r, broker), expected)


# ---- DescribeConfigs (v1-4) -------------------------------------------------------------------------------------

TOPIC, BROKER = 2, 4
STRING, SHORT, LONG, LIST = 2, 4, 5, 7  # config types (v3+)


def describe(
    resource_type: int, name: str, *keys: str, synonyms: bool = False, documentation: bool = False
) -> DescribeConfigsRequest:
    return DescribeConfigsRequest(
        resources=[
            DescribeConfigsResource(
                resource_type=resource_type, resource_name=name, configuration_keys=list(keys)
            )
        ],
        include_synonyms=synonyms,
        include_documentation=documentation,
    )


def described(response: DescribeConfigsResponse) -> list[dict[str, Any]]:
    return [
        {
            "type": r.resource_type,
            "name": r.resource_name,
            "error": r.error_code,
            "message": r.error_message,
            "entries": {c.name: (c.value, c.config_source) for c in r.configs},
            "synonyms": {c.name: [(s.name, s.value, s.source) for s in c.synonyms] for c in r.configs},
            "config_types": {c.name: c.config_type for c in r.configs},
            "documented": {c.name: bool(c.documentation) for c in r.configs},
            "names": sorted(c.name for c in r.configs),
        }
        for r in response.results
    ]


# Every topic config kbroker reports: the ones it honours (each with the broker setting that gives its default).
HONOURED = [
    "cleanup.policy",
    "delete.retention.ms",
    "index.interval.bytes",
    "max.message.bytes",
    "message.timestamp.type",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "min.insync.replicas",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.ms",
    "unclean.leader.election.enable",
]

DESCRIBE_CONFIGS_CASES = [
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", "segment.bytes", "max.message.bytes", "cleanup.policy"),
        4,
        [
            {
                "error": E.NONE,
                "entries": {
                    "retention.ms": ("1000", TOPIC_CONFIG),
                    "segment.bytes": ("2000000", STATIC_BROKER_CONFIG),
                    "max.message.bytes": ("1048588", DEFAULT_CONFIG),
                    "cleanup.policy": ("compact", TOPIC_CONFIG),
                },
            }
        ],
        id="topic-values-and-sources-of-the-keys-asked",
    ),
    pytest.param(describe(TOPIC, T), 1, [{"error": E.NONE, "names": HONOURED}], id="topic-every-config"),
    pytest.param(
        describe(TOPIC, T, "compression.type"),
        4,
        [{"error": E.NONE, "entries": {"compression.type": ("producer", DEFAULT_CONFIG)}}],
        id="topic-configs-kafka-has-and-kbroker-ignores",
        marks=kafka_differs(
            "kbroker describes only the topic configs it honours (compression.type, flush.ms, preallocate... are "
            "accepted at creation but never described), Kafka describes every topic config "
            "(ConfigHelper.describeConfigs lists all of LogConfig)"
        ),
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", "max.message.bytes", "segment.ms", synonyms=True),
        4,
        [
            {
                "synonyms": {
                    "retention.ms": [
                        ("retention.ms", "1000", TOPIC_CONFIG),
                        ("log.retention.ms", "3600000", STATIC_BROKER_CONFIG),
                    ],
                    "max.message.bytes": [("message.max.bytes", "1048588", DEFAULT_CONFIG)],
                    "segment.ms": [],
                }
            }
        ],
        id="topic-synonyms",
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", "segment.bytes", synonyms=True),
        4,
        [
            {
                "synonyms": {
                    "retention.ms": [
                        ("retention.ms", "1000", TOPIC_CONFIG),
                        ("log.retention.ms", "3600000", STATIC_BROKER_CONFIG),
                        ("log.retention.hours", "168", DEFAULT_CONFIG),
                    ],
                    "segment.bytes": [
                        ("log.segment.bytes", "2000000", STATIC_BROKER_CONFIG),
                        ("log.segment.bytes", "1073741824", DEFAULT_CONFIG),
                    ],
                }
            }
        ],
        id="topic-synonyms-end-with-the-defaults",
        marks=kafka_differs(
            "kbroker lists one broker synonym per topic config and drops the default of a broker setting that is "
            "set, Kafka lists every broker synonym that has a value, static then default "
            "(ConfigHelper.configSynonyms: log.retention.ms/minutes/hours; log.segment.bytes twice)"
        ),
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", synonyms=True),
        1,
        [{"synonyms": {"retention.ms": [("retention.ms", "1000", 1), ("log.retention.ms", "3600000", 4)]}}],
        id="v1-synonyms",
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", synonyms=False),
        4,
        [{"synonyms": {"retention.ms": []}}],
        id="synonyms-only-when-asked",
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms", "cleanup.policy"),
        3,
        [{"config_types": {"retention.ms": LONG, "cleanup.policy": LIST}}],
        id="v3-config-types",
    ),
    pytest.param(
        describe(TOPIC, CONFIGURED, "retention.ms"),
        2,
        [{"config_types": {"retention.ms": 0}}],
        id="v2-has-no-types",
    ),
    pytest.param(
        describe(TOPIC, "nope"),
        4,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, "message": "", "entries": {}}],
        id="unknown-topic",
    ),
    # As Kafka 3.9.2 and 4.3.1 answer (compat/test_response_diff.py): an empty message when the resource is
    # described; a broker config's synonyms are the value given at start-up, then the default; Kafka's config types.
    pytest.param(
        describe(TOPIC, T, "retention.ms"), 4, [{"error": E.NONE, "message": ""}], id="empty-message"
    ),
    pytest.param(
        describe(BROKER, str(NODE), "log.retention.ms", "log.segment.bytes", "num.partitions", synonyms=True),
        4,
        [
            {
                "synonyms": {
                    "log.retention.ms": [("log.retention.ms", "3600000", STATIC_BROKER_CONFIG)],
                    "log.segment.bytes": [
                        ("log.segment.bytes", "2000000", STATIC_BROKER_CONFIG),
                        ("log.segment.bytes", "1073741824", DEFAULT_CONFIG),
                    ],
                    "num.partitions": [("num.partitions", "1", DEFAULT_CONFIG)],
                }
            }
        ],
        id="broker-synonyms-given-then-default",
    ),
    pytest.param(
        describe(BROKER, str(NODE), "offsets.topic.replication.factor", "listeners", "log.cleanup.policy"),
        3,
        [
            {
                "config_types": {
                    "offsets.topic.replication.factor": SHORT,
                    "listeners": STRING,
                    "log.cleanup.policy": LIST,
                }
            }
        ],
        id="broker-config-types",
    ),
    pytest.param(
        describe(BROKER, str(NODE), "log.retention.ms", "num.partitions", documentation=True),
        4,
        [
            {
                "error": E.NONE,
                "entries": {
                    "log.retention.ms": ("3600000", STATIC_BROKER_CONFIG),
                    "num.partitions": ("1", DEFAULT_CONFIG),
                },
                "documented": {"log.retention.ms": True, "num.partitions": True},
            }
        ],
        id="broker-values-sources-and-documentation",
    ),
    pytest.param(
        describe(BROKER, str(NODE), "log.retention.ms"),
        4,
        [{"documented": {"log.retention.ms": False}}],
        id="broker-documentation-only-when-asked",
    ),
    pytest.param(
        describe(BROKER, str(NODE), "node.id", "broker.id"),
        4,
        [
            {
                "error": E.NONE,
                "entries": {"node.id": ("0", DEFAULT_CONFIG), "broker.id": ("0", DEFAULT_CONFIG)},
            }
        ],
        id="broker-id-is-the-node-id",
    ),
    pytest.param(
        describe(BROKER, "", "log.retention.ms"),
        4,
        [{"error": E.NONE, "entries": {}}],
        id="broker-empty-name-is-the-cluster-default",
    ),
    pytest.param(
        describe(BROKER, "1"), 4, [{"error": E.INVALID_REQUEST, "entries": {}}], id="another-broker-id"
    ),
    pytest.param(
        describe(BROKER, "x"), 4, [{"error": E.INVALID_REQUEST, "entries": {}}], id="broker-id-not-a-number"
    ),
    pytest.param(
        describe(3, "x"), 4, [{"error": E.INVALID_REQUEST, "entries": {}}], id="unknown-resource-type"
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), DESCRIBE_CONFIGS_CASES)
async def test_describe_configs(
    tmp_path: Path, request_: DescribeConfigsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    async with started(tmp_path, SINGLE, TOPICS) as broker:
        await assert_answer(broker, request_, version, described, expected)


@pytest.mark.trio
async def test_describe_configs_broker_id_is_the_node_id(tmp_path: Path) -> None:
    """As Kafka: node.id given, broker.id shows it as a setting given at start-up."""
    async with started(tmp_path, Setup({**BROKER_SETTINGS, "node.id": str(NODE)}), TOPICS) as broker:
        response = await wire_call(broker, describe(BROKER, str(NODE), "broker.id", "node.id"), 4)
    assert described(response)[0]["entries"] == {
        "broker.id": (str(NODE), STATIC_BROKER_CONFIG),
        "node.id": (str(NODE), STATIC_BROKER_CONFIG),
    }


@pytest.mark.trio
async def test_describe_configs_answers_each_resource(tmp_path: Path) -> None:
    request = DescribeConfigsRequest(
        resources=[
            DescribeConfigsResource(resource_type=TOPIC, resource_name="nope"),
            DescribeConfigsResource(
                resource_type=BROKER, resource_name=str(NODE), configuration_keys=["node.id"]
            ),
            DescribeConfigsResource(
                resource_type=TOPIC, resource_name=T, configuration_keys=["retention.ms"]
            ),
        ]
    )
    async with started(tmp_path, SINGLE, TOPICS) as broker:
        response = await wire_call(broker, request, 4)
    assert [(r["type"], r["name"], r["error"], r["entries"]) for r in described(response)] == [
        (TOPIC, "nope", E.UNKNOWN_TOPIC_OR_PARTITION, {}),
        (BROKER, str(NODE), E.NONE, {"node.id": ("0", DEFAULT_CONFIG)}),
        (TOPIC, T, E.NONE, {"retention.ms": ("3600000", STATIC_BROKER_CONFIG)}),
    ]


def test_broker_id_and_node_id_describe_the_id_given_under_either_name() -> None:
    # As Kafka: one id, shown under both names, whichever was set (kafka-configs --describe --all lists both).
    for given in ({"broker.id": "5"}, {"node.id": "5"}):
        described = {
            name: (value, source == DEFAULT_CONFIG)
            for name, value, source, _ in BrokerConfig.from_properties(given).describe()
        }
        assert (described["node.id"], described["broker.id"]) == (("5", False), ("5", False))
