"""Failing disks: node 3's data directory on a PowerFS (tests/faults/powerfs.py) that injects EIO into its writes,
fsyncs and reads, and damages stored batches (a flipped bit, a torn sector in the middle of a segment).

Expected (Kafka's behaviour where it applies):
- a failed fsync or write takes that log offline (never retried: after a failed fsync the kernel may have dropped the
  pages) and its waiters get KAFKA_STORAGE_ERROR; as a follower the node stops replicating that partition and the
  leader drops it from the ISR; its other partitions and the other nodes go on;
- a failed read answers KAFKA_STORAGE_ERROR and takes the log offline, and closes no connection;
- an offline log stays offline (and led by its node, a difference from Kafka: docs/reliability.md) until the node
  restarts; then it recovers, catches up and rejoins the ISRs;
- damage at rest (a flipped bit, zeroed bytes mid-segment) is caught by the batch CRCs at recovery: the log is cut
  back before the damaged batch and the node fetches the rest again from the leader, so every replica ends up
  identical and nothing acknowledged is lost (kbroker.testing.history over reads and every replica).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kbroker.common
from kbroker.log.log_manager import partition_dir_name
from kbroker.replication.client import SyncBrokerClient, parse_host_port
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.fetch_response import FetchResponse
from tests.cluster_fixture import Cluster
from tests.conftest import missing_tool
from tests.etcd_process import running_etcd
from tests.faults.powerfs import PowerFS
from tests.faults.workload import GroupReader, Outcome, Writer, judge
from tests.test_cluster_faults import wait_for_full_isrs

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

TOPIC, PARTITIONS = "failing", 3
SICK = 3


@pytest.fixture
def cluster_with_failing_disk(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[Cluster, PowerFS]]:
    reason = PowerFS.unavailable()
    if reason is not None:
        missing_tool(reason)
    with (
        running_etcd() as etcd,
        PowerFS(tmp_path / f"node{SICK}", tmp_path / "disk.sock", tmp_path / "disk.log") as disk,
    ):
        cluster = Cluster(tmp_path, etcd, 3, request=request)
        try:
            cluster.start()
            yield cluster, disk
        finally:
            cluster.stop()


def partition_path(partition: int) -> str:
    return "/" + partition_dir_name(kbroker.common.TopicPartition(TOPIC, partition)) + "/"


def consumer_fetch(cluster: Cluster, node_id: int, partition: int) -> int:
    """A consumer's Fetch (v12) of the partition from offset 0 on that node: its error code."""
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        max_bytes=1 << 20,
        topics=[FetchTopic(topic=TOPIC, partitions=[FetchPartition(partition=partition, fetch_offset=0)])],
    )
    host, port = parse_host_port(cluster.node(node_id).bootstrap)
    with SyncBrokerClient(host, port) as client:
        response: FetchResponse = client.request(request, 12)
    return response.responses[0].partitions[0].error_code


def test_failing_fsyncs_reads_and_damaged_batches(
    cluster_with_failing_disk: tuple[Cluster, PowerFS], tmp_path: Path
) -> None:
    cluster, disk = cluster_with_failing_disk
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    reader = GroupReader(cluster.bootstrap, TOPIC, "failing-group").start()
    try:
        writer.wait_for_progress(100)
        partitions = cluster.describe([TOPIC]).topics[TOPIC].partitions
        followed = next(p.partition for p in partitions if p.leader != SICK)

        # 1. fsync fails on the sick node for a partition it follows: that log goes offline, the leader drops it.
        disk.fail("fsync", "EIO", partition_path(followed))
        cluster.wait_until(
            lambda d: SICK not in d.topics[TOPIC].partitions[followed].isr,
            "the leader to drop the node whose fsync failed",
        )
        assert f"{TOPIC}-{followed}: disk error, taking the log offline" in cluster.node(SICK).log_text()
        writer.wait_for_progress(100)  # the cluster goes on

        # 2. Reads fail on the sick node: a consumer's fetch is answered KAFKA_STORAGE_ERROR, not dropped.
        disk.heal()
        led = [p.partition for p in cluster.describe([TOPIC]).topics[TOPIC].partitions if p.leader == SICK]
        if led:
            disk.fail("read", "EIO", partition_path(led[0]))
            assert consumer_fetch(cluster, SICK, led[0]) == ErrorCode.KAFKA_STORAGE_ERROR
            disk.heal()

        # 3. The disk is replaced (the rules go), the node restarts: its offline logs recover and catch up.
        cluster.restart(SICK)
        wait_for_full_isrs(cluster)
        writer.wait_for_progress(100)

        # 3b. A write fails (EIO, not a full disk) on a partition it follows: that log goes offline as for a failed
        # fsync, the leader drops it; the restart of step 4 brings it back.
        partitions = cluster.describe([TOPIC]).topics[TOPIC].partitions
        written = next(p.partition for p in partitions if p.leader != SICK)
        offline = f"{TOPIC}-{written}: disk error, taking the log offline"
        before = cluster.node(SICK).log_text().count(offline)  # the node's log may hold step 1's line
        disk.fail("write", "EIO", partition_path(written))
        cluster.wait_until(
            lambda d: SICK not in d.topics[TOPIC].partitions[written].isr,
            "the leader to drop the node whose write failed",
        )
        assert cluster.node(SICK).log_text().count(offline) == before + 1
        writer.wait_for_progress(100)
        disk.heal()

        # 4. Damage at rest: a bit flipped in one batch, eight bytes overwritten in another, mid-segment, on a node
        # that crashed. Recovery checks the CRC of every batch it does not trust (those of a segment sealed and
        # indexed after an fsync it does trust, as Kafka does), cuts the log back before the damage, and the node
        # fetches the rest again.
        cluster.kill(SICK)
        for partition, (offset, xor) in {0: (200, 0x10), 1: (333, 0xFF)}.items():
            segment = f"{partition_path(partition)}{0:020d}.log"
            disk.corrupt(segment, offset, xor)
            if partition == 1:
                for i in range(1, 8):
                    disk.corrupt(segment, offset + i, 0xFF)
        cluster.start_node(SICK)
        wait_for_full_isrs(cluster)
        text = cluster.node(SICK).log_text()
        for partition in (0, 1):
            assert f"{TOPIC}-{partition}: cut " in text, text[-3000:]
        writer.wait_for_progress(100)
    finally:
        disk.heal()
        unflushed = writer.stop()
        reader.stop()
    assert unflushed == 0
    assert not writer.failed, writer.failed[:5]
    judge(cluster, TOPIC, PARTITIONS, Outcome(writer.acks, reader.reads, reader.commits), tmp_path)
