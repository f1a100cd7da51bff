"""The Java client 3.9 beyond produce/consume (which test_roundtrip covers): the Admin calls Spark's driver makes
(describeTopics, describeCluster, listOffsets earliest/latest/forTimestamp) and the executor's read path.
"""

from __future__ import annotations

import pytest

from compat.clients.java import JavaHarness
from compat.records import BASE_TIMESTAMP_MS, make_records, to_line
from compat.target import Target

pytestmark = pytest.mark.timeout(300)

PARTITIONS = 4


def produce(harness: JavaHarness, target: Target, topic: str, count: int) -> None:
    records = make_records(count, PARTITIONS)
    lines = harness.run(
        target.bootstrap, "produce", topic, str(count), stdin="".join(to_line(r) + "\n" for r in records)
    )
    assert lines[-1] == {"sent": count, "acknowledged": count, "failed": 0}


def test_admin_describe_topic_and_cluster(target: Target, java_harness: JavaHarness) -> None:
    topic = target.topic("java-describe")
    java_harness.run(target.bootstrap, "admin-create", topic, "8")
    described, cluster = java_harness.run(target.bootstrap, "admin-describe", topic)

    assert described["topic"] == topic
    assert described["internal"] is False
    partitions = described["partitions"]
    assert [p["partition"] for p in partitions] == list(range(8))
    node_ids = {node["id"] for node in cluster["nodes"]}
    for partition in partitions:
        assert partition["leader"] in node_ids, partition
        assert partition["leader"] in partition["isr"], partition
        assert partition["replicas"], partition

    assert cluster["cluster_id"], cluster
    assert cluster["controller"] in node_ids, cluster
    if target.process is not None:
        # A single broker started here (kbroker or Apache Kafka) advertises the address it listens on.
        assert [f"{n['host']}:{n['port']}" for n in cluster["nodes"]] == [target.bootstrap]


def test_list_offsets_earliest_latest_and_by_timestamp(target: Target, java_harness: JavaHarness) -> None:
    count = 400
    topic = target.topic("java-list-offsets")
    java_harness.run(target.bootstrap, "admin-create", topic, str(PARTITIONS))
    produce(java_harness, target, topic, count)
    # Record i is in partition i % 4 at offset i // 4 with timestamp BASE + i.
    before_all, middle, after_all = (
        BASE_TIMESTAMP_MS - 1,
        BASE_TIMESTAMP_MS + 201,
        BASE_TIMESTAMP_MS + 10 * count,
    )
    lines = java_harness.run(
        target.bootstrap, "list-offsets", topic, str(before_all), str(middle), str(after_all)
    )

    assert [line["partition"] for line in lines] == list(range(PARTITIONS))
    for line in lines:
        p = line["partition"]
        assert (line["earliest"], line["latest"]) == (0, count // PARTITIONS), line
        by_timestamp = line["for_timestamp"]
        # First record of the partition.
        assert by_timestamp[str(before_all)] == {"offset": 0, "timestamp": BASE_TIMESTAMP_MS + p}
        # First record with timestamp >= BASE + 201: index 201..204, whichever falls in this partition.
        first = next(i for i in range(201, 205) if i % PARTITIONS == p)
        assert by_timestamp[str(middle)] == {
            "offset": first // PARTITIONS,
            "timestamp": BASE_TIMESTAMP_MS + first,
        }
        # Nothing that late: offset -1 (Spark reads this as "no such offset").
        assert by_timestamp[str(after_all)]["offset"] == -1


def test_spark_executor_read_path(target: Target, java_harness: JavaHarness) -> None:
    """consume = per partition: seek, poll, position, seekToBeginning/position, seekToEnd/position per fetch."""
    count = 2_000
    topic = target.topic("java-spark-read")
    java_harness.run(target.bootstrap, "admin-create", topic, str(PARTITIONS))
    produce(java_harness, target, topic, count)
    lines = java_harness.run(target.bootstrap, "consume", topic, str(count))

    summaries = [line for line in lines if "complete" in line]
    assert [s["partition"] for s in summaries] == list(range(PARTITIONS))
    for summary in summaries:
        assert summary["complete"] is True, summary
        assert (summary["from"], summary["until"]) == (0, count // PARTITIONS), summary
    records = [line for line in lines if "offset" in line]
    assert len(records) == count
    assert {r["timestamp_type"] for r in records} == {"CreateTime"}
