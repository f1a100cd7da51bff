"""What each stock client reports for bad requests, asserted the same against kbroker and Apache Kafka.

The cases: a topic that does not exist with auto-creation off, a record over the topic's max.message.bytes, invalid
topic names, an invalid partition count or replication factor, a config name that does not exist and a config value
that does not parse, a topic that already exists, a partition that does not exist. They run on the target's sibling
(compat/sibling.py: a broker of the same kind with auto.create.topics.enable=false). A last case runs on the target
itself, which auto-creates topics as Kafka does by default: there the outcome differs as docs/kafka-differences.md
says (kbroker creates the topic before answering, Kafka answers UNKNOWN_TOPIC_OR_PARTITION while creating it), and
only kcat's `-L` shows it; the test asserts each target's documented outcome.

Each client names errors its own way (compat/clients/ops.py): the tables below hold, per case, what each client
shows. None is success; "unsupported" means the client has no API for it (kcat creates and configures nothing). The
topic with max.message.bytes=1024 is created by confluent-kafka's AdminClient for every client. The cases that end
in a client-side wait for metadata that never comes (a missing topic or partition) run with the client's shortest
sensible timeouts, so the wait is the event.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from confluent_kafka.admin import AdminClient

from compat.clients.confluent import create_topic as confluent_create_topic
from compat.clients.ops import UNSUPPORTED, Result
from compat.scenarios import CLIENTS, make_ops, wait_for
from compat.sibling import Sibling
from compat.target import Target

pytestmark = pytest.mark.timeout(180)

JAVA, KP3, KP202, CONFLUENT, KCAT, FRANZ = (
    "java",
    "kafka-python",
    "kafka-python-2.0.2",
    "confluent-kafka",
    "kcat",
    "franz-go",
)
assert {JAVA, KP3, KP202, CONFLUENT, KCAT, FRANZ} == set(CLIENTS)

MAX_MESSAGE_BYTES = 1024


def row(
    java: str | None,
    kp3: str | None,
    kp202: str | None,
    confluent: str | None,
    kcat: str | None,
    franz: str | None,
) -> dict[str, str | None]:
    return {JAVA: java, KP3: kp3, KP202: kp202, CONFLUENT: confluent, KCAT: kcat, FRANZ: franz}


UNKNOWN_TOPIC = row(
    "UnknownTopicOrPartitionException",
    "UnknownTopicOrPartitionError",
    "UnknownTopicOrPartitionError",
    "UNKNOWN_TOPIC_OR_PART",
    "Broker: Unknown topic or partition",
    "UNKNOWN_TOPIC_OR_PARTITION",
)
INVALID_TOPIC = row(
    "InvalidTopicException",
    "InvalidTopicError",
    "InvalidTopicError",
    "TOPIC_EXCEPTION",
    "Broker: Invalid topic",
    "INVALID_TOPIC_EXCEPTION",
)
INVALID_TOPIC_ON_CREATE = {**INVALID_TOPIC, KCAT: UNSUPPORTED}
INVALID_PARTITIONS = row(
    "InvalidPartitionsException",
    "InvalidPartitionsError",
    "InvalidPartitionsError",
    "INVALID_PARTITIONS",
    UNSUPPORTED,
    "INVALID_PARTITIONS",
)
INVALID_REPLICATION_FACTOR = row(
    "InvalidReplicationFactorException",
    "InvalidReplicationFactorError",
    "InvalidReplicationFactorError",
    "INVALID_REPLICATION_FACTOR",
    UNSUPPORTED,
    "INVALID_REPLICATION_FACTOR",
)
INVALID_CONFIG = row(
    "InvalidConfigurationException",
    "InvalidConfigurationError",
    "InvalidConfigurationError",
    "INVALID_CONFIG",
    UNSUPPORTED,
    "INVALID_CONFIG",
)
DELIVERED = row(None, None, None, None, None, None)

# Short waits for metadata that never comes, in each client's own option names.
SHORT_WAITS: Mapping[str, Mapping[str, str]] = {
    JAVA: {"max.block.ms": "1000", "default.api.timeout.ms": "1000", "request.timeout.ms": "1000"},
    KP3: {"max_block_ms": "1000"},
    KP202: {"max_block_ms": "1000"},
    CONFLUENT: {"topic.metadata.propagation.max.ms": "1000"},
    KCAT: {"topic.metadata.propagation.max.ms": "1000"},
    # kgo fails a record for a missing topic after 4 metadata answers saying so (about a second): its defaults.
    FRANZ: {},
}


# kgo compresses with snappy by default, and the record too large for max.message.bytes is 2048 "x"s: sent
# uncompressed, as the other clients send it by default.
UNCOMPRESSED: Mapping[str, Mapping[str, str]] = {FRANZ: {"producer.compression": "none"}}


def outcomes(results: list[Result]) -> list[str | None]:
    return [result.get("error") for result in results]


@pytest.mark.parametrize("client", CLIENTS)
def test_errors_each_client_reports(sibling: Sibling, client: str, request: pytest.FixtureRequest) -> None:
    ops = make_ops(client, request.getfixturevalue)
    bootstrap = sibling.target.bootstrap
    topic = sibling.target.topic(f"errors-{client}")
    small = f"{topic}-small"  # max.message.bytes=1024
    missing = f"{topic}-missing"
    # Created (with confluent-kafka: test_admin.py tries each client's own create with configs) and served before
    # the scenario produces to it: kafka-python 2.0.2 does not retry by default.
    confluent_create_topic(bootstrap, small, 1, {"max.message.bytes": str(MAX_MESSAGE_BYTES)})
    sibling.target.wait_topic_ready(small, 1)

    cases: list[tuple[tuple[str, ...], Mapping[str, str | None]]] = [
        (("describe", missing), UNKNOWN_TOPIC),
        # kafka-python 3 hands back an empty config list for a topic that does not exist, on every broker.
        (("configs", missing), {**UNKNOWN_TOPIC, KP3: None, KCAT: UNSUPPORTED}),
        (("produce", small, "0", "100"), DELIVERED),
        (
            ("produce", small, "0", str(2 * MAX_MESSAGE_BYTES)),
            row(
                "RecordTooLargeException",
                "MessageSizeTooLargeError",
                "MessageSizeTooLargeError",
                "MSG_SIZE_TOO_LARGE",
                "Broker: Message size too large",
                "MESSAGE_TOO_LARGE",
            ),
        ),
        (("create", "bad name!", "1", "1"), INVALID_TOPIC_ON_CREATE),
        (("create", "x" * 250, "1", "1"), INVALID_TOPIC_ON_CREATE),
        (("create", "..", "1", "1"), INVALID_TOPIC_ON_CREATE),
        (("describe", "bad name!"), INVALID_TOPIC),
        (("create", f"{topic}-p0", "0", "1"), INVALID_PARTITIONS),
        (("create", f"{topic}-r0", "1", "0"), INVALID_REPLICATION_FACTOR),
        (("create", f"{topic}-r2", "1", "2"), INVALID_REPLICATION_FACTOR),  # one broker
        (("create", f"{topic}-c", "1", "1", "no.such.config=1"), INVALID_CONFIG),
        (("create", f"{topic}-v", "1", "1", "retention.ms=abc"), INVALID_CONFIG),
        (
            ("create", small, "1", "1"),
            row(
                "TopicExistsException",
                "TopicAlreadyExistsError",
                "TopicAlreadyExistsError",
                "TOPIC_ALREADY_EXISTS",
                UNSUPPORTED,
                "TOPIC_ALREADY_EXISTS",
            ),
        ),
    ]
    results = ops.run(bootstrap, [op for op, _ in cases], UNCOMPRESSED.get(client))
    assert [(op[0], error) for (op, _), error in zip(cases, outcomes(results), strict=True)] == [
        (op[0], expected[client]) for op, expected in cases
    ], results

    waits: list[tuple[tuple[str, ...], Mapping[str, str | None]]] = [
        (
            ("produce", missing, "-1", "10"),
            row(
                "TimeoutException",  # "Topic ... not present in metadata after 1000 ms."
                "KafkaTimeoutError",
                "KafkaTimeoutError",
                "UNKNOWN_TOPIC_OR_PART",
                "Broker: Unknown topic or partition",
                "UNKNOWN_TOPIC_OR_PARTITION",
            ),
        ),
        (
            ("produce", small, "7", "10"),
            # Java waits for the partition to appear; kafka-python and kgo (its manual partitioner) check the
            # partition against their metadata.
            row(
                "TimeoutException",
                "ValueError",
                "AssertionError",
                "_UNKNOWN_PARTITION",
                "Local: Unknown partition",
                "invalid record partitioning choice of 7 from 1 available",
            ),
        ),
        (
            ("offsets", small, "7", "latest"),
            # kafka-python 2.0.2's end_offsets raises a KeyError of its own for a partition it does not know; kadm
            # lists the offsets of the partitions the topic has, and so none for it.
            row(
                "TimeoutException",
                "UnknownTopicOrPartitionError",
                "KeyError",
                "_NOENT",
                "Local: Unknown partition",
                "not listed",
            ),
        ),
    ]
    results = ops.run(bootstrap, [op for op, _ in waits], SHORT_WAITS[client])
    assert [(op[0], error) for (op, _), error in zip(waits, outcomes(results), strict=True)] == [
        (op[0], expected[client]) for op, expected in waits
    ], results
    if client == JAVA:
        assert "not present in metadata" in results[0]["message"], results[0]
        assert "not present in metadata" in results[1]["message"], results[1]


@pytest.mark.parametrize("client", CLIENTS)
def test_missing_topic_on_an_auto_creating_broker(
    target: Target, client: str, request: pytest.FixtureRequest
) -> None:
    """Admin clients describe without asking for auto-creation: the topic stays unknown. kcat's `-L` lets the broker
    create it: kbroker creates it before answering and describes it; Kafka answers UNKNOWN_TOPIC_OR_PARTITION and
    creates it meanwhile (docs/kafka-differences.md, "Auto-created topics"). A producer's first record to a missing
    topic creates it on every target, except franz-go's: kgo never asks for auto-creation unless told to
    (AllowAutoTopicCreation), so it fails the record as for a broker that does not create topics."""
    ops = make_ops(client, request.getfixturevalue)
    described_topic, produced_topic = target.topic(f"auto-{client}"), target.topic(f"auto-{client}-p")
    described, produced = ops.run(
        target.bootstrap,
        [("describe", described_topic), ("produce", produced_topic, "-1", "10")],
        # Kafka may answer NOT_LEADER_OR_FOLLOWER while it creates the topic: kafka-python 2.0.2 does not retry
        # unless told to.
        {"retries": "5"} if client == KP202 else None,
    )
    if client != KCAT:
        assert described.get("error") == UNKNOWN_TOPIC[client], described
    elif target.name == "kbroker":
        assert (described.get("error"), described.get("partitions")) == (None, [0]), described
    elif target.name.startswith("kafka"):
        assert described.get("error") == UNKNOWN_TOPIC[KCAT], described
        admin = AdminClient({"bootstrap.servers": target.bootstrap})
        wait_for(
            f"Kafka to create {described_topic}",
            lambda: described_topic in admin.list_topics(timeout=10).topics,
        )
    if client == KCAT:  # kcat prints no delivery report
        assert produced.get("error") is None, produced
    elif client == FRANZ:
        assert produced.get("error") == UNKNOWN_TOPIC[FRANZ], produced
    else:
        assert (produced.get("error"), produced.get("partition"), produced.get("offset")) == (None, 0, 0), (
            produced
        )
