"""Failover time after kill -9, with the brokers' default settings, and the other side of it: a node that is only
paused is judged by the session timeout, never sooner.

A 3-node cluster (every setting at its default: `broker.session.timeout.ms` 9 s, `replica.lag.time.max.ms` 30 s)
with a topic of 6 partitions (replication factor 3, min.insync.replicas 2), so each node leads two and follows four.
One probe per partition sends a one-record acks=-1 Produce (our own codec) to the partition's leader, one after the
other, asking Metadata again after any error. A node is killed with SIGKILL, round robin, restarted and waited for
until every partition is in sync again. For each kill and partition, the failover time is from the kill until the
acknowledgement of the first probe *sent after* the kill:

- partitions the dead node led: a new leader must be elected (within 2 s is the target);
- the others: the dead node must leave their ISRs before the high watermark can move (within 0.5 s).

Without kbroker/cluster/failure_detector.py both wait for the registration to lapse, 6 to 9 s after the kill. Run
with -s to see the figures; docs/reliability.md has them. The CI variant kills 3 times and fails only if a partition
waited anywhere near the session timeout; the long variant (`long_faults`) kills 15 times and also holds the medians
to the targets.
"""

from __future__ import annotations

import datetime
import os
import signal
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kbroker.replication.client import BrokerClientError
from kbroker.replication.topics_tool import describe
from kbroker.testing.history import Ack
from protocol.errors import ErrorCode
from tests.cluster_fixture import Cluster
from tests.etcd_process import running_etcd
from tests.faults.workload import GroupReader, Outcome, Writer, judge
from tests.test_cluster_faults import raw_produce, wait_for_full_isrs

pytestmark = [pytest.mark.cluster]

TOPIC, PARTITIONS = "failover", 6
# The targets of issue 13, and the default session timeout the fast path must beat.
LED_TARGET_S, OTHERS_TARGET_S = 2.0, 0.5
DEFAULT_SESSION_TIMEOUT_S = 9.0
# A generous bound on the worst case: anything near the session timeout means the fast path did not work.
WORST_BOUND_S = 5.0


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_etcd() as etcd:
        c = Cluster(tmp_path, etcd, 3, request=request, base_overrides={})
        try:
            c.start()
            yield c
        finally:
            c.stop()


@dataclass
class Probe:
    """Acks=-1 produces to one partition, one at a time, until stopped."""

    cluster: Cluster
    partition: int
    acks: list[Ack] = field(default_factory=list)
    times: list[tuple[float, float]] = field(default_factory=list)  # (sent, acknowledged)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        leader = -1
        n = 0
        while not self.stop.is_set():
            if leader < 0:
                try:
                    state = describe(self.cluster.live_bootstrap, [TOPIC], timeout_s=2).topics[TOPIC]
                    leader = state.partitions[self.partition].leader
                except (BrokerClientError, KeyError, IndexError):
                    leader = -1
                if leader < 0 or leader not in self.cluster.running():
                    leader = -1
                    time.sleep(0.02)
                    continue
            n += 1
            value = f"probe-{self.partition}-{n}".encode()
            sent = time.monotonic()
            try:
                error, offset = raw_produce(self.cluster, leader, TOPIC, self.partition, value)
            except BrokerClientError:
                error, offset = -1, -1
            if error == ErrorCode.NONE:
                self.acks.append(Ack(TOPIC, self.partition, offset, value, "probe"))
                self.times.append((sent, time.monotonic()))
            else:
                leader = -1
                time.sleep(0.02)

    def resumed_after(self, moment: float) -> float | None:
        """Seconds from `moment` to the acknowledgement of the first probe sent after it."""
        for sent, acked in self.times:
            if sent >= moment:
                return acked - moment
        return None


@dataclass
class Kill:
    victim: int
    led: dict[int, float]  # partition -> failover seconds, partitions the victim led
    others: dict[int, float]
    detected: float | None = None  # seconds from the kill to the first survivor's verdict, from their logs


def detection_delay(cluster: Cluster, victim: int, killed_at_wall: float) -> float | None:
    """When the first survivor logged that the victim is gone, relative to the kill (the logs' clock is the wall
    clock, to the millisecond)."""
    verdicts = []
    for node_id, node in cluster.nodes.items():
        if node_id == victim:
            continue
        for line in node.log_text().splitlines():
            if f"broker {victim} (broker epoch" in line and "is gone" in line:
                stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                if stamp >= killed_at_wall - 0.01:
                    verdicts.append(stamp - killed_at_wall)
    return min(verdicts, default=None)


def kill_and_time(cluster: Cluster, probes: list[Probe], victim: int, timeout: float = 30.0) -> Kill:
    before = cluster.describe([TOPIC]).topics[TOPIC]
    led = {p.partition for p in before.partitions if p.leader == victim}
    killed_at, killed_at_wall = time.monotonic(), time.time()
    cluster.kill(victim)
    deadline = killed_at + timeout
    resumed: dict[int, float] = {}
    while len(resumed) < PARTITIONS:
        assert time.monotonic() < deadline, (
            f"partitions {sorted(set(range(PARTITIONS)) - set(resumed))} stalled"
        )
        for probe in probes:
            seconds = probe.resumed_after(killed_at)
            if seconds is not None:
                resumed[probe.partition] = seconds
        time.sleep(0.05)
    return Kill(
        victim,
        {p: s for p, s in resumed.items() if p in led},
        {p: s for p, s in resumed.items() if p not in led},
        detection_delay(cluster, victim, killed_at_wall),
    )


