"""docs/performance.md: kbroker, librdkafka's mock and Apache Kafka side by side, from one interleaved run.

    .venv/bin/python bench/performance.py --kbroker-rev HEAD --scale-json docs/performance-scale.json
                                     # the full run: docs/performance.{md,json} and docs/performance/*.png; 32-42 min
                                     # on the 2-core VM, the 20 GiB cold read, the cluster and the fsync parity included
                                     # (--cold-read-gib 0 leaves the cold read out; it needs ~50 GiB free on /tmp,
                                     # else it is skipped with a note)
    .venv/bin/python bench/performance.py --from-json docs/performance.json --scale-json docs/performance-scale.json
                                     # redraw the page from the committed measurements
    .venv/bin/python bench/performance.py --quick                 # smoke check (one small round), into /tmp
    .venv/bin/python bench/performance.py --quick --cold-read-gib 1   # with every scenario (~5 min)
    .venv/bin/python bench/performance.py --from-json docs/performance.json \
        --cluster-json docs/performance-cluster.json --scale-cluster-json docs/performance-scale-cluster.json
                                     # with the 3-node cluster's figures (a measuring run then runs the cluster)

The measuring is bench/run.py's (see bench/README.md): one confluent-kafka load generator; kbroker (a fresh data
directory), the mock (bench/mock_cluster.py) and Apache Kafka 3.9.2 (compat/kafka/, one KRaft node, 512 MiB heap,
its data directory on the same disk, broker.session.timeout.ms an hour since it is frozen while the others run) each
in a process of its own, started once; every scenario runs on each target in turn, the order reversed every other
round, and the tables give medians over the rounds. CPU is the broker process's own (from /proc), per record;
resident memory (VmRSS) is read right after each measurement; so is the 1-minute load average, because the machine
is shared. The latency runs are the issue's: `linger.ms=0`, 1,000 records/s of the record size, 10 s, the first 10%
a warm-up; after the targets' acks=all latency runs, each round runs the same schedule on the disk alone (an append
and a group-committed fdatasync, no broker: bench/floor.py `group_commit_latency`), and the page sets it and
kbroker's own slow log flushes beside each round's p99. `--scale-json` adds the figures of bench/scale.py
(docs/performance-scale.json is its output).

The full run's record sizes are 100 B and 1 KiB (where the issue states its targets) and issue 12's seed classes
(12 B, 140 B, 560 B, 1,120 B, 2,940 B, 11,760 B); the latency runs only at 100 B and 1 KiB; the topic read back
three times a round. After the sizes, every round also runs (bench/README.md, "Scenarios of their own modules")
Kafka's own kafka-producer-perf-test / kafka-consumer-perf-test at 100 B and 1 KiB (bench/kafka_perf_test.py) and
1,000 concurrent connections producing and consuming (bench/connections.py); a cold read of a 20 GiB backlog
(bench/cold_read.py) has rounds of its own after all the others; each has its table in the page. Every
measurement starts with an untimed sync(), so that none pays for the page writeback of the one before it, and
every timed produce run with an untimed write and delete of as much page cache as it will write, so that its page
cache lands on memory the machine holds (bench/README.md, "Memory the virtual machine hands back"); while one
target is measured the other two are frozen (SIGSTOP), so that an idle broker's timers and fsyncs do not land in
its run (bench/README.md).

A measuring run also runs `bench/run.py --cluster --targets kbroker` (a 3-node kbroker cluster with a private etcd,
topics with replication factor 3; `--no-cluster` skips it; its JSON goes to performance-cluster.json beside the
page), and the page compares its produce figures at acks=all and acks=1 with the single node's: records/s and CPU
per record (the three nodes' CPU summed). `--scale-cluster-json` adds each node's idle CPU by partition count, from
`bench/scale.py --cluster` (docs/performance-scale-cluster.json).

Last, a measuring run runs Kafka's producer tool at 1 KiB against kbroker, kbroker with
log.flush.acks.all.enable=false, Kafka and Kafka with log.flush.interval.messages=1 (`bench/run.py --targets
kbroker,kbroker-nofsync,kafka,kafka-fsync --sizes '' --perf-test-sizes 1024 --perf-test-warmup 600000
--perf-test-records 300000`: each JVM warmed first, then runs of 300,000 records; `--no-fsync-parity` skips it;
performance-fsync.json, `--fsync-json` to redraw): kbroker's acks=all waits for an fsync, Kafka's by default does
not, and this run compares the two at the same durability, both fsyncing and neither.

Plots need matplotlib (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import cold_read, kafka_perf_test  # noqa: E402
from bench import floor as bench_floor  # noqa: E402
from bench import run as bench_run  # noqa: E402
from bench.common import system_share  # noqa: E402

DOCS = REPO / "docs"
PLOTS = "performance"  # docs/performance/*.png
SCENARIOS = ("produce acks=1", "produce acks=all", "consume")
LATENCY_RATE = 1000


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def size_label(size: int) -> str:
    return bench_run.size_label(size)


class Figures:
    """Medians per (scenario, size, target) from a run's JSON."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.meta: dict[str, str] = data["meta"]
        self.targets: list[str] = data["targets"]
        self.idle: dict[str, list[float | None]] = data["idle"]
        self.failures: list[str] = data["failures"]
        self.floor: dict[str, float] | None = data.get("floor")
        self.rows: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
        for row in data["results"]:
            self.rows[(row["scenario"], row["size"], row["target"])].append(row)
        self.sizes = sorted({size for scenario, size, _ in self.rows if scenario in SCENARIOS})
        self.latency_sizes = sorted(
            {size for scenario, size, _ in self.rows if scenario.startswith("latency")}
        )

    def cell(self, scenario: str, size: int, target: str, key: str) -> float | None:
        rows = self.rows.get((scenario, size, target), [])
        if key == "rate":
            return median([r["records"] / r["seconds"] for r in rows])
        if key == "cpu_us":
            return median([r["cpu"] * 1e6 / r["records"] for r in rows if r.get("cpu") is not None])
        if key == "load":
            return median([float(r["load"]) for r in rows if r.get("load") not in (None, "?")])
        if key == "system_share":  # pooled over the rounds (ticks are coarse); older runs' JSON has none
            return system_share(
                [tuple(r["cpu_ticks_and_system"]) for r in rows if r.get("cpu_ticks_and_system")]
            )
        if key == "rss_mib":
            return median([r["rss"] / 2**20 for r in rows if r.get("rss")])
        return median([r[key] for r in rows if r.get(key) is not None])

    def rss_max(self, target: str) -> float | None:
        values = [
            r["rss"] / 2**20
            for (_, _, t), rows in self.rows.items()
            if t == target
            for r in rows
            if r.get("rss")
        ]
        return max(values) if values else None

    def cdf(self, scenario: str, size: int, target: str) -> list[float] | None:
        """Median over rounds of each percentile of the latency runs."""
        runs = [r["cdf_ms"] for r in self.rows.get((scenario, size, target), []) if "cdf_ms" in r]
        if not runs:
            return None
        return [statistics.median(values) for values in zip(*runs, strict=True)]


def fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "—"
    return f"{x:,.{digits}f}"


def fmt_cpu(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:,.1f}"


def latency_scenario(acks: str) -> str:
    return bench_run.latency_key(LATENCY_RATE, acks)


def tables(f: Figures) -> str:
    t = f.targets
    lines = [
        "### Throughput and broker CPU per record (median over rounds; load average: median of the 1-minute load "
        "right after each of the row's measurements)",
        "",
        "| record | scenario | " + " | ".join(f"{n} rec/s | {n} CPU µs/rec" for n in t) + " | load avg |",
        "|---|---|" + "---|---|" * len(t) + "---|",
    ]
    for size in f.sizes:
        for scenario in SCENARIOS:
            if not any((scenario, size, n) in f.rows for n in t):
                continue
            cells = []
            for n in t:
                cells += [
                    fmt(f.cell(scenario, size, n, "rate")),
                    fmt_cpu(f.cell(scenario, size, n, "cpu_us")),
                ]
            loads = [f.cell(scenario, size, n, "load") for n in t]
            load = median([x for x in loads if x is not None])
            lines.append(f"| {size_label(size)} | {scenario} | " + " | ".join(cells) + f" | {fmt(load, 1)} |")
    lines += [
        "",
        f"### Produce latency: {LATENCY_RATE:,} records/s, linger.ms=0, 10 s (ms, median over rounds of each round's "
        "percentile; the broker's CPU per record at that rate)",
        "",
        "| record | acks | " + " | ".join(f"{n} p50 | {n} p99 | {n} CPU µs/rec" for n in t) + " | load avg |",
        "|---|---|" + "---|---|---|" * len(t) + "---|",
    ]
    for size in f.latency_sizes:
        for acks in ("1", "all"):
            scenario = latency_scenario(acks)
            if not any((scenario, size, n) in f.rows for n in t):
                continue
            cells = []
            for n in t:
                cells += [
                    fmt(f.cell(scenario, size, n, "p50_ms"), 2),
                    fmt(f.cell(scenario, size, n, "p99_ms"), 2),
                    fmt_cpu(f.cell(scenario, size, n, "cpu_us")),
                ]
            loads = [f.cell(scenario, size, n, "load") for n in t]
            load = median([x for x in loads if x is not None])
            lines.append(f"| {size_label(size)} | {acks} | " + " | ".join(cells) + f" | {fmt(load, 1)} |")
    lines += [
        "",
        "### Resident memory and idle CPU",
        "",
        "| target | RSS, median of all measurements (MiB) | RSS, largest (MiB) | idle CPU at the start / end "
        "(share of one core) |",
        "|---|---|---|---|",
    ]
    for n in t:
        rss = median(
            [r["rss"] / 2**20 for (_, _, tn), rows in f.rows.items() if tn == n for r in rows if r.get("rss")]
        )
        idle = " / ".join("n/a" if x is None else f"{100 * x:.1f}%" for x in f.idle.get(n, []))
        lines.append(f"| {n} | {fmt(rss)} | {fmt(f.rss_max(n))} | {idle} |")
    return "\n".join(lines)


