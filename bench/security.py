"""Throughput over SASL_SSL next to PLAINTEXT, measured in one run on one kbroker.

    .venv/bin/python bench/security.py            # ~3 min: bench/results-security.md
    .venv/bin/python bench/security.py --quick    # ~30 s smoke check, prints only

One broker (tests/security_support.py's SecureBroker: PLAINTEXT and SASL_SSL listeners among others, a test CA)
serves both; confluent-kafka is the load generator, logged in with SCRAM-SHA-512 over TLS on SASL_SSL. Each round
produces RECORDS records (acks=all, linger.ms=5) into a fresh 4-partition topic through one listener, then reads
them back with a consumer assigned to every partition, and does the same through the other listener; the listeners
alternate within every round, and the report gives medians over the rounds, with the broker's CPU seconds per
100k records (from /proc), the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    # `bench` and `tests` are imported as packages of the repository, wherever this script is started from.
    sys.path.insert(0, str(REPO))

from bench.common import cpu_seconds, git, load_average, machine  # noqa: E402
from tests.security_support import PASSWORDS, OAuthIssuer, SecureBroker, make_pki  # noqa: E402

PARTITIONS = 4


@dataclass
class Run:
    listener: str
    size: int
    produce_rps: float
    produce_cpu: float
    consume_rps: float
    consume_cpu: float


def settings(broker: SecureBroker, listener: str) -> dict[str, str]:
    if listener == "PLAINTEXT":
        return {"bootstrap.servers": broker.bootstrap}
    return {
        "bootstrap.servers": broker.bootstrap_of("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(broker.pki.ca),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": PASSWORDS["alice"],
    }


def one_run(broker: SecureBroker, listener: str, size: int, records: int) -> Run:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    conf = settings(broker, listener)
    producer = Producer({**conf, "acks": "all", "linger.ms": 5, "queue.buffering.max.messages": 500000})
    producer.list_topics(topic, timeout=30)  # connected and logged in before the clock starts
    value = b"x" * size
    cpu0, t0 = cpu_seconds(broker.pid), time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, value=value)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(120) == 0
    produce_s, produce_cpu = time.perf_counter() - t0, cpu_seconds(broker.pid) - cpu0
    consumer = Consumer({**conf, "group.id": topic, "enable.auto.commit": False, "fetch.max.bytes": 52428800})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    consumer.consume(1, 10)  # connected and logged in
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got = 0
    cpu0, t0 = cpu_seconds(broker.pid), time.perf_counter()
    while got < records:
        got += sum(1 for m in consumer.consume(10000, 5) if m.error() is None)
    consume_s, consume_cpu = time.perf_counter() - t0, cpu_seconds(broker.pid) - cpu0
    consumer.close()
    return Run(listener, size, records / produce_s, produce_cpu * 100_000 / records, records / consume_s,
               consume_cpu * 100_000 / records)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small round, printed only")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results-security.md")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    sizes = {100: 20_000 if args.quick else 200_000, 1024: 10_000 if args.quick else 100_000}
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="kbroker-bench-security-") as tmp:
        base = Path(tmp)
        pki = make_pki(base / "pki")
        broker = SecureBroker(base / "data", pki, OAuthIssuer.create(pki.dir), log_path=base / "broker.log")
        broker.start()
        try:
            for round_ in range(rounds):
                for size, count in sizes.items():
                    order = ("PLAINTEXT", "SASL_SSL") if round_ % 2 == 0 else ("SASL_SSL", "PLAINTEXT")
                    for listener in order:
                        run = one_run(broker, listener, size, count)
                        runs.append(run)
                        print(f"round {round_ + 1} {size} B {listener}: produce {run.produce_rps:,.0f} rec/s, "
                              f"consume {run.consume_rps:,.0f} rec/s", flush=True)  # fmt: skip
        finally:
            broker.stop()
    lines = [
        "# Throughput over SASL_SSL next to PLAINTEXT",
        "",
        f"`bench/security.py`, kbroker at {git('describe', '--always', '--dirty') or '?'}, "
        f"{time.strftime('%Y-%m-%d')}; {machine()}; load average at the end {load_average()}.",
        "",
        f"One kbroker, one confluent-kafka client at a time; {rounds} rounds, the listeners alternating in each; "
        "medians. SASL_SSL: TLS 1.3 and SCRAM-SHA-512 (the login is done before the clock starts). Produce: "
        "acks=all, linger.ms=5, 4 partitions. CPU: the broker's CPU seconds per 100k records.",
        "",
        "| record | listener | produce rec/s | produce MB/s | broker CPU s/100k | consume rec/s | consume MB/s "
        "| broker CPU s/100k |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        for listener in ("PLAINTEXT", "SASL_SSL"):
            mine = [r for r in runs if r.size == size and r.listener == listener]
            p = statistics.median(r.produce_rps for r in mine)
            c = statistics.median(r.consume_rps for r in mine)
            lines.append(
                f"| {size} B | {listener} | {p:,.0f} | {p * size / 1e6:,.1f} | "
                f"{statistics.median(r.produce_cpu for r in mine):.3f} | {c:,.0f} | {c * size / 1e6:,.1f} | "
                f"{statistics.median(r.consume_cpu for r in mine):.3f} |"
            )
    lines += ["", "Per round (rec/s, produce / consume):", ""]
    lines += [f"- {r.size} B {r.listener}: {r.produce_rps:,.0f} / {r.consume_rps:,.0f}" for r in runs]
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.quick:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
