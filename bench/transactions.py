"""Transactional produce throughput: commits per second at 10 and 1,000 records per transaction, kbroker next to
Apache Kafka in one run.

    .venv/bin/python bench/transactions.py                  # writes bench/results-transactions.md
    .venv/bin/python bench/transactions.py --quick          # a few seconds per measurement, prints only
    .venv/bin/python bench/transactions.py --kafka 3.9.2,4.3.1 --rounds 5 --seconds 20

The load generator is one confluent-kafka (librdkafka) transactional producer in this process: begin, N records of
100 bytes round-robin over the 4 partitions of a topic, commit, again, for `--seconds`; what counts is the commits
that returned. Each target is a single node in a process of its own: kbroker (the working tree, `python -m kbroker
serve`, tests/broker_process.py) and Apache Kafka from its Maven jars (compat/kafka/process.py, KRaft). Measurements
are interleaved target by target within each round, and the table gives medians over the rounds; the broker's CPU
seconds per commit come from /proc/PID/stat, as in bench/run.py.

What a commit costs, on both: the records (acks=all), AddPartitionsToTxn for the first batch to each partition, then
EndTxn, answered once the coordinator has written PrepareCommit; the markers and CompleteCommit follow, and the next
transaction's AddPartitionsToTxn waits for them (CONCURRENT_TRANSACTIONS, retried by the client). kbroker fsyncs
every acks=all write before answering (docs/durability.md); Kafka by default does not (it relies on replication and
the page cache), which on one node is a difference in durability, not only in speed.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `bench.`, `compat.` and `tests.` are imported by package name

from bench.common import BENCH, cpu_delta, git, load_average, machine, sample_cpu  # noqa: E402
from compat.kafka.process import KafkaProcess  # noqa: E402
from tests.broker_process import BrokerProcess  # noqa: E402

PARTITIONS = 4
VALUE = b"x" * 100
SIZES = (10, 1_000)
RESULTS = BENCH / "results-transactions.md"


@dataclass
class Target:
    name: str
    process: BrokerProcess

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap


@dataclass
class Measurement:
    commits: int
    seconds: float
    cpu: float | None

    @property
    def commits_per_s(self) -> float:
        return self.commits / self.seconds

    @property
    def cpu_ms_per_commit(self) -> float | None:
        return None if self.cpu is None or not self.commits else 1000 * self.cpu / self.commits


@dataclass
class Results:
    by_key: dict[tuple[str, int], list[Measurement]] = field(default_factory=dict)

    def add(self, target: str, size: int, m: Measurement) -> None:
        self.by_key.setdefault((target, size), []).append(m)


def measure(target: Target, size: int, seconds: float) -> Measurement:
    """Transactions of `size` records for `seconds`: how many committed, and the broker's CPU meanwhile."""
    topic = f"bench-txn-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)
    producer = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "transactional.id": f"bench-{topic}",
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    producer.init_transactions(60)
    # One transaction first, so that the coordinator, the partitions' leaders and the connections are warm.
    run(producer, topic, size, 1)
    before = sample_cpu(target.process.pid)
    started = time.monotonic()
    commits = 0
    while time.monotonic() - started < seconds:
        commits += run(producer, topic, size, 1)
    elapsed = time.monotonic() - started
    after = sample_cpu(target.process.pid)
    return Measurement(commits, elapsed, cpu_delta(before, after))


def run(producer: Producer, topic: str, size: int, transactions: int) -> int:
    for _ in range(transactions):
        producer.begin_transaction()
        for i in range(size):
            producer.produce(topic, VALUE, partition=i % PARTITIONS)
            if i % 10_000 == 9_999:
                producer.poll(0)
        try:
            producer.commit_transaction(60)
        except KafkaException as error:
            raise SystemExit(f"commit failed: {error}") from error
    return transactions


def start_targets(work: Path, kafka_versions: list[str]) -> list[Target]:
    targets = [
        Target("kbroker", BrokerProcess(work / "kbroker" / "data", log_path=work / "kbroker.log").start())
    ]
    for version in kafka_versions:
        kafka = KafkaProcess(version, work / f"kafka-{version}").start()
        targets.append(Target(f"Kafka {version}", kafka))
    return targets


def report(results: Results, targets: list[Target], args: argparse.Namespace, started: str) -> str:
    revision = git("rev-parse", "--short", "HEAD") or "?"
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    lines = [
        "# Transactional produce throughput",
        "",
        f"bench/transactions.py, {started}; kbroker at {revision}{dirty}; {machine()}; load average at the end "
        f"{load_average()}.",
        "",
        f"One confluent-kafka transactional producer, transactions of N records of {len(VALUE)} B round-robin over "
        f"{PARTITIONS} partitions, {args.seconds:g} s per measurement, {args.rounds} rounds interleaved by target; "
        "medians (and each round's value). Single nodes: kbroker fsyncs every acks=all write before answering, "
        "Kafka does not fsync by default.",
        "",
        "| records / transaction | target | commits/s | records/s | broker CPU ms / commit | commits/s per round |",
        "|---|---|---|---|---|---|",
    ]
    for size in SIZES:
        for target in targets:
            ms = results.by_key.get((target.name, size), [])
            if not ms:
                continue
            rate = statistics.median(m.commits_per_s for m in ms)
            cpus = [c for c in (m.cpu_ms_per_commit for m in ms) if c is not None]
            cpu = f"{statistics.median(cpus):.2f}" if cpus else "?"
            rounds = ", ".join(f"{m.commits_per_s:.1f}" for m in ms)
            lines.append(f"| {size:,} | {target.name} | {rate:.1f} | {rate * size:,.0f} | {cpu} | {rounds} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kafka", default="3.9.2", help="Apache Kafka releases, comma-separated, or none")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--quick", action="store_true", help="one round of 3 s, printed only")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 1, 3.0
    versions = [] if args.kafka == "none" else [v.strip() for v in args.kafka.split(",") if v.strip()]
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    results = Results()
    with tempfile.TemporaryDirectory(prefix="kbroker-bench-txn-") as tmp:
        targets = start_targets(Path(tmp), versions)
        try:
            for round_number in range(args.rounds):
                order = targets if round_number % 2 == 0 else list(reversed(targets))
                for size in SIZES:
                    for target in order:
                        m = measure(target, size, args.seconds)
                        results.add(target.name, size, m)
                        print(
                            f"round {round_number + 1} {target.name:>12} {size:>5} records/txn: "
                            f"{m.commits_per_s:8.1f} commits/s, cpu {m.cpu_ms_per_commit} ms/commit",
                            flush=True,
                        )
        finally:
            for target in targets:
                target.process.stop()
    text = report(results, targets, args, started)
    print(text)
    if not args.quick:
        RESULTS.write_text(text)
        print(f"written to {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