def disk_section(f: Figures) -> list[str]:
    """The acks=all latency runs round by round beside the disk's own latency at the same schedule (bench/run.py's
    disk floor), and kbroker's slow log flushes in each run: how much of the p99 the disk's fsync stalls make."""
    scenario = latency_scenario("all")
    lines: list[str] = []
    for size in f.latency_sizes:
        disk = {r["round"]: r for r in f.rows.get((scenario, size, bench_run.DISK), [])}
        if not disk:
            continue
        if not lines:
            lines += [
                "### acks=all latency and the disk, round by round",
                "",
                "After the targets' acks=all latency runs, each round runs the same schedule on the disk alone "
                "(bench/floor.py `group_commit_latency`: each record appended to a file, one thread group-committing "
                "with fdatasync, no network and no broker; the targets frozen): the latency of a broker that costs "
                "nothing but its fsyncs. An fsync that stalls for tens of ms delays every record sent during it, "
                "for kbroker as for the disk alone; the *slow flushes* are kbroker's own log flushes over 2.5 ms in "
                "its run (its /metrics histogram, kafka_log_logflushstats_logflush_seconds; *≤* the histogram's "
                "bound of the slowest). Kafka acknowledges before any fsync.",
                "",
                "| record | round | "
                + " | ".join(f"{n} p50 / p99" for n in f.targets)
                + " | kbroker slow flushes (of all), slowest | disk alone p50 / p99 | disk fsyncs over 2 ms, "
                "longest |",
                "|---|---|" + "---|" * len(f.targets) + "---|---|---|",
            ]
        for rnd in sorted(disk):
            cells = []
            for n in f.targets:
                run = next((r for r in f.rows.get((scenario, size, n), []) if r["round"] == rnd), None)
                cells.append("—" if run is None else f"{run['p50_ms']:.2f} / {run['p99_ms']:.2f}")
            kb = next((r for r in f.rows.get((scenario, size, "kbroker"), []) if r["round"] == rnd), None)
            flushes = (
                "—"
                if kb is None or "log_flushes" not in kb
                else f"{kb['log_flushes_slow']:.0f} ({kb['log_flushes']:,.0f}), ≤ {kb['longest_log_flush_ms']:g} ms"
            )
            d = disk[rnd]
            lines.append(
                f"| {size_label(size)} | {rnd + 1} | "
                + " | ".join(cells)
                + f" | {flushes} | {d['p50_ms']:.2f} / {d['p99_ms']:.2f} | {d['slow_fsyncs']}, "
                f"{d['longest_fsync_ms']:.1f} ms |"
            )
    return [*lines, ""] if lines else []


def floor_section(f: Figures) -> list[str]:
    """bench/floor.py's system call costs, and what they make of one record against the brokers' CPU per record."""
    if not f.floor:
        return []
    brokers = [n for n in f.targets if n != "mock"]
    lines = [
        "### The kernel's share: the system calls' floor (bench/floor.py, measured before the brokers started)",
        "",
        "What the system calls any broker makes cost here alone, in one thread: a produce request's bytes are "
        "received, CRC-checked and written to the page cache; a fetch is answered with sendfile. The page writeback "
        "(the fsync row) is done by kernel threads for both brokers, outside their CPU figures: Kafka leaves it to "
        "the kernel's flusher threads, kbroker's fsyncs are Linux asynchronous I/O (kbroker/log/fsyncer.py). On "
        "loopback the sender's CPU includes the receiving end's TCP processing. The floor of a record is the "
        "per-KiB steps times its size (value + ~9 B of record overhead); the per-request round trip comes on top, "
        "and at acks=all the fsync round's (one per request at most: the requests that arrive while one runs share "
        "the next; the last row: what the asking thread pays besides the writeback, i.e. the submission, its sleep "
        "and its wake-up). "
        "Memory this virtual machine handed back to its host during the run: "
        f"{f.meta.get('returned', 'n/a')} (a page cache write to such memory costs ~2 µs per KiB instead of the "
        "write row's figure: bench/common.py `memory_returned_kib`; the produce runs and the write row are warmed "
        "against it: `reuse_page_cache`). In the brokers' columns, the part of their CPU spent in the kernel "
        "(system time, from /proc's tick counts, pooled over the rounds) where the runs add up to enough ticks to "
        "split (bench/common.py `system_share`; produce runs only).",
        "",
        bench_floor.table(f.floor),
        "",
        "| record | scenario | floor µs/rec | " + " | ".join(f"{n} CPU µs/rec" for n in brokers) + " |",
        "|---|---|---|" + "---|" * len(brokers),
    ]
    for size in f.sizes:
        for scenario in SCENARIOS:
            kind = "consume" if scenario == "consume" else "produce"
            floor = bench_floor.per_record(f.floor, size, kind)
            cells = [
                fmt_cpu(f.cell(scenario, size, n, "cpu_us"))
                + kernel_part(f.cell(scenario, size, n, "system_share"))
                for n in brokers
            ]
            lines.append(f"| {size_label(size)} | {scenario} | {floor:.3f} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def plots(f: Figures, directory: Path) -> list[str]:
    """PNG plots into `directory`; their file names."""
    import matplotlib  # the bench extra; only the page's plots need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    names = []
    width = 0.8 / max(len(f.targets), 1)
    for key, title, file, ylabel in (
        ("rate", "Records per second", "throughput.png", "records/s (median)"),
        ("cpu_us", "Broker CPU per record", "cpu-per-record.png", "µs of broker CPU per record (median)"),
    ):
        fig, axes = plt.subplots(1, len(SCENARIOS), figsize=(4.2 * len(SCENARIOS), 3.6), squeeze=False)
        for ax, scenario in zip(axes[0], SCENARIOS, strict=True):
            for i, n in enumerate(f.targets):
                values = [f.cell(scenario, size, n, key) or 0.0 for size in f.sizes]
                xs = [x + (i - (len(f.targets) - 1) / 2) * width for x in range(len(f.sizes))]
                ax.bar(xs, values, width, label=n)
            ax.set_xticks(range(len(f.sizes)), [size_label(s) for s in f.sizes])
            ax.set_title(scenario)
            ax.set_xlabel("record value size")
            if key == "cpu_us":
                ax.set_yscale("log")
        axes[0][0].set_ylabel(ylabel)
        axes[0][0].legend(fontsize="small")
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(directory / file, dpi=90)
        plt.close(fig)
        names.append(file)
    percentiles = [*range(1, 100), 99.9]
    fig, axes = plt.subplots(1, len(f.latency_sizes), figsize=(5 * len(f.latency_sizes), 3.8), squeeze=False)
    for ax, size in zip(axes[0], f.latency_sizes, strict=True):
        for n in f.targets:
            for acks, style in (("1", "-"), ("all", "--")):
                cdf = f.cdf(latency_scenario(acks), size, n)
                if cdf is not None:
                    ax.plot(cdf, percentiles, style, label=f"{n} acks={acks}")
        disk = f.cdf(latency_scenario("all"), size, bench_run.DISK)
        if disk is not None:
            ax.plot(disk, percentiles, ":", color="grey", label="the disk alone, acks=all schedule")
        ax.set_xscale("log")
        ax.set_xlabel("produce latency (ms, log)")
        ax.set_ylabel("percentile")
        ax.set_title(f"{size_label(size)}, {LATENCY_RATE:,} rec/s, linger.ms=0")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize="x-small")
    fig.tight_layout()
    fig.savefig(directory / "latency-cdf.png", dpi=90)
    plt.close(fig)
    names.append("latency-cdf.png")
    names += by_size_plot(f, directory)
    return names


