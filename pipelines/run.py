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

Each run has a name (the time it started, e.g. 20261124-100000, or `--name`): its topics are events-NAME and
event-aggregates-NAME, and it writes under pipeline-data/NAME (`--data-dir`): the events produced (events.jsonl),
the job's checkpoints, its Parquet output, the job's progress lines and Spark's log. A fresh name per run keeps the
check honest: a job resumed from an earlier run's checkpoint would have that run's events in its topic and its
windows already written. Event time runs twenty times faster than the wall clock (100 ms per event at 200 a
second, so that the watermark closes windows within seconds), except with `--count 0`, where it follows the clock:
a run without end would otherwise stamp its events ever further in the future.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
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
# Event time per event in a run with an end: at 200 events a second, twenty times the wall clock's pace, so that a
# run of half a minute spans ten minutes of windows and the watermark closes most of them before it ends.
FAST_INTERVAL_MS = 100


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
    name = args.name or datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    events_topic = args.events_topic or f"events-{name}"
    results_topic = args.results_topic or f"event-aggregates-{name}"
    if args.interval_ms is None and count is not None:
        args.interval_ms = FAST_INTERVAL_MS
    settings = StreamingSettings(
        bootstrap=args.bootstrap,
        data_dir=args.data_dir or Path("pipeline-data") / name,
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
        f"run {name}: topics {events_topic} -> {results_topic}, data in {settings.data_dir}\n"
        f"events: {describe(event_settings)}",
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
    # Ctrl-C (or SIGTERM) stops producing and waiting; the job is then stopped as at a normal end, by its pid.
    interrupted = threading.Event()

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        generator.stop()

    previous = {signum: signal.signal(signum, on_interrupt) for signum in (signal.SIGINT, signal.SIGTERM)}
    job = StreamingJobProcess(settings)
    job.start()
    try:
        started = _in_background(
            lambda: job.wait_for(
                lambda lines: any(x.get("event") == "started" for x in lines), JOB_START_TIMEOUT_S, "start"
            )
        )
        if not _wait(started, interrupted, lambda: None):
            return _interrupted(out)
        print(
            f"streaming job started (pid {job.process.pid if job.process else '?'}, JVM {job.jvm_pid()}, "
            f"Spark's log {settings.spark_log})",
            file=out,
            flush=True,
        )
        producing = _in_background(generator.run)
        if not _wait(
            producing, interrupted, lambda: print(status_line(job, generator.stats), file=out, flush=True)
        ):
            return _interrupted(out)
        stats = generator.stats
        if stats.failed:
            print(f"{stats.failed} events not acknowledged: {stats.errors}", file=out)
            return 1
        ends = results.end_offsets(settings.bootstrap, settings.events_topic)
        watermark = reference.final_watermark_ms(generator.produced, settings.watermark_delay_s * 1000)
        print(
            f"waiting for the job to read up to {ends} and reach watermark {format_time(watermark)}", file=out
        )
        waiting = _in_background(lambda: job.wait_caught_up(ends, watermark, args.timeout))
        if not _wait(waiting, interrupted, lambda: print(status_line(job, None), file=out, flush=True)):
            return _interrupted(out)
    except (RuntimeError, TimeoutError) as error:
        print(f"error: {error}", file=out)
        return 1
    finally:
        code = job.stop()
        print(f"streaming job stopped (exit status {code})", file=out, flush=True)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print(status_line(job, None), file=out)
    if args.no_check:
        return 0
    ok, report = check(settings, generator.produced)
    print(report, file=out)
    return 0 if ok else 1


class _Background(threading.Thread):
    """A call run in a thread, its exception kept for the caller."""

    def __init__(self, call: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.call()
        except BaseException as error:
            self.error = error


def _in_background(call: Callable[[], object]) -> _Background:
    thread = _Background(call)
    thread.start()
    return thread


def _wait(thread: _Background, interrupted: threading.Event, tick: Callable[[], None]) -> bool:
    """Wait for `thread`, calling `tick` every PRINT_EVERY_S; False if interrupted first; its exception raised."""
    while thread.is_alive():
        thread.join(PRINT_EVERY_S)
        if interrupted.is_set():
            return False
        tick()
    if thread.error is not None:
        raise thread.error
    return True


def _interrupted(out: TextIO) -> int:
    print("interrupted: stopping", file=out, flush=True)
    return 130


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
    parser.add_argument("--name", help="the run's name (default: the time it starts, YYYYmmdd-HHMMSS)")
    parser.add_argument("--data-dir", type=Path, help="(default: ./pipeline-data/NAME)")
    parser.add_argument("--events-topic", help="(default: events-NAME)")
    parser.add_argument("--results-topic", help="(default: event-aggregates-NAME)")
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
    parser.set_defaults(rate=200.0, max_lateness=60)
    args = parser.parse_args(argv)
    return run(args, out)


if __name__ == "__main__":
    sys.exit(main())
