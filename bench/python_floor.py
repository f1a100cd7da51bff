"""How close to the least a Python broker can do is kbroker's produce path? Interleaved, in one run.

    .venv/bin/python bench/python_floor.py                 # 5 rounds, writes docs/performance-python-floor.md
    .venv/bin/python bench/python_floor.py --rounds 1 --out /tmp/floor.md

Issue 12 asks for a broker CPU per produced record of at most 0.10 µs at 100 B and 0.40 µs at 1 KiB, at acks=1 and
acks=all. The targets here take bench/run.py's produce scenario (one confluent-kafka producer, linger.ms=5, 4
partitions, the page cache warmed first) in turn, at acks=1 and acks=all, the others frozen meanwhile, the order
reversed every other round:

- kbroker (`python -m kbroker serve`, from --kbroker-rev or the working tree);
- floor-trio: bench/floor_broker.py, a broker that only checks each batch's CRC, sets its offset, writes it to a
  file (acks=all: and fsyncs it, through kbroker's Fsyncer) and answers, with kbroker's connection loop cut to the
  bone on trio;
- floor-threads: the same with a thread per connection and blocking system calls, no event loop at all, acks=1 only;
- mock: librdkafka's in-memory C mock cluster (bench/mock_cluster.py), which writes no file.

CPU per record is the broker process's (user + system, /proc), medians over the rounds; the kernel's share is
pooled over the rounds from the clock ticks. See bench/README.md ("The least a Python broker can do").
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import shlex
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import (  # noqa: E402
    BenchError,
    kbroker_sources,
    load_average,
    machine,
    system_share,
)
from bench.run import (  # noqa: E402
    PARTITIONS,
    KBroker,
    Mock,
    ScriptTarget,
    Target,
    produce_scenario,
    size_label,
    software,
)
from tests.broker_process import free_port  # noqa: E402

# records per run: a few hundred produce requests of ~1,000-1,500 records each
RECORDS = {100: 1_000_000, 1024: 300_000}


class FloorBroker(ScriptTarget):
    """bench/floor_broker.py in a process of its own. Every topic a Metadata request names exists (4 partitions)."""

    auto_creates = True

    def __init__(self, mode: str) -> None:
        super().__init__(f"floor-{mode}")
        self.mode = mode

    def start(self) -> None:
        self._launch(
            "floor_broker.py",
            lambda tmp: ["--data-dir", str(tmp / "data"), "--port", str(free_port()), "--mode", self.mode],
        )


ACKS = ("1", "all")


def answers(target: Target, acks: str) -> bool:
    """Whether the target serves produce at `acks` (the threads floor has no fsync, so no acks=all)."""
    return acks == "1" or target.name != "floor-threads"


def measure(
    targets: list[Target], sizes: list[int], rounds: int, timeout: float
) -> dict[tuple[int, str, str], list[Any]]:
    """results[(size, acks, target)] = one produce_scenario dict per round."""
    results: dict[tuple[int, str, str], list[Any]] = defaultdict(list)
    values = {size: os.urandom(size) for size in sizes}
    for rnd in range(rounds):
        order = targets if rnd % 2 == 0 else targets[::-1]
        print(f"--- round {rnd + 1}/{rounds}: {', '.join(t.name for t in order)}", flush=True)
        for size, acks in itertools.product(sizes, ACKS):
            for target in (t for t in order if answers(t, acks)):
                others = [t for t in targets if t is not target]
                for other in others:
                    other.pause()
                try:
                    os.sync()  # the last run's page writeback would compete with this one
                    topic = f"floor-r{rnd}-s{size}-acks{acks}"
                    r = produce_scenario(target, topic, RECORDS[size], values[size], acks, timeout)
                finally:
                    for other in others:
                        other.resume()
                r["load"] = load_average()
                results[(size, acks, target.name)].append(r)
                print(
                    f"{target.name:>14} {size_label(size):>6} acks={acks:<3} "
                    f"{r['records'] / r['seconds']:>11,.0f} rec/s  CPU {r['cpu'] * 1e6 / r['records']:.3f} µs/rec",
                    flush=True,
                )
    return results


def report(
    targets: list[Target],
    sizes: list[int],
    results: dict[tuple[int, str, str], list[Any]],
    meta: dict[str, str],
) -> str:
    lines = [
        "# The least a Python broker can do: produce CPU per record",
        "",
        f'Written by `bench/python_floor.py` ({meta["date"]}); see bench/README.md, "The least a Python broker can '
        'do".',
        "",
        f"- Machine: {meta['machine']}",
        f"- Software: {meta['software']}",
        f"- Command: `{meta['command']}`",
        f"- Load average (1 min): {meta['load_start']} at the start, {meta['load_end']} at the end",
        f"- One confluent-kafka producer, linger.ms=5, {PARTITIONS} partitions; records per run: "
        + ", ".join(f"{RECORDS[s]:,} at {size_label(s)}" for s in sizes)
        + f"; {meta['rounds']} interleaved rounds, the other targets frozen meanwhile.",
        "",
        "Broker CPU in µs per record (median, and each round), the kernel's share of it (pooled over the rounds), and "
        "the rate (median):",
        "",
        "| record | acks | target | CPU µs/rec | rounds | kernel | rec/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for size, acks in itertools.product(sizes, ACKS):
        for t in (t for t in targets if answers(t, acks)):
            rows = results[(size, acks, t.name)]
            per_record = [r["cpu"] * 1e6 / r["records"] for r in rows if r["cpu"] is not None]
            rates = [r["records"] / r["seconds"] for r in rows]
            ticks = [r["cpu_ticks_and_system"] for r in rows if r["cpu_ticks_and_system"] is not None]
            share = system_share(ticks)
            lines.append(
                f"| {size_label(size)} | {acks} | {t.name} | "
                + (f"{statistics.median(per_record):.3f}" if per_record else "?")
                + " | "
                + ", ".join(f"{v:.3f}" for v in per_record)
                + " | "
                + (f"{share:.0%}" if share is not None else "?")
                + f" | {statistics.median(rates):,.0f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kbroker-rev", metavar="REV", help="run kbroker from a clean export of this commit")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds [5]")
    parser.add_argument(
        "--sizes", default="100,1024", help="record value sizes, comma-separated (100, 1024) [100,1024]"
    )
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="give up on one run after this many s [300]"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "docs" / "performance-python-floor.md",
        help="write the markdown here [docs/performance-python-floor.md]",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(s not in RECORDS for s in sizes):
        parser.error(f"sizes must be among {sorted(RECORDS)}")
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "command": ".venv/bin/python bench/python_floor.py "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
        "rounds": str(args.rounds),
        "load_start": load_average(),
    }
    with kbroker_sources([args.kbroker_rev] if args.kbroker_rev else None) as (source,):
        meta["software"] = software(source)
        targets: list[Target] = [KBroker(source), FloorBroker("trio"), FloorBroker("threads"), Mock()]
        started: list[Target] = []
        try:
            for t in targets:
                started.append(t)
                t.start()
            results = measure(targets, sizes, args.rounds, args.timeout)
        except BenchError as e:
            print(f"python_floor: {e}", file=sys.stderr)
            return 1
        finally:
            for t in started:
                t.stop()
    meta["load_end"] = load_average()
    text = report(targets, sizes, results, meta)
    print()
    print(text)
    args.out.write_text(text)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
