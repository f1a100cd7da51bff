"""Where kbroker's CPU goes under one load: py-spy samples the broker while confluent-kafka produces or consumes.

    .venv/bin/python bench/profile.py produce --size 1024 --acks 1      # self and total time per function
    .venv/bin/python bench/profile.py consume --size 100 --records 400000
    .venv/bin/python bench/profile.py produce --size 100 --stacks /tmp/p.folded   # keep the collapsed stacks
    .venv/bin/python bench/profile.py produce --size 100 --paced 1000   # the latency runs' load: 1 record/request
    .venv/bin/python bench/profile.py produce --kbroker-rev HEAD~1 --kbroker-rev .  # before/after, no profile

The profiles quoted in commit messages and docs/performance.md come from here: one kbroker (the working tree, or
--kbroker-rev REV) on a fresh data directory, one topic of 4 partitions, the same load generator as bench/run.py
(bench/loads.py), py-spy attached to the broker's pid for the whole timed part (`--native` adds C frames). It prints
the broker's CPU per record (from /proc, as bench/run.py measures it; py-spy's sampling adds a few percent) and the
functions with the most samples, by self time and by total time. Needs py-spy (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import loads  # noqa: E402
from bench.common import (  # noqa: E402
    BenchError,
    KBrokerSource,
    cpu_delta,
    kbroker_sources,
    load_average,
    produce_bytes,
    reuse_page_cache,
    sample_cpu,
    working_tree,
)
from tests.broker_process import BrokerProcess  # noqa: E402

# Leaves where a thread waits rather than works (py-spy, without --native, sees a blocking call as running): the
# event loop's epoll_wait and an idle worker thread of trio's cache. Counted apart, not in the percentages.
IDLE_LEAVES = ("EpollIOManager.get_events (", "WorkerThread._work (")


def summarize(raw: Path, top: int) -> str:
    """Self and total samples per function from py-spy's collapsed stacks ("frame;frame;... count" lines), over
    the samples where the broker was not waiting (see IDLE_LEAVES)."""
    self_count: collections.Counter[str] = collections.Counter()
    total_count: collections.Counter[str] = collections.Counter()
    samples = idle = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_short(f) for f in stack.split(";")]
        if frames[-1].startswith(IDLE_LEAVES):
            idle += count
            continue
        samples += count
        self_count[frames[-1]] += count
        for frame in set(frames):
            total_count[frame] += count
    if not samples:
        return "(no samples)"
    lines = [
        f"{samples} samples working ({idle} more waiting in epoll or an idle worker thread)",
        "",
        "self %   function",
    ]
    lines += [f"{100 * n / samples:6.1f}   {f}" for f, n in self_count.most_common(top)]
    lines += ["", "total %  function"]
    lines += [f"{100 * n / samples:6.1f}   {f}" for f, n in total_count.most_common(top)]
    return "\n".join(lines)


def _short(frame: str) -> str:
    """`fn (path/to/kbroker/x.py:12)` -> `fn (kbroker/x.py)`: lines apart, one function is one row."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for root in ("kbroker/", "protocol/", "trio/", "python3.11/"):
        if root in path:
            path = root + path.split(root, 1)[1]
            break
    return f"{name} ({path})" if path else name


@dataclasses.dataclass
class Run:
    records: int
    seconds: float
    cpu: float | None
    profile: str = ""

    def line(self) -> str:
        per = f"{1e6 * self.cpu / self.records:.3f} µs per record" if self.cpu is not None else "n/a"
        rate = self.records / self.seconds
        return f"{self.records:,} records in {self.seconds:.2f} s ({rate:,.0f} rec/s); broker CPU {per}"


