"""Kafka's admin tools against each single-node target, with the same outcome: kafka-configs --alter of a topic
(--add-config, --delete-config), kafka-delete-records, kafka-log-dirs. kafka-configs --alter of brokers,
kafka-reassign-partitions and kafka-leader-election run against three nodes in compat/test_cluster_admin.py (and
broker configs through the Java Admin and confluent-kafka in compat/test_admin_apis.py); each tool run costs a JVM
start, so each is run where it says the most.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from compat.kafka.tools import KafkaTools
from compat.target import Target
from compat.test_tools_configs_offsets import config_lines
from compat.tools_support import node_id, produce
from protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(300)


def configs(tools: KafkaTools, target: Target, *entity: str) -> dict[str, str]:
    out = tools.run("kafka-configs", "--bootstrap-server", target.bootstrap, "--describe", *entity).stdout
    return config_lines(out)


def eventually(
    tools: KafkaTools, target: Target, entity: tuple[str, ...], expected: dict[str, str | None]
) -> None:
    """kafka-configs --describe until it lists `expected` (None: not listed). Kafka's broker describes a change a
    moment after its controller accepted it."""
    deadline = time.monotonic() + 30
    while True:
        seen = configs(tools, target, *entity)
        if {name: seen.get(name) for name in expected} == expected:
            return
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)


def test_kafka_configs_alter(target: Target, kafka_tools: KafkaTools) -> None:
    tools, bootstrap = kafka_tools, target.bootstrap
    topic = target.topic("tools-alter")
    target.create_topic(topic, 1)
    entity = ("--entity-type", "topics", "--entity-name", topic)
    altered = tools.run("kafka-configs", "--bootstrap-server", bootstrap, "--alter", *entity,
                        "--add-config", "retention.ms=7200000,cleanup.policy=[delete,compact]")  # fmt: skip
    assert f"Completed updating config for topic {topic}." in altered.stdout, altered.report()
    eventually(tools, target, entity, {"retention.ms": "7200000", "cleanup.policy": "delete,compact"})
    tools.run(
        "kafka-configs",
        "--bootstrap-server",
        bootstrap,
        "--alter",
        *entity,
        "--delete-config",
        "retention.ms",
    )
    eventually(tools, target, entity, {"retention.ms": None, "cleanup.policy": "delete,compact"})


def test_kafka_delete_records_and_log_dirs(target: Target, kafka_tools: KafkaTools, tmp_path: Path) -> None:
    tools, bootstrap = kafka_tools, target.bootstrap
    topic = target.topic("tools-trim")
    target.create_topic(topic, 2)
    # (timestamps of now: the targets run retention every half second, and 7 days keep them)
    now = int(time.time() * 1000)
    batches = [bytes(build_batch([Record(0, now + i, None, b"v" * 100)])) for i in range(5)]
    produce(target, topic, 0, batches)

    plan = tmp_path / "offsets.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": 3}]}))
    deleted = tools.run(
        "kafka-delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", str(plan)
    )
    assert re.search(rf"partition: {re.escape(topic)}-0\s+low_watermark: 3", deleted.stdout), deleted.report()

    described = tools.run(
        "kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list", topic
    )
    document = json.loads(next(line for line in described.stdout.splitlines() if line.startswith("{")))
    (broker,) = document["brokers"]
    assert broker["broker"] == node_id(target)
    (log_dir,) = broker["logDirs"]
    assert log_dir["error"] is None
    sizes = {p["partition"]: (p["size"], p["offsetLag"], p["isFuture"]) for p in log_dir["partitions"]}
    assert set(sizes) == {f"{topic}-0", f"{topic}-1"}
    assert sizes[f"{topic}-0"][0] > 0
    assert sizes[f"{topic}-1"] == (0, 0, False)
