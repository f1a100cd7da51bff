"""docs/performance.md: kbroker, librdkafka's mock and Apache Kafka side by side, from one interleaved run.

    .venv/bin/python bench/performance.py --kbroker-rev HEAD --scale-json docs/performance-scale.json
                                     # the full run (~15 min): docs/performance.{md,json} and docs/performance/*.png
    .venv/bin/python bench/performance.py --from-json docs/performance.json --scale-json docs/performance-scale.json
                                     # redraw the page from the committed measurements
    .venv/bin/python bench/performance.py --quick                 # smoke check (one small round), into /tmp

The measuring is bench/run.py's (see bench/README.md): one confluent-kafka load generator; kbroker (a fresh data
directory), the mock (bench/mock_cluster.py) and Apache Kafka 3.9.2 (compat/kafka/, one KRaft node, 512 MiB heap,
its data directory on the same disk) each in a process of its own, started once; every scenario runs on each target in
turn, the order reversed every other round, and the tables give medians over the rounds. CPU is the broker
process's own (from /proc), per record; resident memory (VmRSS) is read right after each measurement; so is the
1-minute load average, because the machine is shared. The latency runs are the issue's: `linger.ms=0`, 1,000
records/s of the record size, 10 s, the first 10% a warm-up. `--scale-json` adds the figures of bench/scale.py
(docs/performance-scale.json is its output).

Plots need matplotlib (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import run as bench_run  # noqa: E402

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
        self.rows: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
        for row in data["results"]:
            self.rows[(row["scenario"], row["size"], row["target"])].append(row)
        self.sizes = sorted({size for _, size, _ in self.rows})

    def cell(self, scenario: str, size: int, target: str, key: str) -> float | None:
        rows = self.rows.get((scenario, size, target), [])
        if key == "rate":
            return median([r["records"] / r["seconds"] for r in rows])
        if key == "cpu_us":
            return median([r["cpu"] * 1e6 / r["records"] for r in rows if r.get("cpu") is not None])
        if key == "load":
            return median([float(r["load"]) for r in rows if r.get("load") not in (None, "?")])
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
    for size in f.sizes:
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
    fig, axes = plt.subplots(1, len(f.sizes), figsize=(5 * len(f.sizes), 3.8), squeeze=False)
    for ax, size in zip(axes[0], f.sizes, strict=True):
        for n in f.targets:
            for acks, style in (("1", "-"), ("all", "--")):
                cdf = f.cdf(latency_scenario(acks), size, n)
                if cdf is not None:
                    ax.plot(cdf, percentiles, style, label=f"{n} acks={acks}")
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
    return names


def scale_section(scale: dict[str, Any], directory: Path) -> tuple[str, list[str]]:
    """The table (and plots) of bench/scale.py's JSON: idle CPU, Metadata time, start time and RSS by partitions."""
    rows = scale["rows"]
    lines = [
        "### Partitions on one node (bench/scale.py)",
        "",
        f"{scale.get('description', '')}",
        "",
        "| target | partitions | start with data (s) | start after kill -9 (s) | full Metadata (ms, median) | idle CPU "
        "(share of a core) | RSS (MiB) | load avg |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        idle = "n/a" if r.get("idle_cpu") is None else f"{100 * r['idle_cpu']:.2f}%"
        lines.append(
            f"| {r['target']} | {r['partitions']:,} | {fmt(r.get('start_s'), 1)} | {fmt(r.get('start_unclean_s'), 1)} "
            f"| {fmt(r.get('metadata_ms'), 1)} "
            f"| {idle} | {fmt(r.get('rss_mib'))} | {r.get('load', '?')} |"
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


def page(f: Figures, plot_names: list[str], scale_text: str, notes: str) -> str:
    m = f.meta
    head = [
        "# Performance",
        "",
        "Written by `bench/performance.py` (the measuring is `bench/run.py`'s: bench/README.md). kbroker, "
        "librdkafka's in-memory C mock cluster and Apache Kafka, measured in one run with the same confluent-kafka "
        "loads, interleaved scenario by scenario (the order reversed every other round); medians over the rounds. "
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--from-json", type=Path, help="redraw from this run's JSON instead of measuring")
    parser.add_argument("--kbroker-rev", metavar="REV", help="kbroker from this commit (see bench/run.py)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds [3]")
    parser.add_argument("--sizes", default="100,1024", help="record value sizes [100,1024]")
    parser.add_argument(
        "--targets", default="kbroker,mock,kafka", help="bench/run.py targets [kbroker,mock,kafka]"
    )
    parser.add_argument("--scale-json", type=Path, help="bench/scale.py's JSON, for the partitions section")
    parser.add_argument("--quick", action="store_true", help="one small round; writes under /tmp")
    parser.add_argument("--out-dir", type=Path, help="where performance.md and its plots go [docs/]")
    args = parser.parse_args(argv)
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
        code = bench_run.main(run_args)
        if not json_path.exists() or not json_path.stat().st_size:
            return code or 2
        print(f"measurements: {json_path}")
    else:
        json_path = args.from_json
    figures = Figures(json.loads(json_path.read_text()))
    plot_dir = out_dir / PLOTS
    plot_names = plots(figures, plot_dir)
    scale_text = ""
    if args.scale_json is not None:
        scale_text, more = scale_section(json.loads(args.scale_json.read_text()), plot_dir)
        plot_names += more
    (out_dir / "performance.md").write_text(page(figures, plot_names, scale_text, NOTES))
    print(f"written to {out_dir / 'performance.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