def measure(args: argparse.Namespace, source: KBrokerSource, py_spy: str | None, tmp: Path) -> Run:
    """One broker from `source`, one load; py-spy attached when `py_spy` is given."""
    if args.records:
        records = args.records
    elif args.paced:
        records = int(10 * args.paced)
    else:
        records = (60_000_000 if args.scenario == "produce" else 40_000_000) // (args.size + 12)
    overrides = dict(kv.split("=", 1) for kv in args.override)
    value = loads.random_value(args.size)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=tmp))
    broker = BrokerProcess(
        work / "data", log_path=work / "broker.log", source_dir=source.directory, overrides=overrides
    )
    broker.start()
    try:
        topic = "profile"
        loads.create_topic(broker.bootstrap, topic, loads.PARTITIONS, 1)
        if args.scenario == "consume":
            loads.fill(broker.bootstrap, topic, records, value)
        raw = work / "stacks.txt"
        spy = None
        if py_spy is not None:
            spy = subprocess.Popen(
                [py_spy, "record", "--pid", str(broker.pid), "--rate", str(args.rate), "--format", "raw",
                 "--output", str(raw), "--nonblocking", *(["--native"] if args.native else [])],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )  # fmt: skip
            time.sleep(1.0)  # py-spy attached
        if args.scenario == "produce":
            reuse_page_cache(produce_bytes(records, args.size))  # as bench/run.py does before a produce run
        cpu0 = sample_cpu(broker.pid)
        started = time.perf_counter()
        if args.scenario == "produce":
            done = loads.produce(
                broker.bootstrap,
                topic,
                records,
                value,
                args.acks,
                timeout=300,
                linger_ms=0 if args.paced else 5,  # paced: one record per request
                rate=args.paced,
            )
        else:
            done = loads.consume(broker.bootstrap, topic, records, args.passes, timeout=300)
        run = Run(done, time.perf_counter() - started, cpu_delta(cpu0, sample_cpu(broker.pid)))
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its output and exits
            _, err = spy.communicate(timeout=60)
            if not raw.exists():
                raise BenchError(f"py-spy wrote nothing: {err.decode(errors='replace')[-2000:]}")
            run.profile = summarize(raw, args.top)
            if args.stacks is not None:
                shutil.copyfile(raw, args.stacks)
        return run
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenario", choices=["produce", "consume"])
    parser.add_argument("--size", type=int, default=1024, help="record value bytes [1024]")
    parser.add_argument("--acks", default="1", help="produce acks: 1 or all [1]")
    parser.add_argument("--records", type=int, help="records per run [produce: 60 MB worth; consume: 40 MB]")
    parser.add_argument(
        "--paced",
        type=float,
        metavar="REC_PER_S",
        help="produce at this rate, one record per request (linger.ms=0), as the latency runs do; records "
        "default to 10 s worth",
    )
    parser.add_argument("--passes", type=int, default=3, help="consume: times the topic is read [3]")
    parser.add_argument("--rate", type=int, default=199, help="py-spy samples per second [199]")
    parser.add_argument("--native", action="store_true", help="py-spy --native (C frames too)")
    parser.add_argument("--top", type=int, default=25, help="rows per table [25]")
    parser.add_argument(
        "--stacks", type=Path, help="also keep py-spy's collapsed stacks here (flame graph tools)"
    )
    parser.add_argument(
        "--kbroker-rev",
        action="append",
        metavar="REV",
        help="profile this commit instead of the working tree; twice or more (`.` is the working tree): no "
        "profile, CPU per record of each, interleaved over --rounds (a before/after figure)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of a comparison [5]")
    parser.add_argument(
        "--override", action="append", default=[], metavar="KEY=VALUE", help="a broker config, repeatable"
    )
    args = parser.parse_args(argv)
    if args.paced and args.scenario != "produce":
        parser.error("--paced paces a produce load")
    revs = args.kbroker_rev or []
    compare = len(revs) > 1
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not compare and not Path(py_spy).exists():
        print("py-spy is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    what = (
        f"{args.scenario} {args.size} B"
        + (f" acks={args.acks}" if args.scenario == "produce" else f" x{args.passes} passes")
        + (f" at {args.paced:,.0f} rec/s" if args.paced else "")
    )
    tmp = Path(tempfile.mkdtemp(prefix="kbroker-profile-"))
    try:
        exported = [r for r in revs if r != "."]
        with kbroker_sources(exported or None) as sources:
            by_rev = dict(zip(exported, sources, strict=True)) if exported else {}
            chosen = [working_tree() if r == "." else by_rev[r] for r in revs] or sources
            if not compare:
                run = measure(args, chosen[0], py_spy, tmp)
                print(f"{what} on {chosen[0].description}: {run.line()}")
                print(run.profile)
                return 0
            print(f"{what}, {args.rounds} rounds, interleaved (load average {load_average()})")
            runs: dict[int, list[Run]] = {i: [] for i in range(len(chosen))}
            for round_ in range(args.rounds):
                order = list(range(len(chosen)))
                if round_ % 2:
                    order.reverse()
                for i in order:
                    run = measure(args, chosen[i], None, tmp)
                    runs[i].append(run)
                    print(f"  round {round_ + 1} {revs[i]:>12}: {run.line()}", flush=True)
            print(f"medians (load average {load_average()}):")
            for i, rev in enumerate(revs):
                per = [1e6 * r.cpu / r.records for r in runs[i] if r.cpu is not None]
                rates = [r.records / r.seconds for r in runs[i]]
                print(
                    f"  {rev:>12} ({chosen[i].description}): {statistics.median(per):.3f} µs per record "
                    f"(range {min(per):.3f} to {max(per):.3f}), {statistics.median(rates):,.0f} rec/s"
                )
    except BenchError as e:
        print(e, file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
