"""The whole pipeline in one command: events generated into a topic, the streaming job aggregating them.

    scripts/pipeline --bootstrap 127.0.0.1:9092                    # 6,000 events at 200/s, then a check
    scripts/pipeline --bootstrap 127.0.0.1:9091,127.0.0.1:9092 --replication-factor 3 --count 0   # until Ctrl-C

It creates the events and results topics if they do not exist, starts the streaming job (pipelines/streaming.py) as
a child process, produces the events (pipelines/generator.py) and prints one progress line every two seconds:
events produced and acknowledged, micro-batches done and rows read by the aggregation, windows written to Parquet and
records sent to the results topic, the job's watermark. With a `--count`, once every event is acknowledged it waits
for the job to have read them all and written every window the final watermark closes, stops the job, and (unless
`--no-check`) compares both outputs with the windows computed in plain Python from the events produced
(pipelines/reference.py): the Parquet rows must be exactly those, once each; the results topic, read as upserts
(the last value per key), must equal them too.

A run writes under --data-dir: the events produced (events.jsonl), the job's checkpoints, its Parquet output and
Spark's log. A second run on the same data directory and topics resumes the job from its checkpoint; the check
then counts the earlier run's events too only if they are in events.jsonl, so start the check on fresh topics and a
fresh data directory (the default topic names carry the seed for that reason).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from confluent_kafka.admin import AdminClient, NewTopic

from pipelines import reference, results
from pipelines.events import Event, format_time
from pipelines.generator import Generator, GeneratorStats, add_event_arguments, describe, settings_from
from pipelines.process import StreamingJobProcess
from pipelines.spark import CONNECTORS
from pipelines.streaming import AGGREGATES_QUERY, RESULTS_QUERY, StreamingSettings

ADMIN_TIMEOUT_S = 60.0
JOB_START_TIMEOUT_S = 180.0
PRINT_EVERY_S = 2.0


def ensure_topics(bootstrap: str, topics: list[str], partitions: int, replication_factor: int) -> None:
    """Create the topics that do not exist yet (an existing one is used as it is)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics
    missing = [NewTopic(t, partitions, replication_factor) for t in topics if t not in existing]
    if not missing:
        return
    for topic, future in admin.create_topics(missing, operation_timeout=ADMIN_TIMEOUT_S).items():
        try:
            future.result(ADMIN_TIMEOUT_S)
        except Exception as error:
            if "TOPIC_ALREADY_EXISTS" not in str(error):
                raise RuntimeError(f"creating topic {topic}: {error}") from error
    # Wait until the new topics' partitions all have leaders (Kafka creates them a moment after answering).
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while True:
        described = admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics
        if all(
            t.topic in described
            and len(described[t.topic].partitions) == partitions
            and all(p.leader >= 0 for p in described[t.topic].partitions.values())
            for t in missing
        ):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"topics {[t.topic for t in missing]} have no leaders after {ADMIN_TIMEOUT_S} s"
            )
        time.sleep(0.1)


def status_line(job: StreamingJobProcess, stats: GeneratorStats | None) -> str:
    """Events produced, micro-batches and events read by the aggregation, windows committed to Parquet (as the
    results query reads them back: Spark's file sink reports no row count) and records sent to the results topic."""
    aggregates = job.progress(AGGREGATES_QUERY)
    copied = job.progress(RESULTS_QUERY)
    read = sum(line.get("input_rows") or 0 for line in aggregates)
    windows = sum(line.get("input_rows") or 0 for line in copied)
    sent = sum(max(line.get("output_rows") or 0, 0) for line in copied)
    watermark = next((line["watermark"] for line in reversed(aggregates) if line.get("watermark")), "-")
    produced = f"produced {stats.produced} (acked {stats.acked})" if stats else "generator done"
    return (
        f"{produced} | aggregation: {job.batches(AGGREGATES_QUERY)} batches, {read} events read, "
        f"watermark {watermark} | Parquet: {windows} windows | results topic: {sent} records"
    )


def check(settings: StreamingSettings, events: list[Event]) -> tuple[bool, str]:
    """Compare the Parquet output and the results topic with the reference; (matches, a report)."""
    watermark = reference.final_watermark_ms(events, settings.watermark_delay_s * 1000)
    want = reference.closed(reference.window_aggregates(events), watermark)
    rows = results.parquet_rows(settings.output)
    parquet = results.as_table(rows) if len(rows) == len({row.key for row in rows}) else None
    records = results.topic_records(settings.bootstrap, settings.results_topic)
    topic = results.upserts(records)
    lines = [
        f"reference: {len(want)} windows closed by watermark {format_time(watermark)}, "
        f"{sum(t.events for k, t in want.items() if k.kind == reference.TUMBLING.kind)} events counted",
        f"parquet: {len(rows)} rows" + ("" if parquet is not None else " (some window twice!)"),
        f"results topic: {len(records)} records, {len(topic)} keys",
    ]
    ok = parquet == want and topic == want
    if parquet != want:
        lines.append(f"parquet differs: {_diff(want, parquet or {})}")
    if topic != want:
        lines.append(f"results topic differs: {_diff(want, topic)}")
    lines.append("both outputs equal the reference" if ok else "MISMATCH")
    return ok, "\n".join(lines)


