"""Apache Kafka's own load generators, kafka-producer-perf-test and kafka-consumer-perf-test, as a scenario of
bench/run.py (`--perf-test-sizes 100,1024`), next to its confluent-kafka loads.

The tools are the classes the distribution's scripts run (org.apache.kafka.tools.ProducerPerformance and
ConsumerPerformance), from the jars of Apache Kafka 3.9.2 that compat/kafka/ caches (compat/kafka/tools.py finds the
class). They run in a JVM of their own, as the scripts start it (512 MiB heap, the JVM's default compilers and GC:
not the quick-start options compat/kafka/tools.py uses for the tests' one-shot tools), with the tools' own client
defaults except what is named here:

- produce: `--num-records N --record-size S --throughput -1 --producer-props bootstrap.servers=… acks=1|all`, into a
  fresh topic of 4 partitions (the Java producer's default partitioner, batch.size 16 KiB, linger.ms 0 in 3.9).
  Reported: the records/s the tool prints on its last line (it times from its first send to the last
  acknowledgement) and its p99 latency.
- consume: a fresh topic of 4 partitions filled (untimed, acks=1) by the confluent-kafka producer of bench/run.py
  with ~100-200 MB (1,000,000 x 100 B, 200,000 x 1 KiB: the mock's limit does not apply, it is not a target here),
  then `--messages N --timeout 60000` with a fresh group. The broker's CPU is counted over the tool's whole run, so a
  consumer's session (its connections, metadata, group join, offset commit and leave) is in it too: with the 14,000 x
  1 KiB read back at first (~0.1 s of fetching in ~5 s of session) that fixed cost was most of the figure.
  Reported: the tool's `fetch.nMsg.sec` (records over the time from the group's first assignment to the last
  record; the join is excluded: kbroker keeps Kafka's default group.initial.rebalance.delay.ms of 3 s, whereas the
  Kafka of compat/kafka/ is configured with 0, so the join takes ~3.5 s on kbroker and ~1 s on Kafka).

Not against librdkafka's mock: the Java client (3.9.2) never sends it a request. The mock answers the client's
first ApiVersions (v3+) with UNSUPPORTED_VERSION in a body the client reads a throttle time of 1,179,648 ms from,
and the client then waits out that "throttle" (seen with DEBUG logging; the tools hang until their timeout).

The broker's CPU is read from /proc over the whole tool process, JVM start and exit included; the broker's idle rate
(measured once per target, over 2 s before its first tool run) times the part of the run outside the tool's own
timing is subtracted, so that what remains is the broker's CPU for the records. Both figures are kept (`cpu_raw`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import time
import uuid
from typing import Any

from bench.common import BenchError, cpu_delta
from bench.run import PARTITIONS, Attempt, Target, measured_cpu, produce_throughput
from compat.kafka.process import log_config_options
from compat.kafka.tools import KafkaTools, UnknownTool

KAFKA_VERSION = "3.9.2"
PRODUCE = "perf-test produce acks={acks}"
CONSUME = "perf-test consume"
# full / quick: records per produce run and per topic read back, by size (other sizes: produce ~50 MB / ~5 MB,
# read back ~200 MB / ~20 MB, bounded)
PRODUCE_RECORDS = {100: 500_000, 1024: 100_000}
PRODUCE_RECORDS_QUICK = {100: 50_000, 1024: 10_000}
CONSUME_RECORDS = {100: 1_000_000, 1024: 200_000}  # ~1 s of fetching or more, against a session's fixed cost
CONSUME_RECORDS_QUICK = {100: 20_000, 1024: 3_000}

# "500000 records sent, 123456.7 records/sec (11.77 MB/sec), 12.34 ms avg latency, 345.00 ms max latency, 10 ms 50th,
# 20 ms 95th, 30 ms 99th, 40 ms 99.9th."
PRODUCER_SUMMARY = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max "
    r"latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th"
)
CONSUMER_FIELDS = (
    "start.time",
    "end.time",
    "data.consumed.in.MB",
    "MB.sec",
    "data.consumed.in.nMsg",
    "nMsg.sec",
    "rebalance.time.ms",
    "fetch.time.ms",
    "fetch.MB.sec",
    "fetch.nMsg.sec",
)


def produce_records(size: int, quick: bool) -> int:
    table = PRODUCE_RECORDS_QUICK if quick else PRODUCE_RECORDS
    return table.get(size, min(500_000, max(1_000, (5_000_000 if quick else 50_000_000) // size)))


def consume_records(size: int, quick: bool) -> int:
    table = CONSUME_RECORDS_QUICK if quick else CONSUME_RECORDS
    return table.get(size, min(1_000_000, max(1_000, (20_000_000 if quick else 200_000_000) // size)))


class KafkaPerfTest:
    """bench/run.py's RoundScenario: per size, produce acks=1 and acks=all, then consume, each on every target."""

    after_rounds = False

    def __init__(
        self,
        sizes: list[int],
        *,
        quick: bool,
        timeout: float,
        version: str = KAFKA_VERSION,
        records: int | None = None,
        warmup: int = 0,
    ) -> None:
        self.sizes = sizes
        self.quick = quick
        self.timeout = timeout
        self.records = records
        """Records per produce run (default: `produce_records`)."""
        self.warmup = warmup
        """Records each target gets from the producer tool, untimed, before the first round: a JVM broker that
        has served nothing yet is still compiling its hot paths for several hundred thousand records."""
        self.tools = KafkaTools(version)
        self.run_id = uuid.uuid4().hex[:8]
        self.rounds = 0
        self.idle_rate: dict[str, float] = {}

    def run_round(self, order: list[Target], attempt: Attempt) -> None:
        rnd = self.rounds
        self.rounds += 1
        order = [t for t in order if not t.auto_creates]  # the mock: see the module's docstring
        if rnd == 0 and self.warmup:
            for target in order:
                for size in self.sizes:
                    self.produce(target, f"perftest-{self.run_id}-warmup-s{size}", size, "1", self.warmup)
        for size in self.sizes:
            prefix = f"perftest-{self.run_id}-r{rnd}-s{size}"
            for acks in ("1", "all"):
                for target in order:
                    job = functools.partial(self.produce, target, f"{prefix}-acks{acks}", size, acks)
                    attempt(PRODUCE.format(acks=acks), size, target, job)
            for target in order:
                attempt(
                    CONSUME, size, target, functools.partial(self.consume, target, f"{prefix}-consume", size)
                )

    def finish(self, targets: list[Target]) -> None:
        pass  # every measurement deletes its topic

    # ----------------------------------------------------------------------------------------------------------

    def command(self, tool: str, *args: str) -> list[str]:
        try:
            main = self.tools.main_class(tool)
        except UnknownTool as e:
            raise BenchError(str(e)) from e
        java = shutil.which("java") or "java"
        return [java, "-Xmx512m", *log_config_options("WARN"), "-cp", f"{self.tools.libs}/*", main, *args]

    def run_tool(self, target: Target, command: list[str]) -> tuple[str, float, float | None]:
        """The tool's stdout, its wall time and the broker's CPU over it."""
        cpu0 = measured_cpu(target)
        t0 = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout, cwd="/tmp")
        except subprocess.TimeoutExpired as e:
            raise BenchError(
                f"{command[-1]}…: killed after {self.timeout:.0f} s; stderr: {e.stderr!r}"
            ) from e
        wall = time.perf_counter() - t0
        cpu1 = measured_cpu(target)
        if done.returncode != 0:
            raise BenchError(
                f"{' '.join(command[-12:])}: exit status {done.returncode}\n"
                f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-3000:]}"
            )
        return done.stdout, wall, cpu_delta(cpu0, cpu1)

    def idle(self, target: Target) -> float:
        """The broker's CPU per second while nothing is connected (once per target)."""
        if target.name not in self.idle_rate:
            a = measured_cpu(target)
            time.sleep(2.0)
            used = cpu_delta(a, measured_cpu(target))
            self.idle_rate[target.name] = (used or 0.0) / 2.0
        return self.idle_rate[target.name]

    def net_cpu(self, target: Target, raw: float | None, wall: float, timed: float) -> float | None:
        if raw is None:
            return None
        return max(0.0, raw - self.idle(target) * max(0.0, wall - timed))

    def produce(
        self, target: Target, topic: str, size: int, acks: str, records: int | None = None
    ) -> dict[str, Any]:
        n = records or self.records or produce_records(size, self.quick)
        self.idle(target)
        target.create_topic(topic, PARTITIONS)
        try:
            command = self.command(
                "kafka-producer-perf-test",
                "--topic", topic,
                "--num-records", str(n),
                "--record-size", str(size),
                "--throughput", "-1",
                "--producer-props", f"bootstrap.servers={target.bootstrap}", f"acks={acks}",
            )  # fmt: skip
            stdout, wall, raw = self.run_tool(target, command)
        finally:
            target.delete_topic(topic)
        summaries = PRODUCER_SUMMARY.findall(stdout)
        if not summaries:
            raise BenchError(f"kafka-producer-perf-test printed no summary:\n{stdout[-2000:]}")
        sent, rate, _, avg_ms, max_ms, p50, p95, p99 = summaries[-1]
        if int(sent) != n:
            raise BenchError(f"kafka-producer-perf-test sent {sent} records, expected {n}")
        seconds = n / float(rate)
        return {
            "records": n,
            "seconds": seconds,
            "tool_rate": float(rate),
            "cpu": self.net_cpu(target, raw, wall, seconds),
            "cpu_raw": raw,
            "wall": wall,
            "tool_avg_ms": float(avg_ms),
            "tool_max_ms": float(max_ms),
            "tool_p50_ms": float(p50),
            "tool_p95_ms": float(p95),
            "tool_p99_ms": float(p99),
        }

    def consume(self, target: Target, topic: str, size: int) -> dict[str, Any]:
        n = consume_records(size, self.quick)
        self.idle(target)
        target.create_topic(topic, PARTITIONS)
        try:
            produce_throughput(target, topic, n, os.urandom(size), "1", self.timeout)
            command = self.command(
                "kafka-consumer-perf-test",
                "--bootstrap-server", target.bootstrap,
                "--topic", topic,
                "--messages", str(n),
                "--group", f"perftest-{uuid.uuid4().hex[:12]}",
                "--timeout", "60000",
            )  # fmt: skip
            stdout, wall, raw = self.run_tool(target, command)
        finally:
            target.delete_topic(topic)
        values = parse_consumer_summary(stdout)
        if int(values["data.consumed.in.nMsg"]) < n:
            raise BenchError(
                f"kafka-consumer-perf-test read {values['data.consumed.in.nMsg']} records, expected {n}"
            )
        seconds = values["fetch.time.ms"] / 1000
        if seconds <= 0:
            raise BenchError(f"kafka-consumer-perf-test: fetch.time.ms {values['fetch.time.ms']}:\n{stdout}")
        return {
            "records": n,
            "seconds": seconds,
            "tool_rate": values["fetch.nMsg.sec"],
            "rebalance_ms": values["rebalance.time.ms"],
            "cpu": self.net_cpu(target, raw, wall, seconds),
            "cpu_raw": raw,
            "wall": wall,
        }


def parse_consumer_summary(stdout: str) -> dict[str, float]:
    """The numbers of kafka-consumer-perf-test's last line (its header names them; the dates are skipped)."""
    for line in reversed(stdout.strip().splitlines()):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == len(CONSUMER_FIELDS) and not cells[0].startswith("start.time"):
            try:
                return {
                    k: float(v)
                    for k, v in zip(CONSUMER_FIELDS, cells, strict=True)
                    if k not in ("start.time", "end.time")
                }
            except ValueError:
                continue
    raise BenchError(f"kafka-consumer-perf-test printed no summary:\n{stdout[-2000:]}")
