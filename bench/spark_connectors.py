"""Spark's Kafka connectors side by side: `format("kafka")` (Spark's own, JVM) and `format("kbroker")` (kbroker/spark,
Python), reading and writing through the same kbroker, in one run.

    .venv/bin/python bench/spark_connectors.py --kbroker-rev HEAD   # full run (~15 min), writes bench/results-spark.md
    .venv/bin/python bench/spark_connectors.py --quick              # a smoke check (~2 min), prints only
    .venv/bin/python bench/spark_connectors.py --profile            # also py-spy profiles of format("kbroker")

One SparkSession (local[2], the machine's two cores) holds both connectors: Spark's own from the jars compat/spark/
resolves from Maven Central, kbroker's registered with kbroker.spark.register. The broker is a kbroker started as
bench/run.py starts it (a fresh data directory, default configs). Every round runs each scenario once per connector,
the connectors' order alternating between rounds; the tables give medians.

- read: a topic of 4 partitions filled beforehand (confluent-kafka, untimed) is read whole by
  `spark.read.format(F)...load()`, the action being `count(*), sum(length(value))` (so that every value is
  materialized); timed from the action's start to its result.
- write: a cached DataFrame of N rows (`value` binary of the record size, no key), in 2 partitions, is written with
  `df.write.format(F).mode("append")` into a fresh topic of 4 partitions; timed around `save()`. Both producers
  run with their clients' defaults (the Java client 3.9 and librdkafka both idempotent here, linger 5 ms).

CPU is read from /proc: the broker's, and Spark's (the JVM and every process under it: the Python workers that run
format("kbroker")'s tasks).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `bench.`, `compat.` and `tests.` are imported by package name

from bench.common import BENCH, BenchError, KBrokerSource, kbroker_sources, load_average, machine  # noqa: E402
from bench.run import KBroker  # noqa: E402

FORMATS = ("kafka", "kbroker")
PARTITIONS = 4
SIZES = (100, 1024)
CLK_TCK = os.sysconf("SC_CLK_TCK")
# py-spy (the `bench` extra) from this interpreter's environment, else from PATH
PY_SPY = (
    str(Path(sys.executable).with_name("py-spy"))
    if Path(sys.executable).with_name("py-spy").exists()
    else "py-spy"
)


# ---- CPU of a process tree -------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, utime+stime+cutime+cstime in seconds) of a process: its own threads and its reaped children."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / CLK_TCK


def tree_cpu(root: int) -> float:
    """CPU seconds of a process and every live process under it (and what they reaped)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                parents[int(entry)], cpu[int(entry)] = found
    total = 0.0
    for pid in cpu:
        walk = pid
        while walk not in (0, 1) and walk != root:
            walk = parents.get(walk, 0)
        if walk == root:
            total += cpu[pid]
    return total


# ---- Spark -----------------------------------------------------------------------------------------------------


def connector_jars() -> list[Path]:
    """Spark's own Kafka connector for the installed PySpark, as the compat tests resolve it."""
    from compat.spark.install import connector_jars as resolve

    return resolve()


@contextlib.contextmanager
def spark_session(jars: list[Path], work: Path, source: KBrokerSource) -> Iterator[tuple[Any, int]]:
    """A SparkSession with both connectors, and its JVM's pid. format("kbroker") is imported from `source`, in
    this process and (through PYTHONPATH) in Spark's Python workers."""
    from compat.spark.session import spark_session as session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(source.directory), os.environ.get("PYTHONPATH")])
    )
    sys.path.insert(0, str(source.directory))
    import kbroker.spark

    if not Path(kbroker.spark.__file__).is_relative_to(source.directory):
        raise BenchError(f"kbroker.spark imported from {kbroker.spark.__file__}, not from {source.directory}")
    with session(jars, work) as jvm:
        jvm.spark.conf.set("spark.sql.shuffle.partitions", "2")
        kbroker.spark.register(jvm.spark)
        yield jvm.spark, jvm.process.pid


# ---- scenarios -------------------------------------------------------------------------------------------------


@dataclass
class Run:
    scenario: str  # "read" or "write"
    size: int
    fmt: str
    records: int
    seconds: float
    spark_cpu: float
    broker_cpu: float

    @property
    def rate(self) -> float:
        return self.records / self.seconds


def create_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    (future,) = admin.create_topics([NewTopic(name, PARTITIONS, 1)]).values()
    future.result(30)


def fill(bootstrap: str, topic: str, records: int, size: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": 1})
    value = os.urandom(size)
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120) != 0:
        raise BenchError(f"could not fill {topic}")


def measured(spark_pid: int, broker_pid: int, action: Callable[[], None]) -> tuple[float, float, float]:
    spark0, broker0 = tree_cpu(spark_pid), tree_cpu(broker_pid)
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    return seconds, tree_cpu(spark_pid) - spark0, tree_cpu(broker_pid) - broker0


def read_once(spark: Any, fmt: str, bootstrap: str, topic: str, records: int) -> None:
    frame = (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    ((count, _),) = frame.selectExpr("count(*)", "sum(length(value))").collect()
    if count != records:
        raise BenchError(f"format({fmt}) read {count} records of {topic}, not {records}")


def write_once(frame: Any, fmt: str, bootstrap: str, topic: str) -> None:
    frame.write.format(fmt).mode("append").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).save()


