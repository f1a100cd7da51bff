"""kafka-configs --describe (a topic and the broker, their dynamic configs and --all) and kafka-get-offsets
(latest, earliest, max timestamp, by timestamp) against each target.

kbroker's --all lists fewer configs than Kafka (docs/kafka-differences.md: the topic configs it honours or stores,
the broker settings of `kbroker serve --help`); every one it lists must have Kafka's value, which the tests check on
both with the same table.
"""

from __future__ import annotations

import time

import pytest

from compat.kafka import major
from compat.kafka.tools import KafkaTools
from compat.target import Target
from compat.tools_support import node_id, produce
from protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(300)

TOPIC_CONFIGS = {"cleanup.policy": "compact", "retention.ms": "3600000"}
# Topic configs with Kafka 3.9's and 4.3's defaults (on the brokers compat starts), all of which kbroker lists.
TOPIC_DEFAULTS = {
    "delete.retention.ms": "86400000",
    "index.interval.bytes": "4096",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "retention.bytes": "-1",
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}
# Broker settings both list with the same value (the node id is checked apart).
BROKER_VALUES = {
    "auto.create.topics.enable": "true",
    "delete.topic.enable": "true",
    "log.retention.hours": "168",
    "log.segment.bytes": "1073741824",
    "message.max.bytes": "1048588",
    "num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
}


def config_lines(text: str) -> dict[str, str]:
    """name -> value of the `  name=value sensitive=… synonyms={…}` lines of kafka-configs --describe."""
    out = {}
    for line in text.splitlines():
        if line.startswith("  ") and "=" in line:
            name, _, rest = line.strip().partition("=")
            out[name] = rest.split(" sensitive=", 1)[0]
    return out


def test_kafka_configs_describe(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-configs")
    target.create_topic(topic, 1, TOPIC_CONFIGS)
    node = str(node_id(target))

    def describe(*args: str) -> str:
        return kafka_tools.run(
            "kafka-configs", "--bootstrap-server", target.bootstrap, "--describe", *args
        ).stdout

    dynamic = describe("--entity-type", "topics", "--entity-name", topic)
    assert f"Dynamic configs for topic {topic} are:" in dynamic
    assert config_lines(dynamic) == TOPIC_CONFIGS, dynamic
    assert (
        "synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}"
        in dynamic
    )

    every = config_lines(describe("--entity-type", "topics", "--entity-name", topic, "--all"))
    expected = {**TOPIC_DEFAULTS, **TOPIC_CONFIGS}
    assert {name: every.get(name) for name in expected} == expected

    broker = describe("--entity-type", "brokers", "--entity-name", node)
    assert broker.strip() == f"Dynamic configs for broker {node} are:", broker
    defaults = describe("--entity-type", "brokers", "--entity-default")
    default_lines = config_lines(defaults)
    if target.name.startswith("kafka") and major(kafka_tools.version) >= 4:
        # Kafka 4 writes min.insync.replicas as a cluster-wide dynamic default when it enables eligible leader
        # replicas (KIP-966); kbroker, like Kafka 3.9, has no dynamic broker configs.
        assert default_lines == {"min.insync.replicas": "1"}, defaults
    else:
        assert default_lines == {}, defaults

    static = config_lines(describe("--entity-type", "brokers", "--entity-name", node, "--all"))
    assert {name: static.get(name) for name in BROKER_VALUES} == BROKER_VALUES
    assert (static.get("node.id"), static.get("broker.id")) == (node, node)


def test_kafka_get_offsets(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-offsets")
    target.create_topic(topic, 2)
    base = int(time.time() * 1000) - 3_600_000
    # p0: offsets 0-4 stamped base, base+10, …, base+40 with the largest (base+100) at offset 2; p1: empty
    stamps = [base, base + 10, base + 100, base + 30, base + 40]
    batches = [stamps[:3], stamps[3:]]
    produce(target, topic, 0, [bytes(build_batch([Record(offset=i, timestamp=t, key=None, value=b"x")
                                                  for i, t in enumerate(batch)])) for batch in batches])  # fmt: skip

    def offsets(*args: str) -> list[str]:
        result = kafka_tools.run(
            "kafka-get-offsets", "--bootstrap-server", target.bootstrap, "--topic", topic, *args
        )
        return sorted(result.stdout.split())

    assert offsets() == [f"{topic}:0:5", f"{topic}:1:0"]  # latest (-1), the default
    assert offsets("--time", "-2") == [f"{topic}:0:0", f"{topic}:1:0"]
    # The max timestamp (KIP-734): the record that carries it.
    assert offsets("--time", "-3", "--partitions", "0") == [f"{topic}:0:2"]
    # By timestamp: the first offset whose timestamp is at or after it; none after the last one.
    # (offset 2, stamped base+100, comes before offset 3, stamped base+30)
    assert offsets("--time", str(base + 20), "--partitions", "0") == [f"{topic}:0:2"]
    assert offsets("--time", str(base + 101), "--partitions", "0") == []