def run_kills(cluster: Cluster, kills: int, tmp_path: Path) -> list[Kill]:
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    wait_for_full_isrs(cluster)
    probes = [Probe(cluster, p) for p in range(PARTITIONS)]
    threads = [threading.Thread(target=p.run, daemon=True) for p in probes]
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS)
    reader = GroupReader(cluster.bootstrap, TOPIC, "failover-group")
    results: list[Kill] = []
    try:
        for thread in threads:
            thread.start()
        writer.start()
        reader.start()
        for k in range(kills):
            time.sleep(1.0)
            victim = 1 + k % 3
            role = " (the controller)" if cluster.describe().controller_id == victim else ""
            kill = kill_and_time(cluster, probes, victim)
            results.append(kill)
            detected = "?" if kill.detected is None else f"{kill.detected:.3f}"
            print(
                f"kill {k + 1}: node {victim}{role}, judged dead after {detected} s: partitions it led resumed after "
                f"{', '.join(f'{s:.2f}' for s in kill.led.values())} s; the others after "
                f"{', '.join(f'{s:.2f}' for s in kill.others.values())} s"
            )
            cluster.start_node(victim)
            wait_for_full_isrs(cluster)
    finally:
        for probe in probes:
            probe.stop.set()
        for thread in threads:
            thread.join(30)
        unflushed = writer.stop()
        reader.stop()
    assert unflushed == 0
    assert not writer.failed, writer.failed[:5]
    outcome = Outcome([*writer.acks, *(a for p in probes for a in p.acks)], reader.reads, reader.commits)
    judge(cluster, TOPIC, PARTITIONS, outcome, tmp_path)
    return results


def report_and_check(results: list[Kill], targets: bool) -> None:
    """Print the figures; fail if a partition waited for anything like the session timeout (the fast path did not
    work). With `targets`, the measuring run (long_faults) also holds the medians to issue 13's targets: those are
    figures for docs/reliability.md, not something a CI run sharing two cores with another worker can promise."""
    led = [s for k in results for s in k.led.values()]
    others = [s for k in results for s in k.others.values()]
    print(
        f"failover over {len(results)} kills -9: partitions the dead node led: median {statistics.median(led):.2f} s, "
        f"worst {max(led):.2f} s ({len(led)} samples); the other partitions: median "
        f"{statistics.median(others):.3f} s, worst {max(others):.3f} s ({len(others)} samples)"
    )
    assert max(led) < WORST_BOUND_S, led
    assert max(others) < WORST_BOUND_S, others
    if targets:
        assert statistics.median(led) <= LED_TARGET_S, led
        assert statistics.median(others) <= OTHERS_TARGET_S, others


@pytest.mark.timeout(300)
def test_produce_resumes_quickly_after_kill_9(cluster: Cluster, tmp_path: Path) -> None:
    report_and_check(run_kills(cluster, 3, tmp_path), targets=False)


@pytest.mark.long_faults
@pytest.mark.timeout(1200)
def test_produce_resumes_quickly_after_kill_9_many_times(cluster: Cluster, tmp_path: Path) -> None:
    report_and_check(run_kills(cluster, 15, tmp_path), targets=True)


@pytest.mark.timeout(120)
def test_a_paused_node_is_judged_by_the_session_timeout(cluster: Cluster) -> None:
    """SIGSTOP: the node's kernel keeps its connections and its listener, so nothing tells the others it is dead.
    Its registration lapses only with its lease: between 2/3 of the session timeout (the lease was refreshed at
    most a third of it before the pause) and the session timeout after the pause."""
    cluster.create_topic(TOPIC, 3, 3, {"min.insync.replicas": "2"})
    paused = next(i for i in cluster.nodes if i != cluster.describe().controller_id)
    others = [i for i in cluster.nodes if i != paused]
    bootstrap = ",".join(cluster.node(i).bootstrap for i in others)
    paused_at = time.monotonic()
    os.kill(cluster.node(paused).pid, signal.SIGSTOP)
    try:
        while paused in describe(bootstrap, timeout_s=2).brokers:
            assert time.monotonic() - paused_at < DEFAULT_SESSION_TIMEOUT_S + 10, "the lease never lapsed"
            time.sleep(0.05)
        lapsed_after = time.monotonic() - paused_at
    finally:
        os.kill(cluster.node(paused).pid, signal.SIGCONT)
    print(f"the paused node's registration lapsed {lapsed_after:.2f} s after SIGSTOP")
    assert lapsed_after >= DEFAULT_SESSION_TIMEOUT_S * 2 / 3 - 0.5, lapsed_after
    for i in others:
        assert "is gone" not in cluster.node(i).log_text(), f"node {i} judged a paused node dead"
    # Awake, it finds its registration gone, joins again and catches up.
    wait_for_full_isrs(cluster)