def run_rounds(spark: Any, spark_pid: int, broker: KBroker, rounds: int, counts: dict[int, int]) -> list[Run]:
    bootstrap = broker.bootstrap
    broker_pid = broker.pids()[0]
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    runs: list[Run] = []
    read_topics: dict[int, str] = {}
    frames: dict[int, Any] = {}
    for size in SIZES:
        topic = f"spark-bench-read-{size}-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic)
        fill(bootstrap, topic, counts[size], size)
        read_topics[size] = topic
        frame = spark.range(counts[size], numPartitions=2).selectExpr(
            f"CAST(repeat('x', {size}) AS BINARY) AS value"
        )
        frame.cache().count()
        frames[size] = frame
    # one untimed pass of everything: JVM classes loaded, Python workers started
    for fmt in FORMATS:
        for size in SIZES:
            read_once(spark, fmt, bootstrap, read_topics[size], counts[size])
    for number in range(rounds):
        order = FORMATS if number % 2 == 0 else tuple(reversed(FORMATS))
        for size in SIZES:
            for fmt in order:
                read = functools.partial(read_once, spark, fmt, bootstrap, read_topics[size], counts[size])
                seconds, spark_cpu, broker_cpu = measured(spark_pid, broker_pid, read)
                runs.append(Run("read", size, fmt, counts[size], seconds, spark_cpu, broker_cpu))
                topic = f"spark-bench-write-{size}-{uuid.uuid4().hex[:8]}"
                create_topic(bootstrap, topic)
                write = functools.partial(write_once, frames[size], fmt, bootstrap, topic)
                seconds, spark_cpu, broker_cpu = measured(spark_pid, broker_pid, write)
                runs.append(Run("write", size, fmt, counts[size], seconds, spark_cpu, broker_cpu))
                admin.delete_topics([topic])
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    return runs


# ---- profile ---------------------------------------------------------------------------------------------------


