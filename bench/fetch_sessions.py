"""Broker CPU of one consumer of many partitions, with and without fetch sessions (KIP-227).

    .venv/bin/python bench/fetch_sessions.py                 # 1,000 partitions, 3 active, 20 s per run, 2 rounds
    .venv/bin/python bench/fetch_sessions.py --quick         # 5 s per run, one round

A fresh kbroker per run, with `max.incremental.fetch.session.cache.slots` 1000 (sessions) or 0 (none: Kafka's way of
turning them off, every fetch is full). A topic of `--partitions` partitions gets one record in each; franz-go
(compat/go/franz, which uses fetch sessions) consumes every partition while this script produces `--rate` records a
second, round robin over `--active` partitions, for `--seconds`. The figures: the broker's CPU seconds over the
window, per record consumed and per fetch request, and the fetches' count (from the broker's FetchSessionCache
metrics). Runs alternate (sessions, none, sessions, ...) so that the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import cpu_delta, load_average, sample_cpu  # noqa: E402
from bench.profile import summarize  # noqa: E402
from compat.go import build as go_build  # noqa: E402
from tests.broker_process import BrokerProcess, free_port  # noqa: E402
from tests.test_metrics import scrape, value  # noqa: E402

REQUESTS = "kafka_server_fetchsessioncache_fetchrequests_total"
LISTED = "kafka_server_fetchsessioncache_fetchrequestpartitions_total"
KINDS = ("full", "incremental", "sessionless")


def run_once(franz: Path, slots: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kbroker-bench-sessions-") as tmp:
        admin_port = free_port()
        broker = BrokerProcess(
            Path(tmp) / "data",
            overrides={
                "admin.listener": f"http://127.0.0.1:{admin_port}",
                "max.incremental.fetch.session.cache.slots": str(slots),
            },
            log_path=Path(tmp) / "broker.log",
        )
        broker.start()
        metrics = f"http://127.0.0.1:{admin_port}"
        try:
            topic = "bench-sessions"
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            admin.create_topics([NewTopic(topic, num_partitions=args.partitions, replication_factor=1)])[
                topic
            ].result(60)
            producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
            for p in range(args.partitions):
                producer.produce(topic, value=b"x" * 100, partition=p)
            producer.flush(60)
            total = args.partitions + args.rate * args.seconds
            consumer = subprocess.Popen(
                [
                    str(franz),
                    "--brokers",
                    broker.bootstrap,
                    "consume",
                    topic,
                    str(args.partitions),
                    str(total),
                    "300",
                ],
                # A file, not a pipe: a pipe read only at the end would stop the consumer once full.
                stdout=(Path(tmp) / "franz.out").open("w"),
                stderr=subprocess.DEVNULL,
                text=True,
            )
            # The window starts once the consumer has read the first record of every partition.
            deadline = time.monotonic() + 120
            while (
                value(scrape(metrics), "kafka_server_brokertopicmetrics_messagesout_total", topic=topic)
                < args.partitions
            ):
                if time.monotonic() > deadline or consumer.poll() is not None:
                    raise RuntimeError("the consumer did not read the topic's first records")
                time.sleep(0.1)
            spy = None
            if args.profile:
                raw = Path(tmp) / f"spy-{slots}.txt"
                spy = subprocess.Popen(
                    [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(broker.pid), "--format",
                     "raw", "--output", str(raw), "--rate", "199"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                time.sleep(1.0)
            before, cpu_before, started = scrape(metrics), sample_cpu(broker.pid), time.monotonic()
            sent = 0
            while sent < args.rate * args.seconds:
                due = int((time.monotonic() - started) * args.rate)
                while sent < min(due, args.rate * args.seconds):
                    producer.produce(
                        topic, value=b"y" * 100, partition=args.active_partitions[sent % args.active]
                    )
                    sent += 1
                producer.poll(0)
                time.sleep(0.005)
            producer.flush(60)
            consumer.wait(timeout=120)
            cpu = cpu_delta(cpu_before, sample_cpu(broker.pid))
            elapsed = time.monotonic() - started
            after = scrape(metrics)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
                print(f"-- profile, slots={slots}\n{summarize(raw, 25)}", file=sys.stderr)
        finally:
            broker.stop()
    fetches = {k: value(after, REQUESTS, context=k) - value(before, REQUESTS, context=k) for k in KINDS}
    listed = sum(value(after, LISTED, context=k) - value(before, LISTED, context=k) for k in KINDS)
    requests = sum(fetches.values())
    assert cpu is not None
    return {
        "slots": slots,
        "consumer_exit": consumer.returncode,
        "records": sent,
        "seconds": round(elapsed, 2),
        "broker_cpu_s": round(cpu, 3),
        "cpu_us_per_record": round(cpu / max(sent, 1) * 1e6, 1),
        "fetches": fetches,
        "cpu_us_per_fetch": round(cpu / max(requests, 1) * 1e6, 1),
        "partitions_listed_per_fetch": round(listed / max(requests, 1), 1),
        "load": load_average(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--active", type=int, default=3, help="partitions that get records during the window")
    parser.add_argument("--rate", type=int, default=200, help="records per second during the window")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="5 s windows, one round")
    parser.add_argument("--profile", action="store_true", help="py-spy the broker in each window (stderr)")
    parser.add_argument("--json", type=Path, help="write the runs here")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds = 5, 1
    step = max(args.partitions // args.active, 1)
    args.active_partitions = [i * step for i in range(args.active)]
    franz = go_build.build("franz", go_build.find_go())
    runs = []
    for _ in range(args.rounds):
        for slots in (1000, 0):
            run = run_once(franz, slots, args)
            print(json.dumps(run), flush=True)
            runs.append(run)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