def scale_section(scale: dict[str, Any], directory: Path) -> tuple[str, list[str]]:
    """The table (and plots) of bench/scale.py's JSON: idle CPU, Metadata time, start time and RSS by partitions."""
    rows = scale["rows"]
    lines = [
        "### Partitions on one node (bench/scale.py)",
        "",
        f"{scale.get('description', '')}",
        "",
        "| target | partitions | start with data (s) | clean stop (s) | start after kill -9 (s) | full Metadata "
        "(ms, median) | idle CPU (share of a core) | RSS (MiB) | stored (MiB) | RSS with more data (MiB) | stored "
        "then (MiB) | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        idle = "n/a" if r.get("idle_cpu") is None else f"{100 * r['idle_cpu']:.2f}%"
        lines.append(
            f"| {r['target']} | {r['partitions']:,} | {fmt(r.get('start_s'), 1)} | {fmt(r.get('stop_s'), 1)} "
            f"| {fmt(r.get('start_unclean_s'), 1)} | {fmt(r.get('metadata_ms'), 1)} "
            f"| {idle} | {fmt(r.get('rss_mib'))} | {fmt(r.get('stored_mib'))} | {fmt(r.get('rss_more_data_mib'))} "
            f"| {fmt(r.get('stored_more_data_mib'))} | {r.get('load', '?')} |"
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for target in sorted({r["target"] for r in rows}):
        mine = sorted((r for r in rows if r["target"] == target), key=lambda r: r["partitions"])
        xs = [r["partitions"] for r in mine]
        axes[0].plot(xs, [100 * (r.get("idle_cpu") or 0.0) for r in mine], "o-", label=target)
        axes[1].plot(xs, [r.get("metadata_ms") or 0.0 for r in mine], "o-", label=target)
    axes[0].set_ylabel("idle CPU (% of one core)")
    axes[1].set_ylabel("full Metadata (ms)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("partitions")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / "scale.png", dpi=90)
    plt.close(fig)
    return "\n".join(lines), ["scale.png"]


# --------------------------------------------------------------------------------------------------------------
# the round scenarios of bench/kafka_perf_test.py, bench/connections.py and bench/cold_read.py; plots by record size

SEED_SIZES = (12, 140, 560, 1120, 2940, 11760)  # issue 12's record-size classes; 100 B and 1 KiB besides
PERF_TEST_SCENARIOS = (
    (kafka_perf_test.PRODUCE.format(acks="1"), "produce acks=1"),
    (kafka_perf_test.PRODUCE.format(acks="all"), "produce acks=all"),
    (kafka_perf_test.CONSUME, "consume"),
)


def load_of(f: Figures, scenario: str, size: int) -> str:
    loads = [f.cell(scenario, size, n, "load") for n in f.targets]
    return fmt(median([x for x in loads if x is not None]), 1)


def perf_test_section(f: Figures) -> list[str]:
    table = perf_test_table(f, PERF_TEST_SCENARIOS)
    if not table:
        return []
    return [
        "### Kafka's own load generators: kafka-producer-perf-test and kafka-consumer-perf-test",
        "",
        "Apache Kafka 3.9.2's `ProducerPerformance` and `ConsumerPerformance` (bench/kafka_perf_test.py), each in a "
        "JVM of its own, with the tools' client defaults besides `acks`: rec/s is the figure the tool prints (produce: "
        "first send to last acknowledgement; consume: `fetch.nMsg.sec`, the group join excluded); p99 is the "
        "producer tool's own; CPU µs/rec is the broker's CPU over the tool's run less its idle rate over the tool's "
        "JVM start and exit (for the consumer, over its whole session, the group join included; it reads ~100-200 MB "
        "so that this is a small part). librdkafka's mock cannot serve the Java client (see the module's docstring).",
        "",
        *table,
    ]


def fsync_section(f: Figures) -> str:
    """The perf tool's produce runs against kbroker, Kafka, and Kafka fsyncing each append (a run of its own)."""
    table = perf_test_table(f, PERF_TEST_SCENARIOS[:2])
    if not table:
        return ""
    return "\n".join(
        [
            "### kafka-producer-perf-test at the same durability: both brokers fsyncing, and neither",
            "",
            "kbroker answers acks=all once the batch is fsynced (docs/durability.md); Kafka, by default, once it is "
            "in the page cache of the in-sync replicas, leaving the fsync to the operating system. `kafka-3.9.2-fsync` "
            "is the same Kafka with `log.flush.interval.messages=1`: it fsyncs each append before answering (at acks=1 "
            "too). `kbroker-nofsync` is kbroker with `log.flush.acks.all.enable=false`: acks=all answered once "
            "written, as Kafka's default. A run of its own after the others (`bench/run.py --targets "
            "kbroker,kbroker-nofsync,kafka,kafka-fsync --sizes '' "
            "--perf-test-sizes 1024 --perf-test-warmup 600000 --perf-test-records 300000`: each broker first gets "
            "600,000 records untimed, since a JVM that has served nothing yet is still compiling; then runs of "
            f"300,000), {f.meta.get('date', '?')}; load average {f.meta.get('load_start', '?')} at "
            f"the start, {f.meta.get('load_end', '?')} at the end. kbroker's fsyncs go through Linux AIO, whose "
            "work runs in the kernel's workers: not in the broker's CPU figure, as Kafka's fsync, made by its own "
            "thread, is in Kafka's.",
            "",
            *table,
        ]
    )


def perf_test_table(f: Figures, scenarios: Sequence[tuple[str, str]]) -> list[str]:
    sizes = sorted({size for scenario, size, _ in f.rows if scenario.startswith("perf-test")})
    targets = [n for n in f.targets if any(key[0].startswith("perf-test") and key[2] == n for key in f.rows)]
    if not sizes:
        return []
    lines = [
        "| record | scenario | "
        + " | ".join(f"{n} rec/s | {n} CPU µs/rec | {n} p99 ms" for n in targets)
        + " | load avg |",
        "|---|---|" + "---|---|---|" * len(targets) + "---|",
    ]
    for size in sizes:
        for scenario, label in scenarios:
            cells = []
            for n in targets:
                p99 = f.cell(scenario, size, n, "tool_p99_ms")
                cells += [
                    fmt(f.cell(scenario, size, n, "rate")),
                    fmt_cpu(f.cell(scenario, size, n, "cpu_us")),
                    "" if p99 is None else fmt(p99),
                ]
            lines.append(
                f"| {size_label(size)} | {label} | "
                + " | ".join(cells)
                + f" | {load_of(f, scenario, size)} |"
            )
    return [*lines, ""]


def connections_section(f: Figures) -> list[str]:
    keys = sorted({(scenario, size) for scenario, size, _ in f.rows if scenario.startswith("connections ")})
    if not keys:
        return []
    lines = [
        "### Concurrent connections, half producing and half consuming",
        "",
        "bench/connections.py: our own minimal asyncio clients (protocol/ codec) in 4 worker processes; producer i "
        "appends batches of 10 records of 100 B to partition i (acks=1, 4 requests/s each, one in flight), consumer "
        "i long-polls partition i (Fetch, max_wait_ms 500). rec/s: records acknowledged per second of the run "
        "(offered in parentheses); lag: produced but not read by the consumers within 30 s after the run; "
        "errors: failed connections, error codes and dropped connections; latency: the Produce round trip and "
        "the end-to-end time from a batch's create time to its consumer (ms); CPU µs/rec: the broker's CPU over "
        "the run (the consuming included) per record produced; the clients' CPU is the 4 workers' (share of one core).",
        "",
        "| connections | target | rec/s (offered) | consumed | lag | errors | produce p50 / p99 ms | end-to-end p99 ms "
        "| CPU µs/rec | RSS max MiB | clients' CPU | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scenario, size in keys:
        for n in f.targets:
            rows = f.rows.get((scenario, size, n), [])
            if not rows:
                continue
            rss = f.cell(scenario, size, n, "rss_max")
            clients = f.cell(scenario, size, n, "clients_cpu")
            seconds = f.cell(scenario, size, n, "wall")
            lines.append(
                f"| {scenario.split()[1]} | {n} | {fmt(f.cell(scenario, size, n, 'rate'))} "
                f"({fmt(f.cell(scenario, size, n, 'offered'))}) | {fmt(f.cell(scenario, size, n, 'consumed'))} "
                f"| {fmt(f.cell(scenario, size, n, 'lag'))} | {fmt(f.cell(scenario, size, n, 'errors'))} "
                f"| {fmt(f.cell(scenario, size, n, 'produce_p50_ms'), 1)} / "
                f"{fmt(f.cell(scenario, size, n, 'produce_p99_ms'), 1)} "
                f"| {fmt(f.cell(scenario, size, n, 'e2e_p99_ms'))} | {fmt_cpu(f.cell(scenario, size, n, 'cpu_us'))} "
                f"| {fmt(None if rss is None else rss / 2**20)} "
                f"| {'—' if clients is None or not seconds else f'{100 * clients / seconds:.0f}%'} "
                f"| {fmt(f.cell(scenario, size, n, 'load'), 1)} |"
            )
        errors = [r.get("first_error") for (sc, _, _), rs in f.rows.items() if sc == scenario for r in rs]
        if any(errors):
            lines.append(f"\nFirst error seen: `{next(e for e in errors if e)}`")
    return [*lines, ""]


def cold_read_section(f: Figures) -> list[str]:
    scenario = cold_read.SCENARIO
    targets = [n for n in f.targets if any(key[0] == scenario and key[2] == n for key in f.rows)]
    if not targets:
        return []
    lines = [
        "### A backlog read from cold segments",
        "",
        "bench/cold_read.py: a topic of 8 partitions filled through Produce (1 MB batches of 16 KiB records, acks=1), "
        "then before every read each of its files fsynced and dropped from the page cache (posix_fadvise "
        "DONTNEED; `fincore` checks it); one confluent-kafka consumer assigns all partitions (fetch.max.bytes 64 MiB, "
        "max.partition.fetch.bytes 8 MiB) and reads everything. MiB/s of record values, median (range) over the "
        "rounds; CPU per GiB read is the broker's.",
        "",
        "| target | GiB read | MiB/s | broker CPU s per GiB | still cached before the read | fill MiB/s | load avg |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in targets:
        rows = [r for (sc, _, t), rs in f.rows.items() if sc == scenario and t == n for r in rs]
        rates = sorted(r["mib_s"] for r in rows)
        spread_text = f" ({rates[0]:,.0f} to {rates[-1]:,.0f})" if len(rates) > 1 else ""
        per_gib = median([r["cpu"] / r["gib"] for r in rows if r.get("cpu") is not None and r.get("gib")])
        cached = median([r["cached_share"] for r in rows if r.get("cached_share") is not None])
        methods = sorted({r.get("drop_method", "?") for r in rows})
        fill = median([r["fill_mib_s"] for r in rows if r.get("fill_mib_s")])
        lines.append(
            f"| {n} | {fmt(median([r['gib'] for r in rows]), 1)} | {fmt(median(rates))}{spread_text} "
            f"| {fmt(per_gib, 2)} | {'—' if cached is None else f'{100 * cached:.1f}%'} ({', '.join(methods)}) "
            f"| {fmt(fill)} | {fmt(median([float(r['load']) for r in rows if r.get('load') not in (None, '?')]), 1)} |"
        )
    return [*lines, ""]


def round_scenario_sections(f: Figures) -> str:
    return "\n".join(perf_test_section(f) + connections_section(f) + cold_read_section(f))


def by_size_plot(f: Figures, directory: Path) -> list[str]:
    """rec/s and CPU per record against the record size (log-log), one line per target and scenario."""
    if len(f.sizes) < 3:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(SCENARIOS), figsize=(4.6 * len(SCENARIOS), 7), squeeze=False)
    for column, scenario in enumerate(SCENARIOS):
        for row, (key, ylabel) in enumerate((("rate", "records/s"), ("cpu_us", "broker CPU µs per record"))):
            ax = axes[row][column]
            for n in f.targets:
                points = [(s, f.cell(scenario, s, n, key)) for s in f.sizes]
                xs = [s for s, v in points if v]
                ax.plot(xs, [v for _, v in points if v], "o-", label=n)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("record value size (bytes, log)")
            ax.set_ylabel(f"{ylabel} (median)")
            ax.set_title(scenario)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(directory / "by-record-size.png", dpi=90)
    plt.close(fig)
    return ["by-record-size.png"]


CLUSTER_TARGET = "kbroker-x3"
CLUSTER_SIZES = "100,1024"  # the sizes of issue 12's cluster targets


def kernel_part(share: float | None) -> str:
    return "" if share is None else f" ({100 * share:.0f}% kernel)"


def cluster_section(single: Figures, cluster: Figures | None, scale_cluster: dict[str, Any] | None) -> str:
    """The 3-node cluster (replication factor 3) against the single node: produce rec/s and CPU per record at
    acks=all and acks=1; then idle CPU per node by partition count (bench/scale.py --cluster)."""
    lines = ["### Three nodes, replication factor 3 (bench/run.py --cluster)", ""]
    if cluster is not None:
        lines += [
            "Produce with one confluent-kafka producer (linger.ms=5) to a topic of 4 partitions; CPU µs/rec sums the "
            "three brokers' CPU (at acks=1 part of the followers' copying may come after the run's last "
            "acknowledgement, so it is undercounted, and its records/s overstated: in the runs of 50,000 x 1 KiB "
            'before c89be41 the acks=1 share measured 136%, see bench/README.md "Three nodes at acks=all"). The '
            "share is the cluster's records/s over the single node's. "
            "Kernel: the part of that CPU spent in the kernel (system time: receiving, the page cache's copies, "
            "sendfile, the network stack), from /proc's tick counts pooled over the rounds; the rest is the "
            "interpreter and what it calls in user space (CRC among it).",
            "",
            "| record | acks | single node rec/s | single node CPU µs/rec (kernel) | 3 nodes rec/s "
            "| 3 nodes CPU µs/rec (kernel) | 3 nodes / single node | load avg (3 nodes) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for size in sorted(cluster.sizes):  # the cluster runs only at the sizes the targets name
            for acks in ("all", "1"):
                scenario = f"produce acks={acks}"
                one = single.cell(scenario, size, "kbroker", "rate")
                three = cluster.cell(scenario, size, CLUSTER_TARGET, "rate")
                share = f"{100 * three / one:.0f}%" if one and three else "—"
                one_cpu = single.cell(scenario, size, "kbroker", "cpu_us")
                three_cpu = cluster.cell(scenario, size, CLUSTER_TARGET, "cpu_us")
                one_kernel = kernel_part(single.cell(scenario, size, "kbroker", "system_share"))
                three_kernel = kernel_part(cluster.cell(scenario, size, CLUSTER_TARGET, "system_share"))
                lines.append(
                    f"| {size_label(size)} | {acks} | {fmt(one)} | {fmt_cpu(one_cpu)}{one_kernel} "
                    f"| {fmt(three)} | {fmt_cpu(three_cpu)}{three_kernel} | {share} "
                    f"| {fmt(cluster.cell(scenario, size, CLUSTER_TARGET, 'load'), 1)} |"
                )
        lines.append("")
    if scale_cluster is not None:
        lines += [
            f"Idle: {scale_cluster.get('description', '')}",
            "",
            "| partitions | idle CPU per node, 3 s after the ISRs were full (share of a core) | 30 s after "
            "| RSS per node (MiB) | create, fill, full ISR (s) | load avg |",
            "|---|---|---|---|---|---|",
        ]

        def shares(values: list[float | None] | None) -> str:
            if values is None:  # (runs before the second window was measured)
                return "not measured"
            return ", ".join("n/a" if x is None else f"{100 * x:.1f}%" for x in values)

        for r in sorted(scale_cluster["rows"], key=lambda r: r["partitions"]):
            idle, at_rest = shares(r["idle_cpu_per_node"]), shares(r.get("idle_cpu_per_node_at_rest"))
            rss = ", ".join(fmt(x) for x in r.get("rss_mib_per_node", []))
            lines.append(
                f"| {r['partitions']:,} | {idle} | {at_rest} | {rss} | {fmt(r.get('create_and_fill_s'))} "
                f"| {r.get('load', '?')} |"
            )
        lines.append("")
    return "\n".join(lines)


def page(f: Figures, plot_names: list[str], scale_text: str, notes: str) -> str:
    m = f.meta
    head = [
        "# Performance",
        "",
        "Written by `bench/performance.py` (the measuring is `bench/run.py`'s: bench/README.md). kbroker, "
        "librdkafka's in-memory C mock cluster and Apache Kafka, measured in one run with the same confluent-kafka "
        "loads, interleaved scenario by scenario (the order reversed every other round; the cold read in rounds of its "
        "own after the others; a sync() before every measurement; before every timed produce run, as much page "
        "cache as it will write written and deleted, so that it lands on memory the machine holds"
        + (f"; {m['isolation']}" if m.get("isolation") else "")
        + "); medians over the rounds. "
        "The machine has 2 cores and is shared with other work: every figure carries the load average.",
        "",
        f"Date: {m.get('date')}  ",
        f"Machine: {m.get('machine')}  ",
        f"Software: {m.get('software')}  ",
        f"Command: `{m.get('command')}`  ",
        f"Load average (1 min) at the start and the end: {m.get('load_start')} / {m.get('load_end')}",
        "",
        notes,
        "",
        tables(f),
        "",
        *disk_section(f),
        *floor_section(f),
        round_scenario_sections(f),
    ]
    if scale_text:
        head += [scale_text, ""]
    head += ["### Plots", ""] + [f"![{name}]({PLOTS}/{name})" for name in plot_names] + [""]
    if f.failures:
        head += ["### Failures", ""] + [f"- {line}" for line in f.failures] + [""]
    return "\n".join(head)


NOTES = """How to read it: *CPU µs/rec* is the broker process's CPU time (user + system, all threads) over the
records of the run; the mock's process also holds an idle librdkafka client and a Python interpreter. The mock keeps
its log in memory (no disk, no fsync, acks=all answered as acks=1); kbroker and Kafka write to the same ext4 disk.
Kafka runs from compat/kafka/ with a 512 MiB heap (Kafka's own scripts default to 1 GiB) and logs at WARN. The
consume scenario reads a filled topic back several times with fresh consumers; the mock keeps only ~5 MiB per
partition, which bounds the records read back."""


def add_round_scenario_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--latency-sizes", default="100,1024", help="record sizes of the latency runs [100,1024]"
    )
    parser.add_argument(
        "--perf-test-sizes",
        default="100,1024",
        help="record sizes of Kafka's perf-test tools (bench/kafka_perf_test.py), '' for none [100,1024]",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=1000,
        help="concurrent connections, half producing, half consuming (bench/connections.py), 0 for none [1000]",
    )
    parser.add_argument(
        "--cold-read-gib",
        type=float,
        help="GiB read back from cold segments (bench/cold_read.py), 0 for none; skipped with a note when the "
        "disk lacks room for it on both brokers [20; quick 0]",
    )


def round_scenario_args(args: argparse.Namespace) -> list[str]:
    """bench/run.py's options for the seed sizes, Kafka's tools, many connections and the cold read."""
    cold = args.cold_read_gib if args.cold_read_gib is not None else (0.0 if args.quick else 20.0)
    out = ["--latency-sizes", args.latency_sizes]
    if not args.quick:
        out += [
            "--consume-passes",
            "3",
        ]  # 8 record sizes: the full run stays within ~25 min (bench/README.md)
    if args.perf_test_sizes:
        out += ["--perf-test-sizes", args.perf_test_sizes]
    if args.connections:
        out += ["--connections", str(args.connections)]
    if cold:
        out += ["--cold-read-gib", f"{cold:g}"]
    return out


def side_run(args: argparse.Namespace, json_path: Path, what: str, run_args: list[str]) -> Path | None:
    """A bench/run.py run of its own after the main one (same rounds and kbroker revision); its JSON, or None if it
    wrote none."""
    run_args = [*run_args, "--json", str(json_path)]
    run_args += ["--out", str(Path(tempfile.mkdtemp(prefix="performance-")) / "results.md")]
    run_args += ["--quick"] if args.quick else ["--rounds", str(args.rounds)]
    if args.kbroker_rev:
        run_args += ["--kbroker-rev", args.kbroker_rev]
    bench_run.main(run_args)
    if not json_path.exists() or not json_path.stat().st_size:
        return None
    print(f"{what} measurements: {json_path}")
    return json_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--from-json", type=Path, help="redraw from this run's JSON instead of measuring")
    parser.add_argument("--kbroker-rev", metavar="REV", help="kbroker from this commit (see bench/run.py)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds [3]")
    parser.add_argument(
        "--sizes",
        help=f"record value sizes [100, 1024 and issue 12's classes {','.join(map(str, SEED_SIZES))}; "
        "quick: 12,100,1024,11760]",
    )
    parser.add_argument(
        "--targets", default="kbroker,mock,kafka", help="bench/run.py targets [kbroker,mock,kafka]"
    )
    parser.add_argument("--scale-json", type=Path, help="bench/scale.py's JSON, for the partitions section")
    parser.add_argument(
        "--cluster-json",
        type=Path,
        help="with --from-json: bench/run.py --cluster's JSON (the 3-node section)",
    )
    parser.add_argument("--no-cluster", action="store_true", help="measure no 3-node cluster")
    parser.add_argument(
        "--no-fsync-parity",
        action="store_true",
        help="measure no run of Kafka's producer tool against Kafka fsyncing each append (log.flush.interval."
        "messages=1) beside kbroker, kbroker answering acks=all without an fsync (log.flush.acks.all.enable=false) "
        "and Kafka",
    )
    parser.add_argument(
        "--fsync-json",
        type=Path,
        help="with --from-json: that run's JSON (bench/run.py's, performance-fsync.json)",
    )
    parser.add_argument(
        "--scale-cluster-json",
        type=Path,
        help="bench/scale.py --cluster's JSON (idle CPU per node by partitions)",
    )
    parser.add_argument("--quick", action="store_true", help="one small round; writes under /tmp")
    parser.add_argument("--out-dir", type=Path, help="where performance.md and its plots go [docs/]")
    add_round_scenario_options(parser)
    args = parser.parse_args(argv)
    args.sizes = args.sizes or (
        "12,100,1024,11760" if args.quick else ",".join(map(str, sorted({100, 1024, *SEED_SIZES})))
    )
    out_dir = args.out_dir or (Path(tempfile.mkdtemp(prefix="performance-")) if args.quick else DOCS)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.from_json is None:
        # the measurements stay beside the page (docs/performance.json), so it can be redrawn
        json_path = out_dir / "performance.json"
        run_args = [
            "--targets", args.targets,
            "--sizes", args.sizes,
            "--latency-rates", str(LATENCY_RATE),
            "--latency-linger-ms", "0",
            "--json", str(json_path),
            "--out", str(Path(tempfile.mkdtemp(prefix="performance-")) / "results.md"),
        ]  # fmt: skip
        if args.quick:
            run_args += ["--quick"]
        else:
            run_args += ["--rounds", str(args.rounds), "--latency-seconds", "10"]
        if args.kbroker_rev:
            run_args += ["--kbroker-rev", args.kbroker_rev]
        run_args += round_scenario_args(args)
        code = bench_run.main(run_args)
        if not json_path.exists() or not json_path.stat().st_size:
            return code or 2
        print(f"measurements: {json_path}")
        cluster_json: Path | None = None
        if not args.no_cluster:
            cluster_json = side_run(
                args,
                out_dir / "performance-cluster.json",
                "cluster",
                [
                    "--cluster", "--targets", "kbroker",
                    "--sizes", CLUSTER_SIZES,
                    "--latency-rates", str(LATENCY_RATE),
                    "--latency-linger-ms", "0",
                ],
            )  # fmt: skip
        fsync_json: Path | None = None
        if not args.no_fsync_parity and "kafka" in args.targets.split(","):
            fsync_json = side_run(
                args,
                out_dir / "performance-fsync.json",
                "fsync parity",
                [
                    "--targets", "kbroker,kbroker-nofsync,kafka,kafka-fsync",
                    "--sizes", "",
                    "--perf-test-sizes", "1024",
                    # Kafka's JVMs here have served nothing yet: warmed first, then runs as long as that warm-up's
                    "--perf-test-warmup", "600000",
                    "--perf-test-records", "300000",
                ],
            )  # fmt: skip
    else:
        json_path = args.from_json
        cluster_json = args.cluster_json
        fsync_json = args.fsync_json
    figures = Figures(json.loads(json_path.read_text()))
    plot_dir = out_dir / PLOTS
    plot_names = plots(figures, plot_dir)
    scale_text = ""
    if args.scale_json is not None:
        scale_text, more = scale_section(json.loads(args.scale_json.read_text()), plot_dir)
        plot_names += more
    if cluster_json is not None or args.scale_cluster_json is not None:
        cluster = Figures(json.loads(cluster_json.read_text())) if cluster_json is not None else None
        scale_cluster = (
            json.loads(args.scale_cluster_json.read_text()) if args.scale_cluster_json is not None else None
        )
        scale_text = "\n\n".join(
            t for t in (scale_text, cluster_section(figures, cluster, scale_cluster)) if t
        )
    if fsync_json is not None:
        fsync_text = fsync_section(Figures(json.loads(fsync_json.read_text())))
        scale_text = "\n\n".join(t for t in (scale_text, fsync_text) if t)
    (out_dir / "performance.md").write_text(page(figures, plot_names, scale_text, NOTES))
    print(f"written to {out_dir / 'performance.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