def profile(
    spark: Any, spark_pid: int, bootstrap: str, records: int, size: int, work: Path
) -> dict[str, str]:
    """py-spy over Spark's Python workers while format("kbroker") reads and writes: the functions that take the
    workers' time, by the share of samples in which each is the innermost frame of ours or a library's."""
    topic = f"spark-bench-profile-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    fill(bootstrap, topic, records, size)
    frame = spark.range(records, numPartitions=2).selectExpr(f"CAST(repeat('x', {size}) AS BINARY) AS value")
    frame.cache().count()
    read_once(spark, "kbroker", bootstrap, topic, records)  # workers up
    summaries = {}
    actions: list[tuple[str, Callable[[], None]]] = [
        ("read", functools.partial(read_once, spark, "kbroker", bootstrap, topic, records)),
        ("write", functools.partial(write_once, frame, "kbroker", bootstrap, f"{topic}-copy")),
    ]
    for scenario, action in actions:
        # Spark runs one pyspark.daemon per kind of Python worker (looking up and creating the data source,
        # planning the read, running tasks): py-spy follows each daemon and the workers it forks.
        spies = []
        for daemon, module in python_daemons(spark_pid):
            raw = work / f"py-spy-{scenario}-{module}.txt"
            spy = subprocess.Popen(
                [PY_SPY, "record", "--pid", str(daemon), "--subprocesses", "--rate", "200", "--format", "raw",
                 "--output", str(raw), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            spies.append((spy, raw, module))
        try:
            time.sleep(1.0)  # py-spy attaches
            for _ in range(3):
                action()
        finally:
            for spy, _, _ in spies:
                spy.send_signal(2)  # SIGINT: py-spy writes its output and exits
            for spy, _, _ in spies:
                spy.wait(60)
        summaries[scenario] = summarize([(raw, module) for _, raw, module in spies])
    return summaries


def python_daemons(spark_pid: int) -> list[tuple[int, str]]:
    """(pid, worker module) of each pyspark.daemon the Spark JVM runs."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            args = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        found = _stat(int(entry))
        if "pyspark.daemon" in args and found is not None and found[0] == spark_pid:
            after = args.index("pyspark.daemon") + 1
            module = args[after] if after < len(args) and args[after] else "?"
            out.append((int(entry), module.rsplit(".", 1)[-1]))
    if not out:
        raise BenchError("no pyspark.daemon under the Spark JVM")
    return out


def summarize(raws: list[tuple[Path, str]], top: int = 16) -> str:
    """Where the Python workers' samples fall: by kind of worker, then the innermost frames of all of them (py-spy's
    collapsed stacks, one `frame;frame;... count` a line). Samples of a daemon waiting to fork the next worker are
    left out (py-spy with --nonblocking records idle threads too)."""
    by_module: dict[str, int] = defaultdict(int)
    own: dict[str, int] = defaultdict(int)
    total = 0
    for raw, module in raws:
        if not raw.exists():
            continue
        for line in raw.read_text().splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or not count_text.isdigit():
                continue
            frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
            if not frames or "daemon.py" in frames[-1]:
                continue
            count = int(count_text)
            total += count
            by_module[module] += count
            own[frames[-1]] += count
    if total == 0:
        return "py-spy recorded no sample of a working Python worker.\n"
    lines = ["| worker | share of samples |", "|---|---|"]
    for module, count in sorted(by_module.items(), key=lambda item: -item[1]):
        lines.append(f"| {module} | {100 * count / total:.1f}% |")
    lines += ["", "| share of samples | innermost frame |", "|---|---|"]
    for frame, count in sorted(own.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"| {100 * count / total:.1f}% | `{frame}` |")
    return "\n".join(lines) + f"\n\n{total} samples at 200 Hz of the Python workers at work.\n"


# ---- report ----------------------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(runs: list[Run], counts: dict[int, int], meta: dict[str, str], profiles: dict[str, str]) -> str:
    by: dict[tuple[str, int, str], list[Run]] = defaultdict(list)
    for run in runs:
        by[(run.scenario, run.size, run.fmt)].append(run)
    lines = [
        '# Spark\'s Kafka connectors: format("kafka") and format("kbroker")',
        "",
        f"Generated by `bench/spark_connectors.py` on {meta['date']}. {meta['machine']}",
        "",
        f'- kbroker (the broker, and format("kbroker")): {meta["kbroker"]}',
        f'- PySpark {meta["pyspark"]}, local[2]; format("kafka") is spark-sql-kafka-0-10 {meta["pyspark"]} '
        "(kafka-clients 3.9)",
        f"- {meta['rounds']} rounds, the connectors' order alternating; medians. Load average at start "
        f"{meta['load_start']}, at end {meta['load_end']}.",
        f"- Records: {', '.join(f'{counts[s]:,} x {label(s)}' for s in SIZES)}, no key, 4 partitions.",
        "",
        "| scenario | record | connector | records/s | MB/s | Spark CPU s / 1M rec | broker CPU s / 1M rec "
        "| kbroker / kafka records/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for scenario in ("read", "write"):
        for size in SIZES:
            rates = {fmt: median([r.rate for r in by[(scenario, size, fmt)]]) for fmt in FORMATS}
            for fmt in FORMATS:
                cell = by[(scenario, size, fmt)]
                rate = rates[fmt]
                spark_cpu = median([r.spark_cpu / r.records * 1e6 for r in cell])
                broker_cpu = median([r.broker_cpu / r.records * 1e6 for r in cell])
                ratio = f"{rates['kbroker'] / rates['kafka']:.2f}" if fmt == "kbroker" else ""
                lines.append(
                    f"| {scenario} | {label(size)} | {fmt} | {rate:,.0f} | {rate * size / 1e6:.1f} | "
                    f"{spark_cpu:.2f} | {broker_cpu:.2f} | {ratio} |"
                )
    lines += ["", "Per round (records/s):", ""]
    for (scenario, size, fmt), cell in sorted(by.items()):
        lines.append(f"- {scenario} {label(size)} {fmt}: " + ", ".join(f"{r.rate:,.0f}" for r in cell))
    if profiles:
        lines += ["", '## Where format("kbroker")\'s time goes (py-spy)', ""]
        for scenario, table in profiles.items():
            lines += [f"### {scenario}, {label(SIZES[0])}", "", table]
    return "\n".join(lines) + "\n"


def label(size: int) -> str:
    return "1 KiB" if size == 1024 else f"{size} B"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--kbroker-rev", action="append", help="run kbroker from a clean export of this commit"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records-100", type=int, default=400_000, help="records of 100 B a run")
    parser.add_argument("--records-1k", type=int, default=100_000, help="records of 1 KiB a run")
    parser.add_argument("--quick", action="store_true", help="1 round of 20,000 records; prints only")
    parser.add_argument("--profile", action="store_true", help='py-spy profiles of format("kbroker")')
    parser.add_argument("--out", type=Path, default=BENCH / "results-spark.md")
    args = parser.parse_args(argv)
    counts = {100: args.records_100, 1024: args.records_1k}
    rounds = args.rounds
    if args.quick:
        counts, rounds = {100: 20_000, 1024: 20_000}, 1
    import pyspark

    meta = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "pyspark": pyspark.__version__,
        "rounds": str(rounds),
        "load_start": load_average(),
    }
    jars = connector_jars()
    with (
        kbroker_sources(args.kbroker_rev) as sources,
        tempfile.TemporaryDirectory(prefix="spark-bench-") as work,
    ):
        (source,) = sources
        meta["kbroker"] = source.description
        broker = KBroker(source)
        broker.start()
        try:
            with spark_session(jars, Path(work), source) as (spark, spark_pid):
                runs = run_rounds(spark, spark_pid, broker, rounds, counts)
                profiles = (
                    profile(spark, spark_pid, broker.bootstrap, counts[SIZES[0]], SIZES[0], Path(work))
                    if args.profile
                    else {}
                )
        finally:
            broker.stop()
    meta["load_end"] = load_average()
    text = report(runs, counts, meta, profiles)
    print(text)
    if not args.quick:
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
