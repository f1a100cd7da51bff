"""Throughput and latency of kbroker, side by side with librdkafka's mock cluster, in one run.

    .venv/bin/python bench/run.py            # full run, writes bench/results.md
    .venv/bin/python bench/run.py --quick    # a few seconds, smoke check, prints only
    .venv/bin/python bench/run.py --targets mock --quick

The load generator is confluent-kafka (librdkafka) in this process. Every target runs in a process of its own:
kbroker as `python -m kbroker serve` (started through the tests' fixtures: tests/broker_process.py, and
tests/cluster_fixture.py with --cluster), the mock cluster inside bench/mock_cluster.py. Measurements of the targets
are interleaved (kbroker, mock, mock, kbroker, …) scenario by scenario over several rounds, and the tables report
medians, because the machine is small and shared with the load generator. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import itertools
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import confluent_kafka
import httpx
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(
        0, str(REPO)
    )  # `bench.` and `tests.` are imported by package name, from the repository root

from bench.common import (  # noqa: E402
    BENCH,
    PYTHON,
    BenchError,
    CpuSample,
    KBrokerSource,
    cpu_delta,
    kbroker_sources,
    latency_percentiles,
    load_average,
    machine,
    memory_returned_kib,
    produce_bytes,
    reuse_page_cache,
    sample_cpu,
    system_seconds,
)
from bench.floor import group_commit_latency  # noqa: E402
from bench.floor import measure as measure_floor  # noqa: E402
from tests.broker_process import BrokerProcess, free_port  # noqa: E402
from tests.test_metrics import scrape  # noqa: E402

PARTITIONS = 4  # the mock cluster auto-creates topics with 4 partitions; kbroker topics are created alike
MOCK_PARTITION_CAP = 5 * 1024 * 1024  # the mock keeps ~5 MiB per partition, then drops the oldest batches
PRODUCE_RECORDS = 300_000  # records per produce run (a full run), fewer for large records:
PRODUCE_BYTES = 320_000_000  # at most this many bytes of values per run
CLIENT_COMMON: dict[str, Any] = {"log.connection.close": False}


# --------------------------------------------------------------------------------------------------------------
# helpers


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def stop_pid(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM the process by its pid, then SIGKILL it if it is still there after `grace` seconds."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_brokers(bootstrap: str, brokers: int, timeout: float) -> None:
    """Until Metadata from `bootstrap` lists `brokers` brokers."""
    deadline = time.monotonic() + timeout
    admin = AdminClient({"bootstrap.servers": bootstrap, **CLIENT_COMMON})
    while True:
        md = admin.list_topics(timeout=max(1.0, deadline - time.monotonic()))
        if len(md.brokers) >= brokers:
            return
        if time.monotonic() > deadline:
            raise BenchError(f"Metadata lists {len(md.brokers)} brokers, expected {brokers}")
        time.sleep(0.2)


# --------------------------------------------------------------------------------------------------------------
# targets


class Target:
    name = "?"
    bootstrap = ""
    replication_factor = 1
    auto_creates = False  # True: no CreateTopics, a Metadata request creates the topic (the mock cluster)
    # Whether the target survives being frozen (SIGSTOP) while another is measured (`run`'s isolation)
    pausable = True

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def pids(self) -> list[int]:
        """The broker processes, whose CPU is measured."""
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def pause(self) -> None:
        """Freeze the broker processes (SIGSTOP): an idle broker is not idle (timers, checkpoint fsyncs, deferred
        deletion of the last scenario's segments) and would disturb the one being measured."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass  # it died: the next measurement of it reports how (`alive`, `diagnostics`)

    def diagnostics(self) -> str:
        raise NotImplementedError

    def log_flushes(self) -> dict[float, float] | None:
        """The broker's own log flush histogram so far (bucket upper bound in s -> flushes that took at most that),
        or None where it exposes none (kbroker serves it as kafka_log_logflushstats_logflush_seconds)."""
        return None

    def rss_bytes(self) -> int | None:
        """Resident memory of the broker processes now (summed), or None when it cannot be read."""
        if not self.alive():
            return None
        try:
            return sum(rss_bytes(pid) for pid in self.pids())
        except OSError:
            return None

    def cpu(self) -> CpuSample | None:
        """CPU used so far by the broker processes (summed), or None when it cannot be measured."""
        if not self.alive():
            return None
        samples = [sample_cpu(pid) for pid in self.pids()]
        return CpuSample(
            sum(s.ticks for s in samples), sum(s.fine for s in samples), sum(s.system for s in samples)
        )

    def data_dirs(self) -> list[Path]:
        """The broker's data directories, where `delete_topic` waits for the topic's files to go (none: no wait)."""
        return []

    def delete_topic(self, topic: str) -> None:
        """Best effort, untimed: a topic per scenario would otherwise pile up (and, with replicas, every partition
        costs the followers' fetches something). The mock has no DeleteTopics; its memory is bounded anyway."""
        if self.auto_creates or not self.alive():
            return
        admin = AdminClient({"bootstrap.servers": self.bootstrap, **CLIENT_COMMON})
        try:
            admin.delete_topics([topic], operation_timeout=30, request_timeout=30)[topic].result(35)
        except Exception as e:
            print(f"{self.name}: could not delete topic {topic}: {e!r}", flush=True)
            return
        wait_files_gone(self.name, self.data_dirs(), topic)

    def create_topic(self, topic: str, partitions: int) -> None:
        """CreateTopics, or (when the target lacks it) a Metadata request that auto-creates the topic."""
        if not self.auto_creates:
            admin = AdminClient({"bootstrap.servers": self.bootstrap, **CLIENT_COMMON})
            futures = admin.create_topics(
                [NewTopic(topic, partitions, self.replication_factor)],
                operation_timeout=30,
                request_timeout=30,
            )
            try:
                futures[topic].result(35)
            except Exception as e:
                raise BenchError(f"{self.name}: CreateTopics {topic!r} failed: {e!r}") from e
        producer = Producer({"bootstrap.servers": self.bootstrap, **CLIENT_COMMON})
        deadline = time.monotonic() + 30
        while True:
            md = producer.list_topics(topic, timeout=10).topics.get(topic)
            if (
                md is not None
                and md.error is None
                and md.partitions
                and all(p.leader >= 0 for p in md.partitions.values())
            ):
                break
            if time.monotonic() > deadline:
                raise BenchError(f"{self.name}: topic {topic!r} has no leaders after 30 s: {md!r}")
            time.sleep(0.2)
        if len(md.partitions) != partitions:
            raise BenchError(
                f"{self.name}: topic {topic!r} has {len(md.partitions)} partitions, expected {partitions}"
            )


def broker_state(broker: BrokerProcess) -> str:
    code = broker.returncode()
    return "running" if code is None else f"exited with status {code}"


def wait_files_gone(name: str, data_dirs: list[Path], topic: str, timeout: float = 60) -> None:
    """Until no partition directory of `topic` (`<topic>-<n>`, or renamed for deletion `<topic>-<n>.<id>-delete`)
    is left in `data_dirs`. kbroker answers DeleteTopics once the directories are renamed and unlinks them in a
    worker thread just after (kbroker/log/deleter.py). That takes a while for the GiBs a produce run leaves (the
    page cache drops them page by page), and the next measurement must not get it: it starts with a sync(), and
    a frozen broker would finish the unlink in its own next run, its CPU counted there. Best effort."""
    deadline = time.monotonic() + timeout

    def left() -> list[str]:
        found = []
        for directory in data_dirs:
            try:
                names = os.listdir(directory)
            except FileNotFoundError:
                continue
            for entry in names:
                rest = entry[len(topic) + 1 :] if entry.startswith(topic + "-") else ""
                if rest.split(".", 1)[0].isdigit():
                    found.append(entry)
        return found

    while remaining := left():
        if time.monotonic() > deadline:
            print(f"{name}: {len(remaining)} directories of deleted topic {topic} still there", flush=True)
            return
        time.sleep(0.01)


class KBroker(Target):
    """`python -m kbroker serve` on a fresh data directory, through the tests' BrokerProcess, from `source`, with
    its admin listener (revisions from 20bfbb7, 2026-11-25, on: older ones lack admin.listener and do not start)."""

    def __init__(
        self,
        source: KBrokerSource,
        name: str = "kbroker",
        data_root: str | None = None,
        overrides: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.source = source
        self.data_root = data_root
        self.overrides = overrides or {}
        self.tmp: Path | None = None
        self.broker: BrokerProcess | None = None

    def start(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="kbroker-bench-", dir=self.data_root))
        # the admin listener serves /metrics, whose log flush histogram the latency runs read (`log_flushes`)
        self.metrics = f"http://127.0.0.1:{free_port()}"
        self.broker = BrokerProcess(
            self.tmp / "data",
            overrides={"admin.listener": self.metrics, **self.overrides},
            log_path=self.tmp / "broker.log",
            source_dir=self.source.directory,
        )
        self.bootstrap = self.broker.bootstrap
        try:
            self.broker.start()
            wait_brokers(self.bootstrap, 1, timeout=30)
        except (AssertionError, BenchError, KafkaException) as e:
            raise BenchError(f"{self.name} did not start: {e}\n{self.diagnostics()}") from e

    def pids(self) -> list[int]:
        return [self.broker.pid] if self.broker is not None else []

    def data_dirs(self) -> list[Path]:
        return [self.broker.data_dir] if self.broker is not None else []

    def log_flushes(self) -> dict[float, float] | None:
        try:
            samples = scrape(self.metrics)
        except (httpx.HTTPError, AssertionError):  # the broker is gone: no figure (`measure` reports it)
            return None
        return {
            float(dict(labels)["le"]): count
            for (name, labels), count in samples.items()
            if name == "kafka_log_logflushstats_logflush_seconds_bucket"
        } or None

    def alive(self) -> bool:
        return self.broker is not None and self.broker.is_running()

    def diagnostics(self) -> str:
        if self.broker is None:
            return f"{self.name}: not started"
        return (
            f"{self.name}: process {broker_state(self.broker)}; last lines of {self.broker.log_path}:\n"
            f"{self.broker.log_tail(3000)}"
        )

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


class KBrokerCluster(Target):
    """Three kbroker processes on 127.0.0.1 sharing a private etcd (the tests' cluster fixture, with the brokers'
    default settings rather than the tests' short timeouts); topics with replication factor 3.

    CPU is the sum over the three broker processes (etcd not counted).
    """

    replication_factor = 3
    # Not frozen: etcd and the brokers' sessions in it time out when the clock moves on past a pause
    pausable = False

    def __init__(self, source: KBrokerSource, size: int = 3, name: str = "kbroker-x3") -> None:
        self.name = name
        self.source = source
        self.size = size
        self.tmp: Path | None = None
        self.etcd: Any = None  # tests.etcd_process.EtcdProcess, imported when a cluster is wanted
        self.cluster: Any = None  # tests.cluster_fixture.Cluster

    def start(self) -> None:
        # imported here: the cluster fixture brings kbroker's own client modules, which the other targets do not need
        from tests.cluster_fixture import Cluster
        from tests.etcd_process import ETCD_BINARY, EtcdProcess

        if ETCD_BINARY is None:
            raise BenchError("etcd is not installed (apt-get install -y etcd-server)")
        self.tmp = Path(tempfile.mkdtemp(prefix="kbroker-bench-x3-"))
        (self.tmp / "etcd").mkdir()
        self.etcd = EtcdProcess(self.tmp / "etcd")
        try:
            self.etcd.start()
            self.cluster = Cluster(
                self.tmp / "nodes", self.etcd, self.size, base_overrides={}, source_dir=self.source.directory
            )
            self.bootstrap = self.cluster.bootstrap
            self.cluster.start()
            wait_brokers(self.bootstrap, self.size, timeout=60)
        except (AssertionError, RuntimeError, BenchError, KafkaException) as e:
            raise BenchError(f"{self.name} did not start: {e}\n{self.diagnostics()}") from e

    def nodes(self) -> list[BrokerProcess]:
        return list(self.cluster.nodes.values()) if self.cluster is not None else []

    def pids(self) -> list[int]:
        return [node.pid for node in self.nodes()]

    def data_dirs(self) -> list[Path]:
        return [node.data_dir for node in self.nodes()]

    def alive(self) -> bool:
        return bool(self.nodes()) and all(node.is_running() for node in self.nodes())

    def diagnostics(self) -> str:
        parts = [
            f"{self.name}/{node.bootstrap}: process {broker_state(node)}; last lines of {node.log_path}:\n"
            f"{node.log_tail(2000)}"
            for node in self.nodes()
        ]
        if self.etcd is not None:
            parts.append(
                f"etcd: {'healthy' if self.etcd.healthy() else 'not answering'}; {self.etcd.log_tail(1000)}"
            )
        return "\n".join(parts)

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
        if self.etcd is not None:
            self.etcd.stop()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


class ScriptTarget(Target):
    """A broker run by a script of bench/ in a process of its own, which prints `BOOTSTRAP host:port[,…]` on stdout
    once it serves (the mock cluster, bench/floor_broker.py); its log goes to a temporary directory."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tmp: Path | None = None
        self.log_path: Path | None = None
        self.proc: subprocess.Popen[str] | None = None

    def _launch(self, script: str, args: Callable[[Path], list[str]], *, stdin: int | None = None) -> None:
        """Run `script` with `args(tmp)`, tmp being the target's temporary directory, and wait for its BOOTSTRAP."""
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{self.name}-bench-"))
        self.log_path = self.tmp / f"{self.name}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [PYTHON, str(BENCH / script), *args(self.tmp)],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("BOOTSTRAP "):
            raise BenchError(f"{self.name} did not start: {line!r}\n{self.diagnostics()}")
        self.bootstrap = line.split()[1]

    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc is not None else []

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def diagnostics(self) -> str:
        state = (
            "running" if self.alive() else f"exited with status {self.proc.returncode if self.proc else '?'}"
        )
        text = f"{self.name}: process {state}"
        if self.log_path is not None:
            text += f"; last lines of {self.log_path}:\n{tail(self.log_path)}"
        return text

    def stop(self) -> None:
        if self.proc is not None:
            stop_pid(self.proc)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


class Mock(ScriptTarget):
    """librdkafka's mock cluster, hosted by bench/mock_cluster.py in a process of its own."""

    auto_creates = True

    def __init__(self, brokers: int = 1, name: str = "mock") -> None:
        super().__init__(name)
        self.brokers = brokers
        self.replication_factor = brokers  # the mock gives auto-created topics one replica per broker

    def start(self) -> None:
        self._launch("mock_cluster.py", lambda _: ["--brokers", str(self.brokers)], stdin=subprocess.PIPE)

    def stop(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the mock's way out
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass  # ScriptTarget.stop stops it by its pid
        super().stop()


class ApacheKafka(Target):
    """Apache Kafka `version` (compat/kafka/: its jars from Maven Central, cached under ~/.cache/kbroker), one KRaft
    node (broker and controller in one JVM, compat/kafka/process.py's heap of 512 MiB and Kafka's own G1 settings)
    on a fresh data directory on the same disk as kbroker's.

    With `fsync`, log.flush.interval.messages=1: Kafka fsyncs each append before it answers, the durability
    kbroker gives acks=all (docs/durability.md); Kafka's default leaves that to the operating system."""

    def __init__(self, version: str = "3.9.2", *, fsync: bool = False) -> None:
        self.name = f"kafka-{version}" + ("-fsync" if fsync else "")
        self.version = version
        self.fsync = fsync
        self.tmp: Path | None = None
        self.process: Any = None

    def start(self) -> None:
        from compat.kafka.process import SERVER_MAIN, KafkaProcess  # only this target needs the JVM helpers

        class QuietKafka(KafkaProcess):
            def command(self) -> list[str]:
                # Kafka's log at WARN: at INFO it logs every topic created and deleted (several per scenario here),
                # which costs it CPU that kbroker (logging such things at INFO too, but less) would not be charged
                return self.java_command(SERVER_MAIN, str(self.config_path), log_level="WARN")

        self.tmp = Path(tempfile.mkdtemp(prefix="kafka-bench-"))
        # Frozen while another target is measured (`run`): its controller, in the same JVM, would otherwise find the
        # broker's last heartbeat older than the session timeout (9 s) on waking, fence it, and refuse topics
        # ("All brokers are currently fenced") until it re-registered. A heartbeat only keeps the session.
        overrides = {"broker.session.timeout.ms": "3600000"}
        if self.fsync:
            overrides["log.flush.interval.messages"] = "1"
        self.process = QuietKafka(self.version, self.tmp / "kafka", overrides=overrides)
        self.bootstrap = self.process.bootstrap
        try:
            self.process.start()
            self.process.wait_ready()
        except AssertionError as e:
            raise BenchError(f"{self.name} did not start: {e}") from e

    def pids(self) -> list[int]:
        return [self.process.pid] if self.process is not None else []

    def alive(self) -> bool:
        return self.process is not None and bool(self.process.is_running())

    def diagnostics(self) -> str:
        if self.process is None:
            return f"{self.name}: not started"
        return f"{self.name}: process {broker_state(self.process)}; log:\n{self.process.log_tail(3000)}"

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise OSError(f"no VmRSS for {pid}")


# --------------------------------------------------------------------------------------------------------------
# measurements


@dataclass
class ClientErrors:
    messages: list[str] = field(default_factory=list)

    def __call__(self, err: confluent_kafka.KafkaError) -> None:
        if len(self.messages) < 20:
            self.messages.append(str(err))


@dataclass
class Deliveries:
    ok: int = 0
    failed: int = 0
    first_error: str | None = None


def own_cpu() -> float:
    """CPU seconds of this process (the load generator: Python plus librdkafka's threads)."""
    return time.process_time()  # all threads of the process, ns resolution


def measured_cpu(target: Target) -> CpuSample | None:
    try:
        return target.cpu()
    except OSError:
        return None


def produce_throughput(
    target: Target, topic: str, n: int, value: bytes, acks: str, timeout: float, *, warm_up: bool = False
) -> dict[str, Any]:
    """One producer, n records, linger.ms=5, default batch sizes; wall time from the first produce() to flush()
    (with `warm_up`, after one untimed record to each partition: the produce scenarios; a topic filled for reading
    holds exactly n).

    Records go round-robin to the partitions (explicitly: librdkafka's sticky partitioner would put a whole fast run
    into one or two partitions, and the mock keeps only ~5 MiB per partition).
    """
    state = Deliveries()

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            state.ok += 1
        else:
            state.failed += 1
            state.first_error = state.first_error or str(err)

    errors = ClientErrors()
    producer = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "message.timeout.ms": int(timeout * 1000),
            "on_delivery": on_delivery,
            "error_cb": errors,
            **CLIENT_COMMON,
        }
    )
    producer.list_topics(topic, timeout=10)  # connection and metadata before the clock starts
    # One record to each partition first, untimed: every partition's path is up before the clock starts. With
    # replicas it matters: a follower's fetch in flight when the new topic appears is a long poll (up to
    # replica.fetch.wait.max.ms, 500 ms, in Kafka as in kbroker) that must end before its next fetch can list the
    # topic's partitions, and acks=all waits for that.
    if warm_up:
        for partition in range(PARTITIONS):
            producer.produce(topic, value, partition=partition)
        if producer.flush(timeout) or state.failed:
            raise BenchError(f"produce acks={acks} to {target.name}: the warm-up failed: {state.first_error}")
        state.ok = 0
        # The run's page cache (one copy per broker process: each replica writes its own) on pages the machine
        # holds, as a broker that has run for a while writes it (bench/common.py reuse_page_cache).
        reuse_page_cache(produce_bytes(n, len(value)) * max(1, len(target.pids())))
    cpu0, gen0 = measured_cpu(target), own_cpu()
    t0 = time.perf_counter()
    produce = producer.produce
    for i in range(n):
        while True:
            try:
                produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:  # local queue full (queue.buffering.max.*): serve callbacks and retry
                producer.poll(0.005)
    remaining = producer.flush(timeout)
    t1 = time.perf_counter()
    cpu1, gen1 = measured_cpu(target), own_cpu()
    if remaining or state.failed or state.ok != n:
        raise BenchError(
            f"produce acks={acks} to {target.name}: {state.ok} delivered, {state.failed} failed "
            f"(first error: {state.first_error}), {remaining} still queued after {timeout:.0f} s; "
            f"client errors: {errors.messages}"
        )
    return {
        "records": n,
        "seconds": t1 - t0,
        "cpu": cpu_delta(cpu0, cpu1),
        "cpu_ticks_and_system": system_seconds(cpu0, cpu1),
        "gen_cpu": gen1 - gen0,
        "client_errors": errors.messages,
    }


