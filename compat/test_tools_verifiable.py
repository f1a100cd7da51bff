"""The tools Kafka's own system tests use, against each target: kafka-verifiable-producer and
kafka-verifiable-consumer (every acknowledged value is consumed by a consumer group: no loss), and
kafka-producer-perf-test / kafka-consumer-perf-test (small counts: they finish and report them).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from compat.kafka.tools import KafkaTools, ToolResult
from compat.target import Target

pytestmark = pytest.mark.timeout(300)

RECORDS = 1000
PARTITIONS = 3


def events(result: ToolResult) -> list[dict[str, Any]]:
    """The JSON events (one per line) a verifiable tool printed on stdout."""
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def test_verifiable_producer_and_consumer_lose_nothing(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-verifiable")
    group = target.topic("tools-verifiable-group")
    target.create_topic(topic, PARTITIONS)

    produced = kafka_tools.run(
        "kafka-verifiable-producer", "--bootstrap-server", target.bootstrap, "--topic", topic,
        "--max-messages", str(RECORDS), "--acks", "-1",
    )  # fmt: skip
    sent = events(produced)
    acked = {(e["partition"], e["offset"]): e["value"] for e in sent if e["name"] == "producer_send_success"}
    errors = [e for e in sent if e["name"] == "producer_send_error"]
    assert not errors, produced.report()
    summary = [e for e in sent if e["name"] == "tool_data"]
    assert [(s["sent"], s["acked"]) for s in summary] == [(RECORDS, RECORDS)], produced.report()
    assert sorted(acked.values(), key=int) == [str(i) for i in range(RECORDS)]
    # Offsets are dense from 0 in each partition the producer used.
    for partition, count in Counter(p for p, _ in acked).items():
        assert sorted(o for p, o in acked if p == partition) == list(range(count))

    consumed = kafka_tools.run(
        "kafka-verifiable-consumer", "--bootstrap-server", target.bootstrap, "--topic", topic,
        "--group-id", group, "--max-messages", str(RECORDS), "--reset-policy", "earliest", "--verbose",
    )  # fmt: skip
    read = events(consumed)
    records = {(e["partition"], e["offset"]): e["value"] for e in read if e["name"] == "record_data"}
    assert records == acked, consumed.report()
    assert sum(e["count"] for e in read if e["name"] == "records_consumed") == RECORDS
    # Its commits succeeded and reached the end of every partition it read.
    commits = [e for e in read if e["name"] == "offsets_committed"]
    assert commits, consumed.report()
    assert all(c["success"] for c in commits), consumed.report()
    committed = {(o["partition"]): o["offset"] for c in commits for o in c["offsets"]}
    assert committed == dict(Counter(p for p, _ in acked)), consumed.report()


def test_perf_tools_finish_and_report_their_counts(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-perf")
    target.create_topic(topic, PARTITIONS)
    producer = kafka_tools.run(
        "kafka-producer-perf-test", "--topic", topic, "--num-records", str(RECORDS), "--record-size", "100",
        "--throughput", "-1", "--producer-props", f"bootstrap.servers={target.bootstrap}", "acks=all",
    )  # fmt: skip
    assert f"{RECORDS} records sent," in producer.stdout, producer.report()

    consumer = kafka_tools.run(
        "kafka-consumer-perf-test", "--bootstrap-server", target.bootstrap, "--topic", topic,
        "--messages", str(RECORDS), "--timeout", "60000",
    )  # fmt: skip
    lines = [line.split(", ") for line in consumer.stdout.splitlines() if ", " in line]
    header, values = lines[0], lines[1]
    report = dict(zip(header, values, strict=True))
    assert int(report["data.consumed.in.nMsg"]) == RECORDS, consumer.report()
    assert float(report["data.consumed.in.MB"]) == pytest.approx(RECORDS * 100 / 1024 / 1024, abs=0.0001)
