"""Every stock client's admin API, the same assertions against kbroker and Apache Kafka: create a topic with topic
configs, describe it, list it, describe its configs, list offsets (earliest, latest, max timestamp, by timestamp),
delete it and see it gone.

Each client runs its whole list of operations in one go (compat/clients/ops.py; the Java client in one JVM). What a
client has no API for is asserted as such: kcat creates, configures and deletes nothing (its topic is created with
confluent-kafka's AdminClient), kcat and kafka-python 2.0.2 have no max-timestamp query and print no timestamps
with their offsets, kafka-python 2.0.2's DescribeConfigs (v0-v2 era API) hands back no config sources. franz-go's
kadm answers a timestamp after every record with the end offset where the broker said -1 (ListOffsetsAfterMilli's
documented fallback).

DescribeConfigs: kbroker lists fewer topic configs than Kafka (the ones it honours or stores,
docs/kafka-differences.md); the ones it lists must have Kafka's values and sources. Kafka 4.x reports
`min.insync.replicas` as DYNAMIC_DEFAULT_BROKER_CONFIG (its storage format writes a cluster-wide default), 3.9 and
kbroker as DEFAULT_CONFIG: that config's source is not compared.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat.clients.confluent import create_topic as confluent_create_topic
from compat.clients.ops import UNSUPPORTED, Result
from compat.records import BASE_TIMESTAMP_MS
from compat.scenarios import CLIENTS, make_ops, produce
from compat.target import Target

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 3
RECORDS = 30  # record i: partition i % 3, timestamp BASE + 10 * i; so partition 0 holds i = 0, 3, ... 27
TOPIC_CONFIGS = {"retention.ms": "3600000", "cleanup.policy": "compact", "max.message.bytes": "65536"}
# Defaults every target lists with these values and source DEFAULT_CONFIG.
DEFAULTS = {
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
    "retention.bytes": "-1",
    "delete.retention.ms": "86400000",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "message.timestamp.type": "CreateTime",
    "index.interval.bytes": "4096",
    "unclean.leader.election.enable": "false",
}
# What kbroker lists beyond those: compared by value only (see the module's docstring).
VALUE_ONLY = {"min.insync.replicas": "1"}

NO_ADMIN = {"kcat"}  # no CreateTopics, DescribeConfigs or DeleteTopics
NO_MAX_TIMESTAMP = {"kcat", "kafka-python-2.0.2"}
NO_TIMESTAMPS = {"kcat"}  # -Q prints offsets only
NO_CONFIG_SOURCES = {"kafka-python-2.0.2"}


def ok(result: Result) -> Result:
    assert "error" not in result, result
    return result


def offsets_expected(client: str, spec: str) -> dict[str, Any]:
    """ListOffsets of partition 0 (offset k holds timestamp BASE + 30 k) as the client shows it."""
    last = RECORDS // PARTITIONS - 1
    answers = {
        "earliest": (0, -1),
        "latest": (last + 1, -1),
        "max": (last, BASE_TIMESTAMP_MS + 30 * last),
        # The first record at or after BASE + 31: offset 2 (BASE + 60).
        str(BASE_TIMESTAMP_MS + 31): (2, BASE_TIMESTAMP_MS + 60),
        # Nothing that late.
        str(BASE_TIMESTAMP_MS + 10_000): (-1, -1),
    }
    offset, timestamp = answers[spec]
    if client == "franz-go" and offset == -1:
        offset = last + 1  # kadm asks again for the end offset
    if client in NO_TIMESTAMPS or (client == "kafka-python-2.0.2" and spec in ("earliest", "latest")):
        # beginning_offsets / end_offsets give offsets only
        return {"op": "offsets", "offset": offset}
    return {"op": "offsets", "offset": offset, "timestamp": timestamp}


@pytest.mark.parametrize("client", CLIENTS)
def test_topic_lifecycle_configs_and_offsets(
    target: Target, client: str, request: pytest.FixtureRequest
) -> None:
    ops = make_ops(client, request.getfixturevalue)
    topic = target.topic(f"admin-{client}")
    configs = [f"{name}={value}" for name, value in TOPIC_CONFIGS.items()]
    if client in NO_ADMIN:
        assert (
            ops.one(target.bootstrap, ("create", topic, str(PARTITIONS), "1", *configs))["error"]
            == UNSUPPORTED
        )
        confluent_create_topic(target.bootstrap, topic, PARTITIONS)
    else:
        ok(ops.one(target.bootstrap, ("create", topic, str(PARTITIONS), "1", *configs)))
    target.wait_topic_ready(topic, PARTITIONS)
    produce(
        target.bootstrap,
        topic,
        [(i % PARTITIONS, b"%d" % i, BASE_TIMESTAMP_MS + 10 * i) for i in range(RECORDS)],
    )

    specs = ["earliest", "latest", "max", str(BASE_TIMESTAMP_MS + 31), str(BASE_TIMESTAMP_MS + 10_000)]
    describe, topics, described_configs, *offsets, delete, gone = ops.run(
        target.bootstrap,
        [
            ("describe", topic),
            ("topics",),
            ("configs", topic),
            *[("offsets", topic, "0", spec) for spec in specs],
            ("delete", topic),
            ("wait-gone", topic, "30000"),
        ],
    )

    assert ok(describe)["partitions"] == list(range(PARTITIONS))
    assert describe["replicas"] == [1] * PARTITIONS
    for spec, answer in zip(specs, offsets, strict=True):
        if spec == "max" and client in NO_MAX_TIMESTAMP:
            assert answer["error"] == UNSUPPORTED
        else:
            assert answer == offsets_expected(client, spec), spec

    if client in NO_ADMIN:
        assert (
            topics["error"] == described_configs["error"] == delete["error"] == gone["error"] == UNSUPPORTED
        )
        return
    assert topic in ok(topics)["topics"]

    values = ok(described_configs)["configs"]
    assert {name: values.get(name) for name in TOPIC_CONFIGS} == TOPIC_CONFIGS
    assert {name: values.get(name) for name in DEFAULTS} == DEFAULTS
    assert {name: values.get(name) for name in VALUE_ONLY} == VALUE_ONLY
    if client not in NO_CONFIG_SOURCES:
        sources = described_configs["sources"]
        assert {name: sources[name] for name in TOPIC_CONFIGS} == dict.fromkeys(
            TOPIC_CONFIGS, "DYNAMIC_TOPIC_CONFIG"
        )
        assert {name: sources[name] for name in DEFAULTS} == dict.fromkeys(DEFAULTS, "DEFAULT_CONFIG")

    ok(delete)
    assert ok(gone)["gone"] is True
