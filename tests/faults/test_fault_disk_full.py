"""Disk full: a node's data directory on a small tmpfs (tests/faults/disks.py) filled up by a ballast file while
clients write, then freed by removing the ballast.

Expected, on the node whose disk is full:
- an append that does not fit is refused with KAFKA_STORAGE_ERROR ("no space left"), also when part of the batch
  already went in (the segment is cut back): nothing half-written stays, no segment or index is damaged;
- reads go on;
- once space is freed it serves appends again by itself, without a restart (Kafka takes the log directory offline
  until a restart: docs/kafka-differences.md).
In a cluster the other nodes keep serving: the full node falls out of the ISRs of the partitions it follows and
comes back once it can write again; nothing acknowledged is lost (kbroker.testing.history).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbroker.testing.history import Ack, check
from protocol.errors import ErrorCode
from tests.broker_process import BrokerProcess
from tests.cluster_fixture import Cluster
from tests.conftest import register_broker
from tests.etcd_process import running_etcd
from tests.faults.disks import fill, small_disk
from tests.faults.workload import (
    GroupReader,
    Outcome,
    SingleNode,
    Writer,
    dump_dir,
    judge,
    produce_to,
    read_all,
)
from tests.test_cluster_faults import wait_for_full_isrs

pytestmark = [pytest.mark.timeout(240)]

TOPIC, PARTITIONS = "full", 3


def test_single_node_refuses_writes_on_a_full_disk_and_serves_again_once_freed(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with small_disk(tmp_path / "data", "32m") as data:
        broker = BrokerProcess(data, log_path=tmp_path / "broker.log")
        register_broker(request, broker)
        broker.start()
        try:
            SingleNode(broker).create_topic(TOPIC, PARTITIONS)
            acks: list[Ack] = []

            def produce(partition: int, values: list[bytes]) -> tuple[int, str]:
                answer = produce_to(broker.bootstrap, TOPIC, partition, values)
                if answer.error_code == ErrorCode.NONE:
                    acks.extend(
                        Ack(TOPIC, partition, answer.base_offset + i, v) for i, v in enumerate(values)
                    )
                return answer.error_code, answer.error_message or ""

            for p in range(PARTITIONS):
                assert produce(p, [f"before-{p}-{i}".encode() for i in range(20)])[0] == ErrorCode.NONE
            ballast = fill(data)
            for p in range(PARTITIONS):
                # A batch larger than a page: some of it may fit, then the disk is full mid-write.
                code, message = produce(p, [f"full-{p}-{i}".encode() * 100 for i in range(10)])
                assert code == ErrorCode.KAFKA_STORAGE_ERROR, (code, message)  # no message: as Kafka
            # Reads go on.
            assert len(read_all(broker.bootstrap, TOPIC, PARTITIONS)) == 20 * PARTITIONS
            ballast.unlink()
            for p in range(PARTITIONS):
                code, message = produce(p, [f"after-{p}-{i}".encode() * 100 for i in range(10)])
                assert code == ErrorCode.NONE, (code, message)
            read = read_all(broker.bootstrap, TOPIC, PARTITIONS)
        finally:
            broker.stop()
        text = broker.log_text()
        assert "taking the log offline" not in text
        assert f"{TOPIC}-0: no space left on the disk: refusing appends until there is" in text
        assert f"{TOPIC}-0: space on the disk again: appends accepted" in text
        on_disk = dump_dir(data, TOPIC, PARTITIONS, "disk")
    verdict = check(acks, read + on_disk, start_offset=0)
    assert verdict.valid, verdict.report()
    assert verdict.unacknowledged_present == 0  # nothing of the refused batches was kept


@pytest.fixture
def cluster_with_small_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_etcd() as etcd, small_disk(tmp_path / "node3", "64m"):
        cluster = Cluster(tmp_path, etcd, 3, request=request)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()


@pytest.mark.cluster
def test_a_full_node_leaves_the_isrs_the_others_serve_and_it_comes_back(
    cluster_with_small_disk: Cluster, tmp_path: Path
) -> None:
    cluster = cluster_with_small_disk
    full = 3
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    reader = GroupReader(cluster.bootstrap, TOPIC, "full-group").start()
    try:
        writer.wait_for_progress(100)
        ballast = fill(cluster.node(full).data_dir)
        # The others drop the full node from their ISRs (it cannot append what it fetches) and go on.
        cluster.wait_until(
            lambda d: all(full not in p.isr for p in d.topics[TOPIC].partitions if p.leader != full),
            "the full node to leave the ISRs of the partitions others lead",
        )
        led_by_full = [
            p.partition for p in cluster.describe([TOPIC]).topics[TOPIC].partitions if p.leader == full
        ]
        for p in led_by_full:
            answer = produce_to(cluster.node(full).bootstrap, TOPIC, p, [b"x" * 10_000])
            assert answer.error_code == ErrorCode.KAFKA_STORAGE_ERROR, answer
        before = {p: n for p, n in writer_counts(writer).items()}
        time.sleep(2)
        served = [
            p for p, n in writer_counts(writer).items() if p not in led_by_full and n > before.get(p, 0)
        ]
        assert served or not [p for p in range(PARTITIONS) if p not in led_by_full], (
            "the other partitions stalled"
        )
        ballast.unlink()
        wait_for_full_isrs(cluster)
        writer.wait_for_progress(100)
    finally:
        unflushed = writer.stop()
        reader.stop()
    assert unflushed == 0
    assert not writer.failed, writer.failed[:5]
    assert "taking the log offline" not in cluster.node(full).log_text()
    judge(cluster, TOPIC, PARTITIONS, Outcome(writer.acks, reader.reads, reader.commits), tmp_path)


def writer_counts(writer: Writer) -> dict[int, int]:
    counts: dict[int, int] = {}
    for ack in list(writer.acks):
        counts[ack.partition] = counts.get(ack.partition, 0) + 1
    return counts