def produce_latency(
    target: Target, topic: str, rate: float, seconds: float, value: bytes, acks: str, linger_ms: int
) -> dict[str, Any]:
    """Per-message latency from produce() to its delivery callback, at a fixed, moderate rate.

    The schedule is open-loop (a late message is sent at once, not skipped). One untimed record to each partition
    comes first, and messages produced in the first 10% of the run are a warm-up and are not counted. librdkafka's
    statistics (every 500 ms) give the produce requests per second and the most requests seen waiting for a
    response: when that grows, the broker is queueing.
    """
    samples: list[tuple[float, float]] = []  # (sent at, latency)
    state = Deliveries()
    in_flight: list[int] = []
    requests: list[int] = []

    def on_delivery(sent_at: float, err: Any, msg: Any) -> None:
        now = time.perf_counter()
        if err is not None:
            state.failed += 1
            state.first_error = state.first_error or str(err)
            return
        samples.append((sent_at, now - sent_at))

    def on_stats(text: str) -> None:
        stats = json.loads(text)
        brokers = [b for b in stats.get("brokers", {}).values() if b.get("nodeid", -1) >= 0]
        in_flight.append(sum(b.get("waitresp_cnt", 0) for b in brokers))
        requests.append(sum(b.get("tx", 0) for b in brokers))

    errors = ClientErrors()
    producer = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "acks": acks,
            "linger.ms": linger_ms,
            "message.timeout.ms": 60000,
            "error_cb": errors,
            "statistics.interval.ms": 500,
            "stats_cb": on_stats,
            **CLIENT_COMMON,
        }
    )
    producer.list_topics(topic, timeout=10)
    # One untimed record to each partition first, as in the produce runs (produce_throughput): on replicas, the
    # followers' fetches in flight when the topic appeared hold its first records for up to replica.fetch.wait.max.ms
    # (500 ms), and at acks=all the requests queued behind them spilled past the run's 10% warm-up.
    for partition in range(PARTITIONS):
        producer.produce(topic, value, partition=partition)
    if producer.flush(60):
        raise BenchError(f"latency run acks={acks} on {target.name}: the warm-up records were not delivered")
    producer.poll(0.6)  # one statistics report before the run: its request count is the baseline
    n = max(1, int(rate * seconds))
    interval = 1.0 / rate
    requests_before = requests[-1] if requests else 0
    in_flight.clear()
    flushes_before = target.log_flushes()
    # A thread of its own serves the delivery callbacks, blocked in poll() until librdkafka has a report, and the
    # schedule sleeps. poll() counts whole milliseconds: a loop polling for the rest of each 1 ms interval asked
    # for poll(0) and spun one of the machine's two cores, leaving the other to the broker, its kernel workers
    # (an acks=all fsync runs in one) and librdkafka's threads, whose waits for it made the latency tail
    # (bench/README.md, "A client that sleeps").
    stop_serving = threading.Event()

    def serve_callbacks() -> None:
        while not stop_serving.is_set():
            producer.poll(0.05)

    server = threading.Thread(target=serve_callbacks, name="delivery-callbacks")
    cpu0, gen0 = measured_cpu(target), own_cpu()
    start = time.perf_counter()
    server.start()
    try:
        for i in range(n):
            wait = start + i * interval - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            sent_at = time.perf_counter()
            producer.produce(
                topic, value, partition=i % PARTITIONS, on_delivery=functools.partial(on_delivery, sent_at)
            )
        remaining = producer.flush(60)
        elapsed = time.perf_counter() - start
    finally:
        stop_serving.set()
        server.join()  # up to its poll's 50 ms: not in `elapsed`
    cpu1, gen1 = measured_cpu(target), own_cpu()
    flushes_after = target.log_flushes()
    producer.poll(0.6)  # a last statistics report
    if remaining or state.failed or len(samples) != n:
        raise BenchError(
            f"latency run acks={acks} on {target.name}: {len(samples)}/{n} delivered, {state.failed} failed "
            f"(first error: {state.first_error}), {remaining} still queued; client errors: {errors.messages}"
        )
    warm_up_end = start + 0.1 * seconds
    kept = [lat for sent_at, lat in samples if sent_at >= warm_up_end]
    return {
        "records": n,
        "achieved_rate": n / elapsed,
        **latency_percentiles([1000 * latency for latency in kept]),
        "requests_per_s": (requests[-1] - requests_before) / elapsed if requests else None,
        "max_in_flight": max(in_flight) if in_flight else None,
        "cpu": cpu_delta(cpu0, cpu1),
        "gen_cpu": gen1 - gen0,
        "client_errors": errors.messages,
        **slow_log_flushes(flushes_before, flushes_after),
    }


