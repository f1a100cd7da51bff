"""Replication under harder faults than one kill: a paused leader that wakes up deposed, etcd unreachable for longer
than the session timeout (every node loses its registration and joins again), the whole cluster killed at once, and a
topic deleted and re-created while a replica was away.
In each case nothing acknowledged with acks=all is lost and the cluster serves again on its own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from protocol.errors import ErrorCode
from tests.cluster_fixture import Cluster, running_cluster
from tests.test_groups_support import wait_for
from tests.test_replication_cluster import consume_all, raw_produce, read_log

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_cluster(tmp_path, request=request) as c:
        yield c


def produce_acked(cluster: Cluster, topic: str, values: list[bytes], timeout: float = 30.0) -> None:
    """acks=-1 one value at a time to whoever leads partition 0, retrying retriable errors until each is acked."""
    deadline = time.monotonic() + timeout
    for value in values:
        while True:
            try:
                leader = cluster.partition(topic, 0).leader
                if leader in cluster.running():
                    code = raw_produce(cluster, leader, topic, 0, [value], acks=-1)
                    if code == ErrorCode.NONE:
                        break
            except Exception:  # the node went away mid-request
                pass
            assert time.monotonic() < deadline, f"could not produce {value!r} within {timeout}s"
            time.sleep(0.1)


def test_paused_leader_wakes_up_deposed_and_rejoins(cluster: Cluster) -> None:
    cluster.create_topic("paused", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"})
    before = cluster.partition("paused", 0)
    produce_acked(cluster, "paused", [f"before-{i}".encode() for i in range(20)])

    cluster.pause(before.leader)  # SIGSTOP: no keepalives, no answers
    try:
        after = cluster.wait_for_leader("paused", 0, other_than=before.leader)
        assert after.leader_epoch > before.leader_epoch
        produce_acked(cluster, "paused", [f"during-{i}".encode() for i in range(20)])
    finally:
        cluster.resume(before.leader)

    # Awake, it finds its lease gone and its leadership taken: it follows, catches up and rejoins the ISR.
    cluster.wait_for_isr("paused", 0, size=3)
    produce_acked(cluster, "paused", [f"after-{i}".encode() for i in range(20)])
    values = list(consume_all(cluster, "paused", 1))
    expected = [f"{phase}-{i}".encode() for phase in ("before", "during", "after") for i in range(20)]
    assert values == expected


def test_etcd_unreachable_longer_than_the_session_timeout(cluster: Cluster) -> None:
    cluster.create_topic("steady", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"})
    before = cluster.partition("steady", 0)
    produce_acked(cluster, "steady", [f"before-{i}".encode() for i in range(20)])

    cluster.etcd.pause()
    try:
        time.sleep(5)  # longer than broker.session.timeout.ms (3 s): every registration lapses
    finally:
        cluster.etcd.resume()

    # Every node joins again as a new incarnation; the controller elects leaders again with new epochs.
    after = cluster.wait_until(
        lambda d: (
            "steady" in d.topics
            and d.topics["steady"].partitions[0].leader >= 0
            and d.topics["steady"].partitions[0].leader_epoch > before.leader_epoch
            and len(d.brokers) == 3
        ),
        "a new leader epoch after etcd came back",
    )
    assert after.topics["steady"].partitions[0].leader_epoch > before.leader_epoch
    produce_acked(cluster, "steady", [f"after-{i}".encode() for i in range(20)])
    cluster.wait_for_isr("steady", 0, size=3)
    values = list(consume_all(cluster, "steady", 1))
    assert values == [f"{phase}-{i}".encode() for phase in ("before", "after") for i in range(20)]
    for node in cluster.running():
        assert "joining again" in cluster.node(node).log_text()


def test_whole_cluster_killed_and_restarted(cluster: Cluster) -> None:
    cluster.create_topic("durable", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"})
    produce_acked(cluster, "durable", [f"before-{i}".encode() for i in range(30)])
    for node in (1, 2, 3):
        cluster.kill(node)
    cluster.start()
    cluster.wait_for_isr("durable", 0, size=3)
    produce_acked(cluster, "durable", [f"after-{i}".encode() for i in range(10)])
    values = list(consume_all(cluster, "durable", 1))
    assert values == [f"before-{i}".encode() for i in range(30)] + [f"after-{i}".encode() for i in range(10)]


def test_topic_recreated_while_a_node_was_away_replaces_its_stale_log(cluster: Cluster) -> None:
    cluster.create_topic("reborn", partitions=1, replication_factor=3)
    produce_acked(cluster, "reborn", [f"old-{i}".encode() for i in range(10)])
    away = next(i for i in (1, 2, 3) if i != cluster.partition("reborn", 0).leader)
    cluster.kill(away)
    admin = AdminClient({"bootstrap.servers": cluster.live_bootstrap})
    admin.delete_topics(["reborn"])["reborn"].result(30)
    cluster.wait_until(lambda d: "reborn" not in d.topics, "the topic to be gone")

    # Back after the deletion it never saw: it keeps the log (a topic it does not know), until the topic is
    # created again with it as a replica; partition.metadata then names another topic id and the log is replaced.
    cluster.start_node(away)
    cluster.create_topic("reborn", partitions=1, replication_factor=3)
    produce_acked(cluster, "reborn", [f"new-{i}".encode() for i in range(3)])
    cluster.wait_for_isr("reborn", 0, size=3)
    assert list(consume_all(cluster, "reborn", 1)) == [f"new-{i}".encode() for i in range(3)]
    assert "it belongs to an earlier topic of the same name" in cluster.node(away).log_text()
    cluster.stop()
    logs = {i: read_log(cluster.node(i).data_dir, "reborn", 0) for i in (1, 2, 3)}
    assert logs[1] == logs[2] == logs[away]
    assert len(logs[away]) == 3


def test_a_lagging_follower_leaves_the_isr_and_comes_back(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # A long session and a short lag time: the follower stays registered, so only the leader's lag rule removes it.
    overrides = {"broker.session.timeout.ms": "30000", "replica.lag.time.max.ms": "2000"}
    with running_cluster(tmp_path, overrides=overrides, request=request) as cluster:
        cluster.create_topic(
            "lagging", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"}
        )
        state = cluster.partition("lagging", 0)
        follower = next(r for r in state.replicas if r != state.leader)
        cluster.pause(follower)
        try:
            # acks=-1 waits for the whole ISR: it completes once the leader has dropped the stalled follower.
            started = time.monotonic()
            assert (
                raw_produce(cluster, state.leader, "lagging", 0, [b"while stalled"], acks=-1)
                == ErrorCode.NONE
            )
            assert time.monotonic() - started > 1.0
            # The leader answered once its ISR change was committed in etcd; the node that answers Metadata learns
            # of it through its own watch, a moment later (as a Kafka broker's metadata follows the controller's).
            shrunk = wait_for(
                "the shrunk ISR in the cluster's metadata",
                lambda: p if follower not in (p := cluster.partition("lagging", 0)).isr else None,
                timeout=10,
            )
            assert len(shrunk.isr) == 2
            assert shrunk.leader_epoch == state.leader_epoch  # an ISR change is not a leader change
        finally:
            cluster.resume(follower)
        cluster.wait_for_isr("lagging", 0, size=3)
        log = cluster.node(state.leader).log_text()
        assert re.search(r"ISR of lagging-0: \[[0-9, ]+\] -> \[[0-9, ]+\]", log), log[-3000:]
        assert list(consume_all(cluster, "lagging", 1)) == [b"while stalled"]
