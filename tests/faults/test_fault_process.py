"""Process faults beyond a single kill -9: a follower and etcd paused (SIGSTOP) for a while, rolling restarts of
every node under load, every node killed at once and restarted, and a node that comes back with an empty disk.

Throughout, an idempotent acks=all producer and a consumer group run; at the end kbroker.testing.history judges
everything they saw against every replica's log (tests/faults/workload.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbroker.cluster.etcd_metadata import NEW_LOG_DIR_MARKER
from tests.cluster_fixture import Cluster, running_cluster
from tests.faults.workload import GroupReader, Outcome, Writer, judge
from tests.test_cluster_faults import wait_for_full_isrs

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

TOPIC, PARTITIONS = "process", 3


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_cluster(tmp_path, request=request) as c:
        yield c


@pytest.mark.long_faults  # ~45 s; the soak (tests/faults/soak.py) injects each of these faults at random too
def test_pauses_rolling_restarts_and_the_whole_cluster_killed(cluster: Cluster, tmp_path: Path) -> None:
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    reader = GroupReader(cluster.bootstrap, TOPIC, "process-group").start()
    try:
        writer.wait_for_progress(100)

        # A follower paused past replica.lag.time.max.ms (5 s here): it leaves the ISRs, then comes back.
        follower = next(i for i in cluster.nodes if i != cluster.partition(TOPIC, 0).leader)
        cluster.pause(follower)
        try:
            cluster.wait_until(
                lambda d: follower not in d.topics[TOPIC].partitions[0].isr,
                "the paused follower to leave the ISR",
            )
            writer.wait_for_progress(50)
        finally:
            cluster.resume(follower)
        wait_for_full_isrs(cluster)

        # etcd paused for less than the session timeout: nothing is lost, nobody is deposed for it.
        before = cluster.describe([TOPIC]).topics[TOPIC]
        cluster.etcd.pause()
        try:
            time.sleep(1.0)
        finally:
            cluster.etcd.resume()
        writer.wait_for_progress(50)
        after = cluster.describe([TOPIC]).topics[TOPIC]
        assert [p.leader_epoch for p in after.partitions] == [p.leader_epoch for p in before.partitions]

        # Rolling restart: each node stopped cleanly and started again, one after the other.
        for node_id in cluster.nodes:
            cluster.restart(node_id)
            wait_for_full_isrs(cluster)
            writer.wait_for_progress(50)

        # Every node killed at once, then all started again.
        for node_id in cluster.nodes:
            os.kill(cluster.node(node_id).pid, signal.SIGKILL)
        for node_id in cluster.nodes:
            cluster.kill(node_id)  # reaps them
        cluster.start()
        wait_for_full_isrs(cluster)
        writer.wait_for_progress(100)
    finally:
        unflushed = writer.stop()
        reader.stop()
    assert unflushed == 0
    assert not writer.failed, writer.failed[:5]
    judge(cluster, TOPIC, PARTITIONS, Outcome(writer.acks, reader.reads, reader.commits), tmp_path)


def test_a_node_returning_with_an_empty_disk_is_not_elected(cluster: Cluster, tmp_path: Path) -> None:
    """Every node crashes; the first one back has lost its disk (replaced, wiped). It was in every ISR, but its log
    did not survive: it must not be elected leader from those ISRs (its followers would truncate everything to its
    empty log). The partitions wait for a replica whose log survived, and the empty node catches up from it."""
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    before = cluster.describe([TOPIC]).topics[TOPIC]
    first = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    try:
        first.wait_for_progress(300)
    finally:
        unflushed = first.stop()
    assert unflushed == 0
    assert not first.failed, first.failed[:5]
    for node_id in cluster.nodes:
        os.kill(cluster.node(node_id).pid, signal.SIGKILL)
    for node_id in cluster.nodes:
        cluster.kill(node_id)
    empty = 1
    shutil.rmtree(cluster.node(empty).data_dir)
    cluster.start_node(empty)
    # Alone with an empty disk, once the others' registrations lapse the controller (itself) must decide each
    # partition: offline, waiting for a replica whose log survived, and not led by the empty node.
    decided = cluster.wait_until(
        lambda d: (
            set(d.brokers) == {empty}
            and all(
                p.leader_epoch > b.leader_epoch
                for p, b in zip(d.topics[TOPIC].partitions, before.partitions, strict=True)
            )
        ),
        "the controller to decide every partition with only the empty node alive",
    )
    assert all(p.leader == -1 for p in decided.topics[TOPIC].partitions), decided
    for node_id in cluster.nodes:
        if node_id != empty:
            cluster.start_node(node_id)
    wait_for_full_isrs(cluster)
    # Caught up and back in the ISRs through its leaders: its directory is an ordinary one again.
    assert not (cluster.node(empty).data_dir / NEW_LOG_DIR_MARKER).exists()
    assert (
        "the new log directory holds no stale in-sync memberships any more" in cluster.node(empty).log_text()
    )
    after = Writer(cluster.bootstrap, TOPIC, PARTITIONS, name="after").start()
    try:
        after.wait_for_progress(50)
    finally:
        unflushed = after.stop()
    assert unflushed == 0
    judge(cluster, TOPIC, PARTITIONS, Outcome(first.acks + after.acks), tmp_path)
