"""Network partitions, one-way cuts, lossy and slow links, between nodes and between nodes and etcd
(tests/faults/netns.py: every member in a network namespace of its own, nftables and tc break the links).

Throughout, an idempotent acks=all producer (confluent-kafka) writes and a consumer group reads and commits; the
clients are never cut off. After each fault the scenario waits for the event that shows the cluster saw it (an ISR
shrink, a registration that lapsed), heals, and waits until every partition is back in sync on all three nodes. At the
end kbroker.testing.history judges everything the clients saw against every replica's log (tests/faults/workload.py).

Expected behaviour, as in Kafka:
- a leader cut off from its followers but not from etcd keeps its leadership and shrinks the ISR to itself (after
  `replica.lag.time.max.ms`): acks=all writes to it are refused (NOT_ENOUGH_REPLICAS, min.insync.replicas=2) until
  the partition heals; the other partitions drop it from their ISRs and go on;
- a node cut off from etcd (not from its peers) loses its registration after `broker.session.timeout.ms`, like a
  dead one: its leaderships move; it is *not* ended sooner by the failure detector (its listener still answers);
- a one-way cut (followers cannot reach the leader) shrinks the ISR like a two-way one;
- 20 % packet loss between all nodes and a 2 Mbit/s link slow everything down but lose nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kbroker.replication.topics_tool import ClusterDescription, describe
from tests.faults.harness import FaultCluster, fault_cluster
from tests.faults.workload import GroupReader, Outcome, Writer, judge

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

TOPIC, PARTITIONS = "net", 3
# The fixture's timings (tests/cluster_fixture.py): a lapsed registration after 3 s, an ISR shrink after 5 s.
SESSION_TIMEOUT_S = 3.0


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[FaultCluster]:
    with fault_cluster(tmp_path, request) as c:
        yield c


def wait_via(
    cluster: FaultCluster,
    via: list[int],
    predicate: Callable[[ClusterDescription], bool],
    what: str,
    timeout: float = 30.0,
) -> ClusterDescription:
    """Poll Metadata from the given nodes only (a node cut off from etcd serves stale metadata)."""
    bootstrap = ",".join(cluster.node(i).bootstrap for i in via)
    deadline = time.monotonic() + timeout
    last: ClusterDescription | None = None
    while time.monotonic() < deadline:
        try:
            last = describe(bootstrap, timeout_s=2.0)
            if predicate(last):
                return last
        except Exception:  # a node busy with the fault: ask again
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last metadata: {last}")


def isr(d: ClusterDescription, partition: int) -> tuple[int, ...]:
    return d.topics[TOPIC].partitions[partition].isr


def leader(d: ClusterDescription, partition: int) -> int:
    return d.topics[TOPIC].partitions[partition].leader


def in_sync(d: ClusterDescription) -> bool:
    return len(d.brokers) == 3 and all(
        p.leader >= 0 and len(p.isr) == 3 for t in d.topics.values() for p in t.partitions
    )


def heal_and_resync(cluster: FaultCluster, writer: Writer) -> None:
    cluster.net.heal()
    wait_via(cluster, [1, 2, 3], in_sync, "every partition back in sync on three nodes", timeout=60)
    before = len(writer.acks)
    deadline = time.monotonic() + 30
    while len(writer.acks) <= before:
        assert time.monotonic() < deadline, f"no acknowledged write after healing: {writer.failed[-5:]}"
        time.sleep(0.1)


def test_partitions_one_way_cuts_and_lossy_links(cluster: FaultCluster, tmp_path: Path) -> None:
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    reader = GroupReader(cluster.bootstrap, TOPIC, "net-group").start()
    outcome = Outcome()
    try:
        time.sleep(2)

        # 1. The leader of partition 0 cut off from its followers, not from etcd or the clients.
        d = cluster.describe([TOPIC])
        isolated = leader(d, 0)
        others = [i for i in cluster.nodes if i != isolated]
        cluster.net.isolate(cluster.member(isolated), from_=cluster.peers(isolated))
        shrunk = wait_via(
            cluster, others, lambda d: isr(d, 0) == (isolated,), "the isolated leader alone in its ISR"
        )
        assert leader(shrunk, 0) == isolated  # still registered (etcd reachable): still the leader
        wait_via(
            cluster, others,
            lambda d: all(isolated not in p.isr for p in d.topics[TOPIC].partitions if p.leader != isolated),
            "the other partitions' leaders to drop the isolated node",
        )  # fmt: skip
        heal_and_resync(cluster, writer)

        # 2. A follower cut off from etcd, not from its peers: judged by the session timeout, no sooner.
        d = cluster.describe([TOPIC])
        cut_off = next(i for i in cluster.nodes if i != leader(d, 0))
        others = [i for i in cluster.nodes if i != cut_off]
        cut_at = time.monotonic()
        cluster.net.cut(cluster.member(cut_off), "etcd")
        wait_via(
            cluster,
            others,
            lambda d: cut_off not in d.brokers,
            "the registration of the node cut off from etcd",
        )
        lapsed_after = time.monotonic() - cut_at
        # The lease was last refreshed at most a third of its TTL before the cut.
        assert lapsed_after >= SESSION_TIMEOUT_S * 2 / 3 - 0.3, lapsed_after
        for i in others:
            assert "is gone" not in cluster.node(i).log_text(), "a partitioned node was judged dead"
        wait_via(
            cluster, others,
            lambda d: all(cut_off not in p.isr and p.leader != cut_off for p in d.topics[TOPIC].partitions),
            "the node cut off from etcd to leave every ISR",
        )  # fmt: skip
        heal_and_resync(cluster, writer)

        # 3. One way: the followers' packets to the leader of partition 1 are dropped, the leader's get through.
        d = cluster.describe([TOPIC])
        one_way = leader(d, 1)
        for peer in cluster.peers(one_way):
            cluster.net.cut(peer, cluster.member(one_way), both_ways=False)
        others = [i for i in cluster.nodes if i != one_way]
        wait_via(cluster, others, lambda d: isr(d, 1) == (one_way,), "the ISR to shrink under a one-way cut")
        heal_and_resync(cluster, writer)

        # 4. 20 % loss on every link between nodes, and a slow link: slower, nothing lost.
        members = [cluster.member(i) for i in cluster.nodes]
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                cluster.net.lossy(a, b, 20)
        cluster.net.limit(members[0], "2mbit")
        before = len(writer.acks)
        deadline = time.monotonic() + 30
        while len(writer.acks) < before + 200:
            assert time.monotonic() < deadline, f"no progress over lossy links: {writer.failed[-5:]}"
            time.sleep(0.2)
        heal_and_resync(cluster, writer)
    finally:
        unflushed = writer.stop()
        reader.stop()
    assert unflushed == 0, f"{unflushed} deliveries never reported"
    assert not writer.failed, writer.failed[:5]
    assert reader.served() > 0
    outcome.acks, outcome.reads, outcome.commits = writer.acks, reader.reads, reader.commits
    judge(cluster, TOPIC, PARTITIONS, outcome, tmp_path)
