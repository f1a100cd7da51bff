"""The clickstream pipeline's end-to-end throughput, and the broker's share of the CPU it costs.

    .venv/bin/python bench/pipeline.py                          # kbroker and Apache Kafka 3.9.2, each with
                                                                # both connectors, 3 rounds each
    .venv/bin/python bench/pipeline.py --kbroker-rev HEAD       # kbroker from the last commit
    .venv/bin/python bench/pipeline.py --quick                  # one small round on kbroker, prints only

Each round, on a fresh pair of topics (3 partitions) and a fresh job directory:

1. the streaming job (pipelines/streaming.py, a child process with its own Spark driver) starts, and a warm-up of
   2,000 events goes through it (the first micro-batches of a JVM compile their code; that is not throughput);
2. the generator (pipelines/generator.py, in this process) produces N more events as fast as the broker
   acknowledges them (idempotent producer, acks=all, lz4, linger.ms=10), while the job reads them in micro-batches of
   at most 20,000 (`maxOffsetsPerTrigger`) every second;
3. the round ends when the job has read every event, written every window the final watermark closes to Parquet and
   copied them to the results topic (the same test of "caught up" as scripts/pipeline), and the outputs are
   checked against the reference (pipelines/reference.py), so a fast wrong run cannot count.

Reported, medians over the rounds: end-to-end events/s (N over the time from the first event produced to caught
up), the generator's own rate (N over the time to the last acknowledgement), and CPU seconds (utime + stime from
/proc/PID/stat, children included once reaped) of the broker process(es), of the Spark job (its Python, its JVM and
any Python worker) and of the generator (this process), over the same interval. The broker's share is its CPU over
the sum of the three; the machine's share is that sum over two cores times the wall time. Each round runs every
broker with every connector (Spark's own, `kafka`, and kbroker's pure-Python `kbroker`), so that all see the same
machine.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CLK_TCK, REPO, KBrokerSource, git, kbroker_sources, load_average, machine
from compat.kafka.install import install as install_kafka
from compat.kafka.process import KafkaProcess
from pipelines import reference, results
from pipelines.events import GeneratorSettings
from pipelines.generator import Generator
from pipelines.process import StreamingJobProcess, process_tree
from pipelines.run import ensure_topics
from pipelines.streaming import AGGREGATES_QUERY, StreamingSettings
from tests.broker_process import BrokerProcess

WARM_UP = 2000
INTERVAL_MS = 100  # event time per event: N events span N/10 seconds of windows
WATERMARK_DELAY_S = 120
MAX_OFFSETS_PER_TRIGGER = 20_000
JOB_TIMEOUT_S = 900.0
KAFKA_VERSION = "3.9.2"


READING = """\
End to end: events over the time from the first produced to caught up (every window the final watermark closes in
Parquet and in the results topic). The CPU columns are each process tree's utime + stime over that interval; the
broker's share is its CPU over the three trees' sum; "run's CPU / 2 cores" is that sum over the two cores' time, so a
figure well under 100% means the run waited (micro-batch triggers, or other processes on the shared machine: see the
load average of each round). Wall-clock rates on this shared machine vary by a factor of two between rounds; CPU
seconds per round vary far less."""


def tree_cpu(root: int) -> float:
    """CPU seconds of a process and its descendants alive now, with the children each has reaped."""
    total = 0.0
    for proc in process_tree(root):
        try:
            stat = Path(f"/proc/{proc.pid}/stat").read_text()
        except FileNotFoundError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK
    return total


class Broker(Protocol):
    name: str

    def start(self) -> None: ...
    def stop(self) -> None: ...
    @property
    def bootstrap(self) -> str: ...
    @property
    def pid(self) -> int: ...


class KBroker:
    def __init__(self, source: KBrokerSource, root: Path) -> None:
        self.name = f"kbroker ({source.label})"
        self.process = BrokerProcess(
            root / "kbroker-data", log_path=root / "kbroker.log", source_dir=source.directory
        )

    def start(self) -> None:
        self.process.start()

    def stop(self) -> None:
        self.process.stop()

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    @property
    def pid(self) -> int:
        return self.process.pid


class Kafka:
    def __init__(self, version: str, root: Path) -> None:
        self.name = f"Apache Kafka {version}"
        install_kafka(version)
        self.process = KafkaProcess(version, root / f"kafka-{version}")

    def start(self) -> None:
        self.process.start()

    def stop(self) -> None:
        self.process.stop()

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass
class Round:
    target: str
    events: int
    wall_s: float
    produce_s: float
    broker_cpu: float
    spark_cpu: float
    generator_cpu: float
    load: str = "?"

    @property
    def rate(self) -> float:
        return self.events / self.wall_s

    @property
    def produce_rate(self) -> float:
        return self.events / self.produce_s

    @property
    def total_cpu(self) -> float:
        return self.broker_cpu + self.spark_cpu + self.generator_cpu

    @property
    def broker_share(self) -> float:
        return self.broker_cpu / self.total_cpu

    @property
    def machine_share(self) -> float:
        return self.total_cpu / (2 * self.wall_s)


def one_round(broker: Broker, events: int, seed: int, work: Path, connector: str) -> Round:
    suffix = f"{seed}-{time.monotonic_ns()}"
    events_topic, results_topic = f"bench-events-{suffix}", f"bench-results-{suffix}"
    ensure_topics(broker.bootstrap, [events_topic, results_topic], 3, 1)
    settings = StreamingSettings(
        bootstrap=broker.bootstrap,
        data_dir=work / f"job-{suffix}",
        connector=connector,
        events_topic=events_topic,
        results_topic=results_topic,
        watermark_delay_s=WATERMARK_DELAY_S,
        trigger_interval_s=1.0,
        max_offsets_per_trigger=MAX_OFFSETS_PER_TRIGGER,
    )
    total = WARM_UP + events
    now = time.time_ns() // 1_000_000
    generator = Generator(
        broker.bootstrap,
        events_topic,
        GeneratorSettings(seed=seed, start_ms=now - total * INTERVAL_MS, interval_ms=INTERVAL_MS, users=1000),
        rate=1e9,
        count=total,
    )
    job = StreamingJobProcess(settings)
    job.start()
    try:
        job.wait_for(lambda lines: job.progress(AGGREGATES_QUERY), JOB_TIMEOUT_S, "the job's first progress")
        generator.run(until=WARM_UP)
        job.wait_for(
            lambda lines: (
                sum(line.get("input_rows") or 0 for line in job.progress(AGGREGATES_QUERY)) >= WARM_UP
            ),
            JOB_TIMEOUT_S,
            "the warm-up read",
        )
        assert job.process is not None
        cpu_before = (tree_cpu(broker.pid), tree_cpu(job.process.pid), tree_cpu_self())
        started = time.monotonic()
        generator.run()
        produced = time.monotonic()
        if generator.stats.failed:
            raise RuntimeError(f"events not acknowledged: {generator.stats.errors}")
        ends = results.end_offsets(broker.bootstrap, events_topic)
        watermark = reference.final_watermark_ms(generator.produced, WATERMARK_DELAY_S * 1000)
        job.wait_caught_up(ends, watermark, JOB_TIMEOUT_S)
        finished = time.monotonic()
        cpu_after = (tree_cpu(broker.pid), tree_cpu(job.process.pid), tree_cpu_self())
    finally:
        job.stop()
    want = reference.closed(reference.window_aggregates(generator.produced), watermark)
    if results.as_table(results.parquet_rows(settings.output)) != want:
        raise RuntimeError(
            f"{broker.name}: the Parquet output differs from the reference ({settings.data_dir})"
        )
    shutil.rmtree(settings.data_dir, ignore_errors=True)
    return Round(
        target=f"{broker.name}, format({connector!r})",
        events=events,
        wall_s=finished - started,
        produce_s=produced - started,
        broker_cpu=cpu_after[0] - cpu_before[0],
        spark_cpu=cpu_after[1] - cpu_before[1],
        generator_cpu=cpu_after[2] - cpu_before[2],
    )


def tree_cpu_self() -> float:
    """CPU seconds of this process (the generator) and its reaped children."""
    times = os.times()
    return times.user + times.system


def table(rounds: list[Round]) -> str:
    lines = [
        "| target | events/s end to end | generator events/s | broker CPU s | Spark CPU s | generator CPU s "
        "| broker's share of the run's CPU | run's CPU / 2 cores |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for target in dict.fromkeys(r.target for r in rounds):
        mine = [r for r in rounds if r.target == target]

        def med(values: list[float]) -> float:
            return statistics.median(values)

        lines.append(
            f"| {target} | {med([r.rate for r in mine]):,.0f} | {med([r.produce_rate for r in mine]):,.0f} "
            f"| {med([r.broker_cpu for r in mine]):.1f} | {med([r.spark_cpu for r in mine]):.1f} "
            f"| {med([r.generator_cpu for r in mine]):.1f} | {med([r.broker_share for r in mine]):.0%} "
            f"| {med([r.machine_share for r in mine]):.0%} |"
        )
    return "\n".join(lines)


def per_round(rounds: list[Round]) -> str:
    lines = [
        "| round | target | wall s | events/s | produce s | broker CPU s | Spark CPU s | generator CPU s "
        "| load average after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(rounds, 1):
        lines.append(
            f"| {n} | {r.target} | {r.wall_s:.1f} | {r.rate:,.0f} | {r.produce_s:.1f} | {r.broker_cpu:.1f} "
            f"| {r.spark_cpu:.1f} | {r.generator_cpu:.1f} | {r.load} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000, help="events per round (default: 100000)")
    parser.add_argument("--rounds", type=int, default=3, help="per target (default: 3)")
    parser.add_argument(
        "--connectors",
        default="kafka,kbroker",
        help="Spark's `kafka` and/or kbroker's `kbroker`, comma-separated (default: kafka,kbroker)",
    )
    parser.add_argument("--kafka", default=KAFKA_VERSION, help="the Apache Kafka to compare with, or `none`")
    parser.add_argument(
        "--kbroker-rev", action="append", help="run kbroker from this commit (default: the tree)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="one round of 20,000 events on kbroker; prints only"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results-pipeline.md")
    args = parser.parse_args(argv)
    connectors = [name.strip() for name in args.connectors.split(",") if name.strip()]
    if not set(connectors) <= {"kafka", "kbroker"}:
        parser.error(f"unknown connector in {args.connectors!r}")
    if args.quick:
        args.events, args.rounds, args.kafka = 20_000, 1, "none"
    work = Path(tempfile.mkdtemp(prefix="kbroker-bench-pipeline-"))
    rounds: list[Round] = []
    began = datetime.now(UTC)
    try:
        with kbroker_sources(args.kbroker_rev) as sources:
            brokers: list[Broker] = [KBroker(source, work / f"kb-{n}") for n, source in enumerate(sources)]
            if args.kafka != "none":
                brokers.append(Kafka(args.kafka, work))
            for broker in brokers:
                broker.start()
            try:
                for n in range(args.rounds):
                    for broker, connector in itertools.product(brokers, connectors):
                        result = one_round(broker, args.events, seed=n + 1, work=work, connector=connector)
                        result.load = load_average()
                        rounds.append(result)
                        print(
                            f"round {n + 1} {result.target}: {result.rate:,.0f} events/s end to end, "
                            f"broker {result.broker_cpu:.1f} CPU s of {result.total_cpu:.1f} "
                            f"({result.broker_share:.0%}), load {result.load}",
                            flush=True,
                        )
            finally:
                for broker in brokers:
                    broker.stop()
            description = "; ".join(source.description for source in sources)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = table(rounds)
    print(summary)
    if args.quick:
        return 0
    args.out.write_text(
        "# The pipeline's end-to-end throughput (bench/pipeline.py)\n\n"
        f"{began:%Y-%m-%d %H:%M} UTC, {machine()}; kbroker from {description}, "
        f"git {git('describe', '--always', '--dirty')}; {args.events:,} events a "
        f"round after a {WARM_UP:,}-event warm-up, {args.rounds} rounds per target and connector, medians.\n\n"
        f"{summary}\n\n{READING}\n\nEvery round:\n\n{per_round(rounds)}\n"
    )
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
