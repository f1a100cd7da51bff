"""The soak: random faults against a 3-node cluster in network namespaces for N minutes, judged by
kbroker.testing.history. `scripts/kbroker-faults --minutes 30` runs it (as root: it makes namespaces).

The run is a series of rounds. Each round starts a fresh cluster (tests/faults/harness.py) with a topic of 3
partitions (replication factor 3, min.insync.replicas 2), an idempotent acks=all producer and a consumer group that
commits (tests/faults/workload.py), then injects one random fault after another: it applies the fault, holds it a
random while, heals it and waits until the cluster serves again (every partition led and in sync on three nodes, new
writes acknowledged). At the end of the round the history checker judges everything the clients saw against every
replica's log. The run ends with the verdict over all rounds: scenarios run, operations checked, faults injected,
records lost, and any other anomaly.

A round whose cluster does not serve again within the bounds (FAULT_RECOVERY_S) counts as failed, as does any
anomaly, any delivery the producer was told failed, or any exception: the exit status is then 1, and the round's
directory (logs, the checker's JSONL inputs) is kept.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kbroker.testing.history import KINDS, LOST
from tests.etcd_process import ETCD_BINARY
from tests.faults import netns
from tests.faults.harness import FaultCluster, fault_cluster
from tests.faults.workload import GroupReader, Outcome, Writer, judge
from tests.test_cluster_faults import wait_for_full_isrs

TOPIC, PARTITIONS = "soak", 3
FAULT_RECOVERY_S = 90.0
PROGRESS_TIMEOUT_S = 60.0


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


# ---- the faults: each applies itself, holds, and undoes itself; the caller then waits for the cluster ----------


def _node(cluster: FaultCluster, rng: random.Random) -> int:
    return rng.choice(sorted(cluster.nodes))


def _leader(cluster: FaultCluster, rng: random.Random) -> int:
    partition = rng.randrange(PARTITIONS)
    leader = cluster.describe([TOPIC]).topics[TOPIC].partitions[partition].leader
    return leader if leader in cluster.nodes else _node(cluster, rng)


def kill_9(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    cluster.kill(node)
    time.sleep(rng.uniform(0.5, 6.0))
    cluster.start_node(node)
    return f"kill -9 node {node}"


def kill_9_leader(cluster: FaultCluster, rng: random.Random) -> str:
    node = _leader(cluster, rng)
    cluster.kill(node)
    time.sleep(rng.uniform(0.5, 4.0))
    cluster.start_node(node)
    return f"kill -9 leader {node}"


def kill_9_all(cluster: FaultCluster, rng: random.Random) -> str:
    for node in cluster.nodes.values():
        os.kill(node.pid, signal.SIGKILL)
    for node_id in cluster.nodes:
        cluster.kill(node_id)  # reaps
    time.sleep(rng.uniform(0.0, 3.0))
    cluster.start()
    return "kill -9 every node"


def empty_disk(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    cluster.kill(node)
    shutil.rmtree(cluster.node(node).data_dir)
    cluster.start_node(node)
    return f"kill -9 node {node}, back on an empty disk"


def restart(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    cluster.restart(node)
    return f"restart node {node}"


def rolling_restart(cluster: FaultCluster, rng: random.Random) -> str:
    for node in cluster.nodes:
        cluster.restart(node)
        wait_for_full_isrs(cluster, FAULT_RECOVERY_S)
    return "rolling restart"


def pause(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    held = rng.uniform(0.5, 8.0)
    cluster.pause(node)
    try:
        time.sleep(held)
    finally:
        cluster.resume(node)
    return f"SIGSTOP node {node} for {held:.1f} s"


def pause_etcd(cluster: FaultCluster, rng: random.Random) -> str:
    held = rng.uniform(0.5, 2.5)
    cluster.etcd.pause()
    try:
        time.sleep(held)
    finally:
        cluster.etcd.resume()
    return f"SIGSTOP etcd for {held:.1f} s"


def _held_network(cluster: FaultCluster, rng: random.Random, low: float, high: float) -> float:
    held = rng.uniform(low, high)
    try:
        time.sleep(held)
    finally:
        cluster.net.heal()
    return held


def isolate_leader(cluster: FaultCluster, rng: random.Random) -> str:
    node = _leader(cluster, rng)
    cluster.net.isolate(cluster.member(node), from_=cluster.peers(node))
    held = _held_network(cluster, rng, 1.0, 10.0)
    return f"leader {node} cut off from its peers for {held:.1f} s"


def cut_from_etcd(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    cluster.net.cut(cluster.member(node), "etcd")
    held = _held_network(cluster, rng, 1.0, 8.0)
    return f"node {node} cut off from etcd for {held:.1f} s"


def one_way(cluster: FaultCluster, rng: random.Random) -> str:
    node = _leader(cluster, rng)
    for peer in cluster.peers(node):
        cluster.net.cut(peer, cluster.member(node), both_ways=False)
    held = _held_network(cluster, rng, 1.0, 8.0)
    return f"peers' packets to leader {node} dropped (one way) for {held:.1f} s"


def lossy(cluster: FaultCluster, rng: random.Random) -> str:
    percent = rng.randint(5, 30)
    members = [cluster.member(i) for i in cluster.nodes]
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            cluster.net.lossy(a, b, percent)
    held = _held_network(cluster, rng, 2.0, 10.0)
    return f"{percent} % loss between nodes for {held:.1f} s"


def slow_link(cluster: FaultCluster, rng: random.Random) -> str:
    node = _node(cluster, rng)
    cluster.net.limit(cluster.member(node), "2mbit")
    held = _held_network(cluster, rng, 2.0, 10.0)
    return f"node {node}'s link at 2 Mbit/s for {held:.1f} s"


FAULTS: dict[str, Callable[[FaultCluster, random.Random], str]] = {
    f.__name__: f
    for f in (
        kill_9,
        kill_9_leader,
        kill_9_all,
        empty_disk,
        restart,
        rolling_restart,
        pause,
        pause_etcd,
        isolate_leader,
        cut_from_etcd,
        one_way,
        lossy,
        slow_link,
    )
}


# ---- rounds and the verdict --------------------------------------------------------------------------------------


@dataclass
class Totals:
    rounds: int = 0
    failed_rounds: list[str] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    acknowledged: int = 0
    read: int = 0
    served: int = 0
    commits: int = 0
    anomalies: Counter[str] = field(default_factory=Counter)
    failed_deliveries: int = 0
    unknown_offsets: int = 0
    reader_stalls: int = 0

    @property
    def operations(self) -> int:
        return self.acknowledged + self.served + self.commits

    @property
    def valid(self) -> bool:
        return not self.failed_rounds and not any(self.anomalies.values()) and not self.failed_deliveries

    def verdict(self) -> str:
        checked = (
            f"{self.operations} operations checked ({self.acknowledged} acknowledged writes, {self.served} records"
            f" served to the group, {self.commits} committed offsets; {self.read} records read back from the"
            " cluster and the replicas' disks)"
        )
        lines = [
            f"{'VALID' if self.valid else 'INVALID'}: {self.rounds} scenarios run, {checked}, "
            f"{sum(self.faults.values())} faults injected, {self.anomalies[LOST]} records lost",
            "  faults: " + ", ".join(f"{name} {n}" for name, n in sorted(self.faults.items())),
            "  anomalies: " + ", ".join(f"{kind} {self.anomalies[kind]}" for kind in KINDS),
            f"  deliveries reported failed: {self.failed_deliveries}; reported delivered without an offset (checked"
            f" for presence only): {self.unknown_offsets}; group readers that never closed (librdkafka lost its"
            f" coordinator): {self.reader_stalls}",
        ]
        lines += [f"  FAILED round: {why}" for why in self.failed_rounds]
        return "\n".join(lines)


def run_round(where: Path, seconds: float, rng: random.Random, rate: float, totals: Totals) -> None:
    """One cluster, faults for `seconds`, then the history check; adds to `totals`, raises on a failure."""
    with fault_cluster(where) as cluster:
        cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
        writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS, rate_per_s=rate).start()
        reader = GroupReader(cluster.bootstrap, TOPIC, "soak-group").start()
        try:
            writer.wait_for_progress(20, timeout=PROGRESS_TIMEOUT_S)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                name = rng.choice(sorted(FAULTS))
                started = time.monotonic()
                log(f"  {name} ...")
                what = FAULTS[name](cluster, rng)
                totals.faults[name] += 1
                wait_for_full_isrs(cluster, FAULT_RECOVERY_S)
                writer.wait_for_progress(10, timeout=PROGRESS_TIMEOUT_S)
                log(f"  {what}: serving again after {time.monotonic() - started:.1f} s")
                time.sleep(rng.uniform(0.0, 3.0))
        finally:
            cluster.net.heal()
            for node_id in cluster.running():
                cluster.resume(node_id)
            cluster.etcd.resume()
            unflushed = writer.stop()
            reader.stop()
        totals.failed_deliveries += len(writer.failed) + unflushed
        totals.unknown_offsets += writer.unknown_offsets
        totals.reader_stalls += reader.hung
        verdict = judge(
            cluster,
            TOPIC,
            PARTITIONS,
            Outcome(writer.acks, reader.reads, reader.commits),
            where,
            in_sync_timeout=FAULT_RECOVERY_S,
            strict=False,
        )
        totals.acknowledged += verdict.acknowledged
        totals.read += verdict.read
        totals.served += verdict.served
        totals.commits += verdict.commits
        totals.anomalies.update(verdict.counts())
        if not verdict.valid:
            raise AssertionError(verdict.report(examples=10))
        if writer.failed or unflushed:
            raise AssertionError(f"{len(writer.failed)} deliveries failed, {unflushed} never reported: "
                                 f"{writer.failed[:5]}")  # fmt: skip
        log(f"  {verdict.report(examples=0).splitlines()[0]}")


def soak(minutes: float, *, rate: float, round_minutes: float, seed: int, root: Path) -> Totals:
    rng = random.Random(seed)
    totals = Totals()
    deadline = time.monotonic() + minutes * 60
    log(
        f"soak: {minutes} minutes, rounds of {round_minutes} minutes, {rate} writes/s, seed {seed}, in {root}"
    )
    while time.monotonic() < deadline:
        totals.rounds += 1
        where = root / f"round{totals.rounds}"
        seconds = min(round_minutes * 60, max(30.0, deadline - time.monotonic()))
        log(f"round {totals.rounds}: {seconds:.0f} s of faults")
        try:
            run_round(where, seconds, rng, rate, totals)
        except Exception:
            reason = traceback.format_exc(limit=3)
            totals.failed_rounds.append(f"round {totals.rounds} (kept in {where}): {reason}")
            log(f"round {totals.rounds} FAILED:\n{reason}")
        else:
            shutil.rmtree(where, ignore_errors=True)
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kbroker-faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to inject faults (default 30)")
    parser.add_argument("--round-minutes", type=float, default=5.0,
                        help="faults per cluster before it is judged and replaced (default 5)")  # fmt: skip
    parser.add_argument("--rate", type=float, default=30.0, help="writes per second (default 30)")
    parser.add_argument("--seed", type=int, default=None, help="the faults' random seed (default: random)")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where rounds keep their files (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    reason = netns.available()
    if reason is not None or ETCD_BINARY is None:
        print(
            f"kbroker-faults: {reason or 'etcd is not installed (apt package etcd-server)'}", file=sys.stderr
        )
        return 2
    # SIGTERM ends the run like Ctrl-C: every cluster, namespace and process it made is removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    root = args.dir or Path(tempfile.mkdtemp(prefix="kbroker-faults-"))
    totals = soak(args.minutes, rate=args.rate, round_minutes=args.round_minutes, seed=seed, root=root)
    print(totals.verdict(), flush=True)
    if not totals.failed_rounds:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if totals.valid else 1


if __name__ == "__main__":
    sys.exit(main())
