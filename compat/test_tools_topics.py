"""kafka-topics (TopicCommand) against each target: create, list, describe, alter partitions (CreatePartitions: the
topic grows, and a count that is not an increase is refused), delete, and the errors a user meets most (an existing
topic, an impossible replication factor, an unknown topic).
"""

from __future__ import annotations

import re
import time

import pytest

from compat.kafka import major
from compat.kafka.tools import KafkaTools
from compat.target import Target
from compat.tools_support import exceptions, node_id

pytestmark = pytest.mark.timeout(300)


def describe(tools: KafkaTools, target: Target, topic: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(the topic line's fields, one dict per partition line) of `kafka-topics --describe --topic`."""
    out = tools.run(
        "kafka-topics", "--bootstrap-server", target.bootstrap, "--describe", "--topic", topic
    ).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    return _fields(lines[0]), [_fields(line) for line in lines[1:]]


def _fields(line: str) -> dict[str, str]:
    # "Topic: t\tTopicId: x\tPartitionCount: 3\t...\tConfigs: a=1,b=2": tab-separated "Name: value" pairs
    pairs = (field.partition(":") for field in line.split("\t") if field.strip())
    return {name.strip(): value.strip() for name, _, value in pairs}


def listed(tools: KafkaTools, target: Target) -> set[str]:
    return set(tools.run("kafka-topics", "--bootstrap-server", target.bootstrap, "--list").stdout.split())


def test_create_list_describe_alter_delete(target: Target, kafka_tools: KafkaTools) -> None:
    tools, bootstrap = kafka_tools, target.bootstrap
    topic = target.topic("tools-topics")
    node = str(node_id(target))

    created = tools.run(
        "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
        "--partitions", "3", "--config", "retention.ms=3600000", "--config", "cleanup.policy=compact",
    )  # fmt: skip
    assert f"Created topic {topic}." in created.stdout
    target.wait_topic_ready(topic, 3)
    assert topic in listed(tools, target)

    head, partitions = describe(tools, target, topic)
    assert (head["Topic"], head["PartitionCount"], head["ReplicationFactor"]) == (topic, "3", "1")
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", head["TopicId"]), head
    configs = dict(item.split("=", 1) for item in head["Configs"].split(",") if item)
    if target.name.startswith("kafka") and major(tools.version) >= 4:
        # Kafka 4 stores min.insync.replicas as a cluster-wide dynamic default when it turns on eligible leader
        # replicas (KIP-966); kafka-topics shows every config that is not a static default.
        assert configs.pop("min.insync.replicas") == "1"
    assert configs == {"cleanup.policy": "compact", "retention.ms": "3600000"}
    assert [(p["Partition"], p["Leader"], p["Replicas"], p["Isr"]) for p in partitions] == [
        (str(i), node, node, node) for i in range(3)
    ]

    again = tools.run(
        "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, expect_failure=True
    )
    assert "TopicExistsException" in exceptions(again), again.report()
    too_many = tools.run(
        "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", target.topic("tools-rf"),
        "--replication-factor", "3", expect_failure=True,
    )  # fmt: skip
    assert "InvalidReplicationFactorException" in exceptions(too_many), too_many.report()

    alter = (
        "kafka-topics",
        "--bootstrap-server",
        bootstrap,
        "--alter",
        "--topic",
        topic,
        "--partitions",
        "5",
    )
    tools.run(*alter)
    target.wait_topic_ready(topic, 5)
    head, partitions = describe(tools, target, topic)
    assert head["PartitionCount"] == "5"
    assert [(p["Partition"], p["Leader"]) for p in partitions] == [(str(i), node) for i in range(5)]
    shrink = tools.run(*alter[:-1], "2", expect_failure=True)
    assert "InvalidPartitionsException" in exceptions(shrink), shrink.report()

    tools.run("kafka-topics", "--bootstrap-server", bootstrap, "--delete", "--topic", topic)
    # Deletion is asynchronous in Kafka: the brokers drop the topic once the controller has recorded it.
    deadline = time.monotonic() + 30
    while topic in listed(tools, target):
        assert time.monotonic() < deadline, f"{topic} still listed 30 s after kafka-topics --delete"
    gone = tools.run(
        "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic, expect_failure=True
    )
    assert f"Topic '{topic}' does not exist as expected" in gone.output or (
        # Kafka 3.9's TopicCommand prints the name inside its Optional
        f"Topic 'Optional[{topic}]' does not exist as expected" in gone.output
    ), gone.report()