def _diff(
    want: dict[reference.WindowKey, reference.WindowTotals],
    got: dict[reference.WindowKey, reference.WindowTotals],
) -> str:
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [(k, want[k], got[k]) for k in want if k in got and got[k] != want[k]]
    return f"{len(missing)} missing {missing[:2]}, {len(extra)} extra {extra[:2]}, {len(wrong)} wrong {wrong[:2]}"


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    count = args.count or None
    events_topic = args.events_topic or f"events-{args.seed}"
    results_topic = args.results_topic or f"event-aggregates-{args.seed}"
    settings = StreamingSettings(
        bootstrap=args.bootstrap,
        data_dir=args.data_dir,
        connector=args.connector,
        events_topic=events_topic,
        results_topic=results_topic,
        watermark_delay_s=args.watermark_delay,
        trigger_interval_s=args.trigger_interval,
    )
    if args.max_lateness >= args.watermark_delay:
        print("warning: --max-lateness is not below --watermark-delay: late events may not count", file=out)
    ensure_topics(args.bootstrap, [events_topic, results_topic], args.partitions, args.replication_factor)
    event_settings = settings_from(args, count)
    print(
        f"topics {events_topic} -> {results_topic}; events: {describe(event_settings)}", file=out, flush=True
    )
    job = StreamingJobProcess(settings)
    job.start()
    try:
        job.wait_for(
            lambda lines: any(x.get("event") == "started" for x in lines), JOB_START_TIMEOUT_S, "start"
        )
        print(
            f"streaming job started (pid {job.process.pid if job.process else '?'}, JVM {job.jvm_pid()}, "
            f"Spark's log {settings.spark_log})",
            file=out,
            flush=True,
        )
        generator = Generator(
            args.bootstrap,
            events_topic,
            event_settings,
            rate=args.rate,
            count=count,
            events_file=settings.data_dir / "events.jsonl",
        )
        thread = threading.Thread(target=generator.run, daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(PRINT_EVERY_S)
                print(status_line(job, generator.stats), file=out, flush=True)
        except KeyboardInterrupt:
            generator.stop()
            thread.join()
            print("interrupted: stopping", file=out)
            return 130
        stats = generator.stats
        if stats.failed:
            print(f"{stats.failed} events not acknowledged: {stats.errors}", file=out)
            return 1
        ends = results.end_offsets(settings.bootstrap, settings.events_topic)
        watermark = reference.final_watermark_ms(generator.produced, settings.watermark_delay_s * 1000)
        print(
            f"waiting for the job to read up to {ends} and reach watermark {format_time(watermark)}", file=out
        )
        waiter = threading.Thread(
            target=job.wait_caught_up, args=(ends, watermark, args.timeout), daemon=True
        )
        waiter.start()
        while waiter.is_alive():
            waiter.join(PRINT_EVERY_S)
            print(status_line(job, None), file=out, flush=True)
    finally:
        code = job.stop()
        print(f"streaming job stopped (exit status {code})", file=out, flush=True)
    print(status_line(job, None), file=out)
    if args.no_check:
        return 0
    ok, report = check(settings, generator.produced)
    print(report, file=out)
    return 0 if ok else 1


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/pipeline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bootstrap", required=True, help="a running kbroker (or any Kafka), HOST:PORT[,…]")
    parser.add_argument("--connector", choices=CONNECTORS, default="kafka", help="(default: kafka)")
    parser.add_argument(
        "--count", type=int, default=6000, help="events to produce; 0: until Ctrl-C (default: 6000)"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path("pipeline-data"), help="(default: ./pipeline-data)"
    )
    parser.add_argument("--events-topic", help="(default: events-SEED)")
    parser.add_argument("--results-topic", help="(default: event-aggregates-SEED)")
    parser.add_argument("--partitions", type=int, default=3, help="of topics created here (default: 3)")
    parser.add_argument(
        "--replication-factor", type=int, default=1, help="of topics created here (default: 1)"
    )
    parser.add_argument("--watermark-delay", type=int, default=120, metavar="SECONDS", help="(default: 120)")
    parser.add_argument("--trigger-interval", type=float, default=2.0, metavar="SECONDS", help="(default: 2)")
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="for the job to catch up (default: 600 s)"
    )
    parser.add_argument(
        "--no-check", action="store_true", help="do not compare the outputs with the reference"
    )
    add_event_arguments(parser)
    # Event time at twenty times the wall clock's pace (100 ms per event at 200 a second), so that a run of half a
    # minute spans ten minutes of windows and the watermark closes most of them before the end.
    parser.set_defaults(rate=200.0, interval_ms=100, max_lateness=60)
    args = parser.parse_args(argv)
    return run(args, out)


if __name__ == "__main__":
    sys.exit(main())