# a log flush slower than this holds every acks=all answer of its round past the 2 ms p99 target
SLOW_FLUSH_S = 0.0025


def slow_log_flushes(before: dict[float, float] | None, after: dict[float, float] | None) -> dict[str, float]:
    """From the broker's log flush histogram before and after a run: how many flushes it made, how many took over
    2.5 ms (the histogram's bound nearest the 2 ms target), and the bound under which the slowest ended (ms)."""
    if not before or not after:
        return {}
    delta = {le: after[le] - before.get(le, 0.0) for le in after}
    total = delta.get(float("inf"), 0.0)
    if not total:
        return {}
    return {
        "log_flushes": total,
        "log_flushes_slow": total - delta.get(SLOW_FLUSH_S, 0.0),
        "longest_log_flush_ms": 1000 * min(le for le, count in delta.items() if count == total),
    }


def idle_cpu(target: Target, seconds: float) -> float | None:
    """Share of one core the broker uses while no client sends anything."""
    time.sleep(0.5)
    a = measured_cpu(target)
    time.sleep(seconds)
    b = measured_cpu(target)
    used = cpu_delta(a, b)
    return None if used is None else used / seconds


def fmt_share(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def count_topics(target: Target) -> int | str:
    try:
        md = AdminClient({"bootstrap.servers": target.bootstrap, **CLIENT_COMMON}).list_topics(timeout=10)
    except KafkaException:
        return "?"
    return len([t for t in md.topics if not t.startswith("__")])


def latency_key(rate: float, acks: str) -> str:
    return f"latency {rate:.0f}/s acks={acks}"


def produce_scenario(
    target: Target, topic: str, n: int, value: bytes, acks: str, timeout: float
) -> dict[str, Any]:
    target.create_topic(topic, PARTITIONS)
    try:
        return produce_throughput(target, topic, n, value, acks, timeout, warm_up=True)
    finally:
        target.delete_topic(topic)


def latency_scenario(
    target: Target, topic: str, rate: float, seconds: float, value: bytes, acks: str, linger_ms: int
) -> dict[str, Any]:
    target.create_topic(topic, PARTITIONS)
    try:
        return produce_latency(target, topic, rate, seconds, value, acks, linger_ms)
    finally:
        target.delete_topic(topic)


def check_log_start(consumer: Consumer, target: Target, topic: str, expected: int, wait: float = 30) -> None:
    """The topic holds exactly `expected` records from offset 0 in every partition (the mock trims at ~5 MiB).

    Asked of the leader by the measuring consumer itself, which also makes it connect to the leader before the clock
    starts (otherwise librdkafka retries the first offset query only after 500 ms). With replicas, records become
    readable when the high watermark passes them, after the followers fetched them: wait up to `wait` seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        marks = [
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(PARTITIONS)
        ]
        for p, (low, _) in enumerate(marks):
            if low != 0:
                raise BenchError(
                    f"{target.name}: partition {topic}-{p} starts at offset {low}, not 0: the broker dropped "
                    f"records (the mock keeps ~5 MiB per partition); use fewer records"
                )
        total = sum(high - low for low, high in marks)
        if total == expected:
            return
        if total > expected or time.monotonic() > deadline:
            raise BenchError(
                f"{target.name}: {topic} holds {total} records below its high watermarks after {wait:.0f} s, "
                f"expected {expected}; (low, high) per partition: {marks}"
            )
        time.sleep(0.1)


def consume_pass(
    target: Target, topic: str, n: int, value_size: int, timeout: float
) -> tuple[float, float | None, float]:
    """A fresh consumer assigns every partition at the beginning and reads all n records.

    Timed from assign() to the n-th record. Untimed before it: creating the consumer and asking the leader for the
    watermarks (which checks that all n records are still there, and connects to the leader so that the first
    offset query is not put off by librdkafka's 500 ms retry).
    """
    errors = ClientErrors()
    consumer = Consumer(
        {
            "bootstrap.servers": target.bootstrap,
            "group.id": f"bench-{uuid.uuid4()}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            **({"debug": os.environ["BENCH_RDKAFKA_DEBUG"]} if os.environ.get("BENCH_RDKAFKA_DEBUG") else {}),
            "error_cb": errors,
            **CLIENT_COMMON,
        }
    )
    try:
        check_log_start(consumer, target, topic, n)
        count = 0
        payload = 0
        cpu0, gen0 = measured_cpu(target), own_cpu()
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout
        consumer.assign(
            [TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(PARTITIONS)]
        )
        while count < n:
            if time.monotonic() > deadline:
                raise BenchError(
                    f"consume from {target.name}: {count}/{n} records after {timeout:.0f} s; "
                    f"client errors: {errors.messages}"
                )
            # consume() waits until it has num_messages or the timeout passes: never ask for more than remain
            for msg in consumer.consume(num_messages=min(1000, n - count), timeout=0.5):
                err = msg.error()
                if err is not None:
                    raise BenchError(f"consume from {target.name}: {err}; client errors: {errors.messages}")
                count += 1
                payload += len(msg.value() or b"")
        t1 = time.perf_counter()
        cpu1, gen1 = measured_cpu(target), own_cpu()
    finally:
        consumer.close()
    if count != n or payload != n * value_size:
        raise BenchError(
            f"consume from {target.name}: {count} records / {payload} bytes, expected {n} / {n * value_size}"
        )
    return t1 - t0, cpu_delta(cpu0, cpu1), gen1 - gen0


def consume_throughput(
    target: Target, topic: str, n: int, value: bytes, passes: int, timeout: float
) -> dict[str, Any]:
    """Fill a topic with n records (acks=1, untimed), then read it back `passes` times; the timed parts add up."""
    target.create_topic(topic, PARTITIONS)
    seconds = 0.0
    cpu: float | None = 0.0
    gen_cpu = 0.0
    try:
        produce_throughput(target, topic, n, value, "1", timeout)
        for _ in range(passes):
            s, c, g = consume_pass(target, topic, n, len(value), timeout)
            seconds += s
            cpu = None if cpu is None or c is None else cpu + c
            gen_cpu += g
    finally:
        target.delete_topic(topic)
    return {"records": n * passes, "seconds": seconds, "cpu": cpu, "gen_cpu": gen_cpu}


# --------------------------------------------------------------------------------------------------------------
# the run


@dataclass
class Plan:
    rounds: int
    sizes: list[int]
    produce_records: dict[int, int]
    consume_records: dict[int, int]
    consume_passes: int
    latency_rates: list[float]
    latency_seconds: float
    latency_linger_ms: int
    timeout: float
    acks_modes: list[str]
    idle_seconds: float
    # the latency runs only at these sizes (None: every size): the seed size classes would multiply their 10 s runs
    latency_sizes: list[int] | None = None
    # scenarios of their own modules (bench/kafka_perf_test.py, bench/connections.py, bench/cold_read.py), run
    # after the sizes in every round, on the same targets in the same order; those with `after_rounds` (the cold
    # read) in rounds of their own after all the others
    round_scenarios: list[RoundScenario] = field(default_factory=list)


# attempt(scenario, size, target, measure): runs `measure` (a dict with at least "records" and "seconds"), records
# it with the round, the load average and the broker's RSS; a BenchError or KafkaException becomes a failure
Attempt = Callable[[str, int, "Target", Callable[[], dict[str, Any]]], None]


class RoundScenario(Protocol):
    # True: measured in rounds of its own once every other scenario's rounds are done, because it upsets the
    # machine for what follows (the cold read writes N GiB and drops it from the page cache: the memory freed goes
    # back to this virtual machine's host, and every page cache write after it pays to take it back)
    after_rounds: bool

    def run_round(self, order: list[Target], attempt: Attempt) -> None:
        """Measure every target of `order` once, in that order, through `attempt`."""

    def finish(self, targets: list[Target]) -> None:
        """After the last round: remove what the scenario left on the targets (after a crash of the run it goes
        with the targets' data directories)."""


def size_label(size: int) -> str:
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"


# the results' pseudo-target of the acks=all latency runs' disk floor (`run`'s disk_floor)
DISK = "disk"


def isolated(targets: list[Target]) -> bool:
    """Whether `run` freezes the other targets while it measures one (not where one of them cannot be frozen)."""
    return len(targets) > 1 and all(t.pausable for t in targets)


def run(
    targets: list[Target], plan: Plan
) -> tuple[dict[tuple[str, int, str], list[dict[str, Any]]], list[str]]:
    """results[(scenario, size, target)] = list of per-round dicts; failures = text for the report."""
    results: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    failures: list[str] = []
    failed_targets: set[str] = set()
    values = {size: os.urandom(size) for size in plan.sizes}  # incompressible; no compression is configured
    run_id = uuid.uuid4().hex[:8]
    # Each measurement has the machine to itself: the other targets are frozen meanwhile. Left running, an idle
    # Apache Kafka's timers, checkpoint fsyncs and deferred deletions took the latency p99 of the target being
    # measured from 0.4 to 0.7-0.9 ms at acks=1 and from 0.8-1.3 to 2.6-3.4 ms at acks=all (bench/README.md).
    # Not where a target cannot be frozen (a cluster's etcd sessions): then none is, so that all are measured alike.
    isolate = isolated(targets)

    def attempt(scenario: str, size: int, target: Target, fn: Any) -> None:
        if target.name in failed_targets:
            return
        if not target.alive():
            failed_targets.add(target.name)
            failures.append(f"{scenario} {size_label(size)}: {target.diagnostics()}")
            return
        others = [t for t in targets if t is not target and t.name not in failed_targets] if isolate else []
        for other in others:
            other.pause()
        try:
            measure(scenario, size, target, fn)
        finally:
            for other in others:
                other.resume()

    def measure(scenario: str, size: int, target: Target, fn: Any) -> None:
        label = f"{target.name:>10} {size_label(size):>6} {scenario:<20}"
        # Every measurement starts with no dirty pages: the previous one's page cache writeback (hundreds of MB
        # after a produce run) would otherwise compete with this one for the disk (an acks=all fsync waits behind
        # it) and for the two cores (the kernel's flusher threads).
        os.sync()
        returned_before = memory_returned_kib()
        try:
            r = fn()
        except (BenchError, KafkaException) as e:
            diag = "" if target.alive() else "\n" + target.diagnostics()
            failures.append(f"{scenario} {size_label(size)} on {target.name}: {e}{diag}")
            print(f"{label} FAILED: {e}{diag}", flush=True)
            if not target.alive():
                failed_targets.add(target.name)
            return
        r["round"] = current_round
        # Each figure carries the machine's load average and the broker's resident memory right after it: the
        # machine is shared, and a reader must be able to see how busy it was. And the memory the machine handed
        # back to its host meanwhile (bench/common.py memory_returned_kib), which makes page cache writes dearer.
        r["load"] = load_average()
        returned_after = memory_returned_kib()
        if returned_before is not None and returned_after is not None:
            r["returned_mib"] = (returned_after - returned_before) / 1024
        r["rss"] = target.rss_bytes()
        results[(scenario, size, target.name)].append(r)
        if "p50_ms" in r:
            shown = (
                f"p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  ({r['achieved_rate']:.0f} msg/s, "
                f"{r['requests_per_s'] or 0:.0f} req/s, up to {r['max_in_flight']} waiting)"
            )
        else:
            shown = f"{r['records'] / r['seconds']:>10,.0f} rec/s  {r['records'] * size / r['seconds'] / 1e6:7.1f} MB/s"
        if r.get("cpu") is not None:
            shown += f"  broker CPU {fmt_cpu(r['cpu'] * 100_000 / r['records']):>6} s/100k"
        print(f"{label} {shown}", flush=True)

    def disk_floor(scenario: str, size: int, rate: float) -> None:
        """After the targets' acks=all latency runs, the same schedule on the disk alone: the latency of a broker
        that costs nothing but its group-committed fsyncs (bench/floor.py group_commit_latency), every target
        frozen meanwhile. Its tail is the disk's fsync stalls, which no fsync-before-ack broker escapes, and the
        machine's own pauses (bench/README.md, "The disk alone")."""
        frozen = [t for t in targets if t.name not in failed_targets] if isolate else []
        for t in frozen:
            t.pause()
        try:
            os.sync()
            r = group_commit_latency(Path(tempfile.gettempdir()), rate, plan.latency_seconds, size)
        finally:
            for t in frozen:
                t.resume()
        r["round"] = current_round
        r["load"] = load_average()
        results[(scenario, size, DISK)].append(r)
        print(
            f"{DISK:>10} {size_label(size):>6} {scenario:<20} p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  "
            f"(longest fsync {r['longest_fsync_ms']:.1f} ms, {r['slow_fsyncs']} over 2 ms)",
            flush=True,
        )

    current_round = 0
    during = [extra for extra in plan.round_scenarios if not extra.after_rounds]
    after = [extra for extra in plan.round_scenarios if extra.after_rounds]
    for rnd in range(plan.rounds):
        current_round = rnd
        order = targets if rnd % 2 == 0 else targets[::-1]
        print(f"--- round {rnd + 1}/{plan.rounds}: order {', '.join(t.name for t in order)}", flush=True)
        for size in plan.sizes:
            value = values[size]
            prefix = f"bench-{run_id}-r{rnd}-s{size}"
            for acks in plan.acks_modes:
                for target in order:
                    job = functools.partial(
                        produce_scenario,
                        target,
                        f"{prefix}-produce-acks{acks.replace('-', 'm')}",
                        plan.produce_records[size],
                        value,
                        acks,
                        plan.timeout,
                    )
                    attempt(f"produce acks={acks}", size, target, job)
            for target in order:
                job = functools.partial(
                    consume_throughput,
                    target,
                    f"{prefix}-consume",
                    plan.consume_records[size],
                    value,
                    plan.consume_passes,
                    plan.timeout,
                )
                attempt("consume", size, target, job)
            for rate in (
                plan.latency_rates if plan.latency_sizes is None or size in plan.latency_sizes else []
            ):
                for acks in plan.acks_modes:
                    for target in order:
                        job = functools.partial(
                            latency_scenario,
                            target,
                            f"{prefix}-latency-{rate:.0f}-acks{acks.replace('-', 'm')}",
                            rate,
                            plan.latency_seconds,
                            value,
                            acks,
                            plan.latency_linger_ms,
                        )
                        attempt(latency_key(rate, acks), size, target, job)
                    if acks in ("all", "-1"):
                        disk_floor(latency_key(rate, acks), size, rate)
        for extra in during:
            extra.run_round(order, attempt)
    for rnd in range(plan.rounds if after else 0):
        current_round = rnd
        order = targets if rnd % 2 == 0 else targets[::-1]
        print(
            f"--- {', '.join(type(extra).__name__ for extra in after)} round {rnd + 1}/{plan.rounds}",
            flush=True,
        )
        for extra in after:
            extra.run_round(order, attempt)
    for extra in plan.round_scenarios:  # a target's data directory goes anyway when it stops
        extra.finish(targets)
    return results, failures


# --------------------------------------------------------------------------------------------------------------
# report


def fmt_int(x: float) -> str:
    return f"{x:,.0f}"


def cell_median(rows: list[dict[str, Any]], fn: Any) -> float | None:
    vals = [v for v in (fn(r) for r in rows) if v is not None]
    return statistics.median(vals) if vals else None


def paired_ratio(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> float | None:
    """Median over rounds of the ratio of two targets' rates measured next to each other in the same round."""
    rate_b = {r["round"]: r["records"] / r["seconds"] for r in b}
    ratios = [r["records"] / r["seconds"] / rate_b[r["round"]] for r in a if r["round"] in rate_b]
    return statistics.median(ratios) if ratios else None


def fmt_cpu(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def spread(rows: list[dict[str, Any]], fn: Any, fmt: Any) -> str:
    vals = sorted(v for v in (fn(r) for r in rows) if v is not None)
    if len(vals) < 2:
        return ""
    return f" ({fmt(vals[0])} to {fmt(vals[-1])})"


def report(
    targets: list[Target],
    plan: Plan,
    results: dict[tuple[str, int, str], list[dict[str, Any]]],
    failures: list[str],
    meta: dict[str, str],
) -> str:
    names = [t.name for t in targets]
    out: list[str] = []
    out.append(f"Date: {meta['date']}  ")
    out.append(f"Machine: {meta['machine']}  ")
    out.append(f"Software: {meta['software']}  ")
    out.append(f"Command: `{meta['command']}`  ")
    out.append(
        f"Load average (1 min) at the start and the end: {meta['load_start']} / {meta['load_end']} "
        "(other work on the machine shows here)  "
    )
    out.append(
        f"Broker CPU while idle (share of one core, over {plan.idle_seconds:g} s): {meta.get('idle', '?')}  "
    )
    out.append(
        f"Plan: {plan.rounds} rounds, targets interleaved per scenario (order reversed every other round"
        + ("; the others frozen while one is measured" if isolated(targets) else "")
        + "); records per produce run: "
        + ", ".join(f"{plan.produce_records[s]:,} x {size_label(s)}" for s in plan.sizes)
        + f"; read back: {plan.consume_passes} x "
        + ", ".join(f"{plan.consume_records[s]:,} x {size_label(s)}" for s in plan.sizes)
        + "; latency: "
        + " and ".join(f"{rate:,.0f}" for rate in plan.latency_rates)
        + f" msg/s for {plan.latency_seconds:g} s"
        + f"; topics of {PARTITIONS} partitions, replication factor "
        + ", ".join(f"{t.replication_factor} on {t.name}" for t in targets)
        + "."
    )
    out.append("")
    out.append("### Throughput (median of rounds; range in parentheses)")
    out.append("")
    header = ["record", "scenario"]
    for n in names:
        header += [f"{n} rec/s", f"{n} MB/s", f"{n} CPU s/100k rec", "load gen. CPU"]
    if len(names) == 2:
        header.append(f"{names[0]} / {names[1]} rec/s")
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    scenarios = [f"produce acks={a}" for a in plan.acks_modes] + ["consume"]
    for size in plan.sizes:
        for sc in scenarios:
            row = [size_label(size), sc]
            rates: list[float | None] = []
            for n in names:
                rows = results.get((sc, size, n), [])
                rate = cell_median(rows, lambda r: r["records"] / r["seconds"])
                rates.append(rate)
                if rate is None:
                    row += ["failed" if any(n in f for f in failures) else "—", "", "", ""]
                    continue
                mbs = cell_median(rows, lambda r, size=size: r["records"] * size / r["seconds"] / 1e6)
                cpu = cell_median(
                    rows, lambda r: None if r["cpu"] is None else r["cpu"] * 100_000 / r["records"]
                )
                row.append(fmt_int(rate) + spread(rows, lambda r: r["records"] / r["seconds"], fmt_int))
                row.append(f"{mbs:.1f}")
                row.append(fmt_cpu(cpu))
                gen = cell_median(rows, lambda r: r["gen_cpu"] / r["seconds"])
                row.append("" if gen is None else f"{100 * gen:.0f}%")
            if len(names) == 2:
                ratio = paired_ratio(
                    results.get((sc, size, names[0]), []), results.get((sc, size, names[1]), [])
                )
                row.append("" if ratio is None else f"{ratio:.2f}")
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append(
        f"### Produce latency, {plan.latency_seconds:g} s at a fixed rate, linger.ms={plan.latency_linger_ms} "
        "(median over rounds of each round's p50 / p99, ms; produce requests/s and the most requests seen "
        "waiting for their response)"
    )
    out.append("")
    header = ["record", "msg/s", "acks"]
    for n in names:
        header += [f"{n} p50", f"{n} p99", f"{n} CPU s/100k rec", f"{n} req/s, max waiting"]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    latency_sizes = [s for s in plan.sizes if plan.latency_sizes is None or s in plan.latency_sizes]
    for size, rate, acks in itertools.product(latency_sizes, plan.latency_rates, plan.acks_modes):
        row = [size_label(size), f"{rate:,.0f}", acks]
        for n in names:
            rows = results.get((latency_key(rate, acks), size, n), [])
            if not rows:
                row += ["failed" if any(n in f for f in failures) else "—", "", "", ""]
                continue
            p50 = cell_median(rows, lambda r: r["p50_ms"])
            p99 = cell_median(rows, lambda r: r["p99_ms"])
            cpu = cell_median(rows, lambda r: None if r["cpu"] is None else r["cpu"] * 100_000 / r["records"])
            reqs = cell_median(rows, lambda r: r["requests_per_s"])
            waiting = cell_median(rows, lambda r: r["max_in_flight"])
            row += [
                f"{p50:.2f}",
                f"{p99:.2f}",
                fmt_cpu(cpu),
                "" if reqs is None or waiting is None else f"{reqs:.0f}, {waiting:.0f}",
            ]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    disk = [
        (size, rate, acks, results[(latency_key(rate, acks), size, DISK)])
        for size, rate, acks in itertools.product(latency_sizes, plan.latency_rates, plan.acks_modes)
        if results.get((latency_key(rate, acks), size, DISK))
    ]
    if disk:
        out += [
            "The disk alone at the acks=all schedule (bench/floor.py group_commit_latency: append, group-committed "
            "fdatasync, no broker), after the targets' runs in each round; median p50 / p99 (ms) and the longest "
            "fsync seen in any round:",
            "",
        ]
        for size, rate, acks, rows in disk:
            p50 = cell_median(rows, lambda r: r["p50_ms"])
            p99 = cell_median(rows, lambda r: r["p99_ms"])
            longest = max(r["longest_fsync_ms"] for r in rows)
            out.append(
                f"- {size_label(size)}, {rate:,.0f} msg/s, acks={acks}: {p50:.2f} / {p99:.2f}, longest fsync "
                f"{longest:.1f} ms"
            )
        out.append("")
    if failures:
        out.append("### Failures")
        out.append("")
        for f in failures:
            out.append("```")
            out.append(f)
            out.append("```")
        out.append("")
    out.append("<details><summary>Per-round values</summary>")
    out.append("")
    for (sc, size, n), rows in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        if sc.startswith("latency"):
            vals = ", ".join(
                f"{r['p50_ms']:.2f}/{r['p99_ms']:.2f}/{r['max_ms']:.0f} ({r.get('max_in_flight', '-')})"
                for r in rows
            )
            out.append(f"- {size_label(size)} {sc} {n}: p50/p99/max ms (max waiting requests) {vals}")
        else:
            vals = ", ".join(fmt_int(r["records"] / r["seconds"]) for r in rows)
            out.append(f"- {size_label(size)} {sc} {n}: rec/s {vals}")
    out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"


def add_round_scenario_options(parser: argparse.ArgumentParser) -> None:
    """The options of the scenarios that live in modules of their own (all off by default)."""
    parser.add_argument(
        "--perf-test-sizes",
        help="also run Apache Kafka's kafka-producer-perf-test / kafka-consumer-perf-test (bench/kafka_perf_test.py) "
        "at these record sizes, comma-separated [off]",
    )
    parser.add_argument(
        "--perf-test-records",
        type=int,
        help="records per kafka-producer-perf-test run [1 KiB: 100000, 100 B: 500000]",
    )
    parser.add_argument(
        "--perf-test-warmup",
        type=int,
        default=0,
        help="records each target gets from kafka-producer-perf-test, untimed, before the first round [0]",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=0,
        help="also run N concurrent connections, half producing and half consuming (bench/connections.py) [off]",
    )
    parser.add_argument(
        "--connections-seconds", type=float, help="length of a --connections run [10; quick 3]"
    )
    parser.add_argument(
        "--cold-read-gib",
        type=float,
        default=0.0,
        help="also fill a topic with this many GiB and read it back from cold segments (bench/cold_read.py) [off]",
    )


def round_scenarios(args: argparse.Namespace) -> list[RoundScenario]:
    """Imported only when asked for (they import this module)."""
    scenarios: list[RoundScenario] = []
    if args.perf_test_sizes:
        from bench.kafka_perf_test import KafkaPerfTest

        sizes = [int(s) for s in args.perf_test_sizes.split(",")]
        scenarios.append(
            KafkaPerfTest(
                sizes,
                quick=args.quick,
                timeout=args.timeout,
                records=args.perf_test_records,
                warmup=args.perf_test_warmup,
            )
        )
    if args.connections:
        from bench.connections import ManyConnections

        seconds = args.connections_seconds or (3.0 if args.quick else 10.0)
        scenarios.append(ManyConnections(args.connections, seconds))
    if args.cold_read_gib:
        from bench.cold_read import ColdRead

        scenarios.append(ColdRead(args.cold_read_gib, timeout=args.timeout))
    return scenarios


def software(source: KBrokerSource) -> str:
    return (
        f"Python {platform.python_version()}, confluent-kafka {confluent_kafka.__version__}, "
        f"librdkafka {confluent_kafka.libversion()[0]}; kbroker from {source.description}"
    )


# The named targets make_target starts besides "kafka[-VERSION][-fsync]"; main() checks --targets against it.
NAMED_TARGETS = ("kbroker", "kbroker-shm", "kbroker-nofsync", "mock")


def make_target(name: str, source: KBrokerSource, cluster: bool) -> Target:
    if name == "kbroker":
        return KBrokerCluster(source) if cluster else KBroker(source)
    if name == "kbroker-shm":
        return KBroker(source, "kbroker-shm", data_root="/dev/shm")
    if name == "kbroker-nofsync":
        return KBroker(source, "kbroker-nofsync", overrides={"log.flush.acks.all.enable": "false"})
    if name.startswith("kafka"):
        version = name.partition("-")[2].removesuffix("fsync").rstrip("-")
        return ApacheKafka(version or "3.9.2", fsync=name.endswith("-fsync"))
    assert name == "mock", name
    return Mock(3, "mock-x3") if cluster else Mock()


def run_targets(
    targets: list[Target], plan: Plan, meta: dict[str, str], dump: Path | None = None, floor_rounds: int = 0
) -> tuple[str, bool] | None:
    """Start every target, run the plan, stop them all; (the report, whether anything failed), or None when a
    target could not start. `dump` gets every measurement as JSON (bench/performance.py draws from it). With
    `floor_rounds`, bench/floor.py's system call costs are measured first, on the disk the brokers write to."""
    started: list[Target] = []
    floor: dict[str, float] | None = None
    returned_start = memory_returned_kib()
    if floor_rounds > 0:
        floor = measure_floor(Path(tempfile.gettempdir()), floor_rounds)
        print("system call floor (bench/floor.py): " + ", ".join(f"{k} {v:.3f}" for k, v in floor.items()))
    try:
        for t in targets:
            started.append(t)  # stopped even if it fails half-way through starting
            try:
                t.start()
            except BenchError as e:
                print(f"could not start {t.name}: {e}", file=sys.stderr)
                return None
            print(f"{t.name} at {t.bootstrap} (pids {', '.join(map(str, t.pids()))})", flush=True)
        idle_start = {t.name: idle_cpu(t, plan.idle_seconds) for t in targets}
        if isolated(targets):
            meta["isolation"] = "the other targets frozen (SIGSTOP) while one is measured"
        results, failures = run(targets, plan)
        idle_end = {t.name: idle_cpu(t, plan.idle_seconds) for t in targets}
        meta["idle"] = ", ".join(
            f"{t.name} {fmt_share(idle_start[t.name])} at the start, {fmt_share(idle_end[t.name])} at the end "
            f"(holding {count_topics(t)} topics)"
            for t in targets
        )
    finally:
        for t in started:
            t.stop()
    meta["load_end"] = load_average()
    returned_end = memory_returned_kib()
    if returned_start is not None and returned_end is not None:
        meta["returned"] = f"{(returned_end - returned_start) / 1024 / 1024:.1f} GiB"
    if dump is not None:
        rows = [
            {"scenario": scenario, "size": size, "target": target, **r}
            for (scenario, size, target), rs in results.items()
            for r in rs
        ]
        idle = {t.name: [idle_start[t.name], idle_end[t.name]] for t in targets}
        dump.write_text(
            json.dumps(
                {
                    "meta": meta,
                    "targets": [t.name for t in targets],
                    "idle": idle,
                    "results": rows,
                    "failures": failures,
                    "floor": floor,
                },
                indent=1,
            )
        )
    return report(targets, plan, results, failures, meta), bool(failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="a few seconds: small runs, one round (smoke check)"
    )
    parser.add_argument(
        "--kbroker-rev",
        metavar="REV",
        help="run kbroker from a clean export of this commit (e.g. HEAD) instead of the working tree",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="3 replicas: three kbroker processes and a private etcd, side by side with a 3-broker mock cluster; "
        "acks=1 vs acks=all (writes bench/results-cluster.md)",
    )
    parser.add_argument(
        "--targets",
        default="kbroker,mock",
        help="comma-separated: kbroker, mock, kbroker-shm, kbroker-nofsync (acks=all answered without an fsync, as "
        "Kafka does: log.flush.acks.all.enable=false), kafka (Apache Kafka 3.9.2; kafka-VERSION for another "
        "release compat/kafka/ resolves; kafka-fsync or kafka-VERSION-fsync: with log.flush.interval.messages=1, "
        "an fsync before each acknowledgement as kbroker's acks=all) [kbroker,mock]",
    )
    parser.add_argument("--rounds", type=int, help="rounds of interleaved measurements [7; quick 1]")
    parser.add_argument(
        "--sizes",
        default="100,1024",
        help="record value sizes in bytes of the confluent-kafka loads, '' for none (only the scenarios below) "
        "[100,1024]",
    )
    parser.add_argument(
        "--latency-sizes", help="run the latency scenarios only at these sizes, comma-separated [every size]"
    )
    add_round_scenario_options(parser)
    parser.add_argument(
        "--produce-records",
        type=int,
        help="records per produce run [300000, at most 320 MB of values; quick 100 B: 20000, 1 KiB: 3000]",
    )
    parser.add_argument(
        "--consume-records",
        type=int,
        help="records in the topic read back [100 B: 120000, 1 KiB: 14000 (the mock keeps ~5 MiB per partition); "
        "quick 20000, 3000]",
    )
    parser.add_argument(
        "--consume-passes",
        type=int,
        help="times the topic is read back, each by a fresh consumer [5; quick 1]",
    )
    parser.add_argument(
        "--latency-rates",
        default="200,2000",
        help="messages/s of the latency runs, comma-separated [200,2000]",
    )
    parser.add_argument("--latency-seconds", type=float, help="duration of a latency run [3; quick 1]")
    parser.add_argument("--latency-linger-ms", type=int, default=5, help="linger.ms of the latency runs [5]")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="give up on one run after this many s [300]"
    )
    parser.add_argument("--json", type=Path, help="also write every measurement here, as JSON")
    parser.add_argument(
        "--floor-rounds",
        type=int,
        help="rounds of bench/floor.py's system call costs, measured before the brokers start; 0: none [3; quick 1]",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write the markdown here [bench/results.md for a full run of the default targets]",
    )
    args = parser.parse_args(argv)

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.quick:
        produce_records = {
            s: args.produce_records or {100: 20_000, 1024: 3_000}.get(s, max(100, 2_000_000 // s))
            for s in sizes
        }
        consume_records = {s: args.consume_records or produce_records[s] for s in sizes}
    else:
        # 300,000 records (three times librdkafka's queue.buffering.max.messages, so that most of a run waits for
        # the broker: at 50,000 x 1 KiB the whole run fit in the client's queue, and a run of 0.1 s measured
        # mostly its produce() loop), at most ~320 MB; read back: what the mock keeps, at most 120,000 records
        produce_records = {
            s: args.produce_records or min(PRODUCE_RECORDS, max(1_000, PRODUCE_BYTES // s)) for s in sizes
        }
        consume_records = {
            s: args.consume_records
            or {100: 120_000, 1024: 14_000}.get(
                s, min(120_000, int(0.7 * MOCK_PARTITION_CAP * PARTITIONS / (s + 12)))
            )
            for s in sizes
        }
    plan = Plan(
        rounds=args.rounds or (1 if args.quick else 7),
        sizes=sizes,
        produce_records=produce_records,
        consume_records=consume_records,
        consume_passes=args.consume_passes or (1 if args.quick else 5),
        latency_rates=[float(r) for r in args.latency_rates.split(",")],
        latency_seconds=args.latency_seconds or (1.0 if args.quick else 3.0),
        latency_linger_ms=args.latency_linger_ms,
        timeout=args.timeout,
        acks_modes=["all", "1"],
        idle_seconds=1.0 if args.quick else 3.0,
        latency_sizes=[int(s) for s in args.latency_sizes.split(",")] if args.latency_sizes else None,
        round_scenarios=round_scenarios(args),
    )
    names = [t.strip() for t in args.targets.split(",") if t.strip()]
    for name in names:
        if name not in NAMED_TARGETS and not name.startswith("kafka"):
            parser.error(f"unknown target {name!r}")
        if name == "mock":
            for s in sizes:
                # round-robin over the partitions; a record of a batch carries ~8-12 bytes besides its value
                per_partition = consume_records[s] * (s + 12) / PARTITIONS
                if per_partition > 0.85 * MOCK_PARTITION_CAP:
                    parser.error(
                        f"{consume_records[s]} records of {s} B to read back exceed the mock's ~5 MiB per partition: "
                        "use fewer --consume-records"
                    )
    out = args.out
    if out is None and not args.quick and names == ["kbroker", "mock"]:
        out = BENCH / ("results-cluster.md" if args.cluster else "results.md")

    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "command": ".venv/bin/python bench/run.py "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
    }
    try:
        with kbroker_sources([args.kbroker_rev] if args.kbroker_rev else None) as (source,):
            meta["software"] = software(source)
            meta["load_start"] = load_average()
            print(f"{meta['machine']}\n{meta['software']}", flush=True)
            outcome = run_targets(
                [make_target(name, source, args.cluster) for name in names],
                plan,
                meta,
                args.json,
                floor_rounds=args.floor_rounds if args.floor_rounds is not None else (1 if args.quick else 3),
            )
    except (BenchError, subprocess.CalledProcessError) as e:
        print(f"kbroker sources: {e}", file=sys.stderr)
        return 2
    if outcome is None:
        return 2
    text, failed = outcome
    print()
    print(text)
    if out is not None:
        out.write_text(
            "# kbroker benchmark results\n\nWritten by `bench/run.py`; see `bench/README.md` for what is measured.\n\n"
            + text
        )
        print(f"written to {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
