"""The streaming job: clickstream events in, windowed aggregates out to Parquet and to a results topic.

    python -m pipelines.streaming --bootstrap 127.0.0.1:9092 [--connector kafka|kbroker] [--data-dir DIR]

Two Structured Streaming queries run in one driver, each with its own checkpoint under <data-dir>/checkpoints:

1. `aggregates`: the events topic (Kafka source, from the earliest offset on a first run) → JSON parsed with an
   explicit schema (rows that do not parse are dropped) → a watermark of `--watermark-delay` seconds on the event
   time → `dropDuplicatesWithinWatermark(["event_id"])` → per event type, counts and summed amounts in tumbling
   one-minute windows and in two-minute windows sliding by a minute → Parquet in <data-dir>/aggregates, in append
   mode: each window is written once, when the watermark passes its end. Spark's file sink is exactly-once: a
   micro-batch's files count only once its entry is in the sink's log (<data-dir>/aggregates/_spark_metadata),
   written once per batch id, and a batch replayed after a crash rewrites the same files under the same batch id.
2. `results`: the committed Parquet rows, read back as a stream (Spark's file source reads only the files the sink's
   log lists) → the results topic (Kafka sink), one record per window keyed
   "<kind>|<window start>|<event type>", the row as JSON in the value. The Kafka sink is at-least-once: a batch
   interrupted by a crash is sent again on restart, so a window's record may be there twice; readers take the last
   value per key (an upsert), which equals the Parquet row.

The aggregation is computed once, by the first query; the second only copies its committed output, so both sinks
hold the same rows. Lateness beyond the watermark delay is dropped, as Spark does: an event whose time is more than
the delay behind the largest event time seen may or may not be counted. docs/pipeline.md says more.

Progress goes to stdout as JSON lines, one per micro-batch of each query (and one per idle second), for
pipelines/run.py to read; Spark's own output goes to <data-dir>/spark.log. SIGTERM or SIGINT stops the queries and
the JVM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from pipelines import spark as spark_driver
from pipelines.reference import WINDOWS, WindowSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

AGGREGATES_QUERY = "aggregates"
RESULTS_QUERY = "results"
POLL_INTERVAL_S = 0.5
# The timestamps in the results topic's JSON (the session's time zone is UTC).
ISO_MILLIS = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"


@dataclass(frozen=True)
class StreamingSettings:
    bootstrap: str
    data_dir: Path
    connector: str = "kafka"
    events_topic: str = "events"
    results_topic: str = "event-aggregates"
    watermark_delay_s: int = 300
    trigger_interval_s: float = 5.0
    max_offsets_per_trigger: int = 10_000

    @property
    def output(self) -> Path:
        return self.data_dir / "aggregates"

    @property
    def checkpoints(self) -> Path:
        return self.data_dir / "checkpoints"

    @property
    def spark_log(self) -> Path:
        return self.data_dir / "spark.log"


def event_schema() -> Any:
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    return StructType(
        [
            StructField("event_id", StringType()),
            StructField("user_id", StringType()),
            StructField("event_type", StringType()),
            StructField("page", StringType()),
            StructField("amount_cents", LongType()),
            StructField("event_time", TimestampType()),
        ]
    )


def aggregate_schema() -> Any:
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    return StructType(
        [
            StructField("kind", StringType()),
            StructField("window_start", TimestampType()),
            StructField("window_end", TimestampType()),
            StructField("event_type", StringType()),
            StructField("events", LongType()),
            StructField("amount_cents", LongType()),
        ]
    )


def parse_events(records: DataFrame) -> DataFrame:
    """Kafka records → one row per event (the schema of event_schema); values that are not such JSON are dropped."""
    from pyspark.sql import functions as F

    parsed = records.select(F.from_json(F.col("value").cast("string"), event_schema()).alias("event"))
    return parsed.select("event.*").where(F.col("event_id").isNotNull() & F.col("event_time").isNotNull())


def _interval(ms: int) -> str:
    return f"{ms // 1000} seconds"


def windowed(events: DataFrame, spec: WindowSpec) -> DataFrame:
    """The events with their `spec` windows (one row per event and window, for a sliding window several)."""
    from pyspark.sql import functions as F

    window = F.window("event_time", _interval(spec.size_ms), _interval(spec.slide_ms))
    return events.select(F.lit(spec.kind).alias("kind"), window.alias("window"), "event_type", "amount_cents")


def window_aggregates(events: DataFrame, watermark_delay_s: int) -> DataFrame:
    """De-duplicated events → per window kind, window and event type: events and summed amounts (the schema of
    aggregate_schema). One aggregation over the union of every windowing, each kind one more key, so that one query
    writes them all. (A streaming plan is a tree: the de-duplication below the union runs once per windowing, each
    with its own state, and both drop the same copies.)"""
    from pyspark.sql import functions as F

    deduplicated = events.withWatermark(
        "event_time", f"{watermark_delay_s} seconds"
    ).dropDuplicatesWithinWatermark(["event_id"])
    by_window = windowed(deduplicated, WINDOWS[0])
    for spec in WINDOWS[1:]:
        by_window = by_window.unionByName(windowed(deduplicated, spec))
    return (
        by_window.groupBy("kind", "window", "event_type")
        .agg(F.count(F.lit(1)).alias("events"), F.sum("amount_cents").alias("amount_cents"))
        .select(
            "kind",
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "event_type",
            "events",
            "amount_cents",
        )
    )


def results_records(aggregates: DataFrame) -> DataFrame:
    """Aggregate rows → Kafka records: key "<kind>|<window start>|<event type>", value the row as JSON."""
    from pyspark.sql import functions as F

    start = F.date_format("window_start", ISO_MILLIS)
    value = F.to_json(
        F.struct(
            "kind",
            start.alias("window_start"),
            F.date_format("window_end", ISO_MILLIS).alias("window_end"),
            "event_type",
            "events",
            "amount_cents",
        )
    )
    return aggregates.select(F.concat_ws("|", "kind", start, "event_type").alias("key"), value.alias("value"))


def start_aggregates(spark: SparkSession, settings: StreamingSettings) -> StreamingQuery:
    fmt = spark_driver.source_format(settings.connector)
    records = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", settings.bootstrap)
        .option("subscribe", settings.events_topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(settings.max_offsets_per_trigger))
        .load()
    )
    aggregates = window_aggregates(parse_events(records), settings.watermark_delay_s)
    return (
        aggregates.writeStream.queryName(AGGREGATES_QUERY)
        .format("parquet")
        .outputMode("append")
        .option("path", str(settings.output))
        .option("checkpointLocation", str(settings.checkpoints / AGGREGATES_QUERY))
        .trigger(processingTime=f"{settings.trigger_interval_s} seconds")
        .start()
    )


def start_results(spark: SparkSession, settings: StreamingSettings) -> StreamingQuery:
    fmt = spark_driver.source_format(settings.connector)
    committed = spark.readStream.schema(aggregate_schema()).parquet(str(settings.output))
    return (
        results_records(committed)
        .writeStream.queryName(RESULTS_QUERY)
        .format(fmt)
        .option("kafka.bootstrap.servers", settings.bootstrap)
        .option("topic", settings.results_topic)
        .option("checkpointLocation", str(settings.checkpoints / RESULTS_QUERY))
        .trigger(processingTime=f"{settings.trigger_interval_s} seconds")
        .start()
    )


def sink_log_exists(output: Path) -> bool:
    """Whether the Parquet sink's log directory exists. Spark's file source decides once, at its first listing that
    finds files, whether a directory is a file sink's output (read only what its log lists) or plain files (read
    every file); it must not look before the log exists, or it could take uncommitted files of an interrupted
    batch for data."""
    return (output / "_spark_metadata").is_dir()


def progress_line(query: str, progress: dict[str, Any]) -> dict[str, Any]:
    """One line of our progress output, from a StreamingQueryProgress as JSON."""
    sources = progress.get("sources") or [{}]
    end_offset = sources[0].get("endOffset")
    if isinstance(end_offset, str):
        try:
            end_offset = json.loads(end_offset)
        except ValueError:
            pass
    sink = progress.get("sink") or {}
    return {
        "event": "progress",
        "query": query,
        "batch": progress.get("batchId"),
        "timestamp": progress.get("timestamp"),
        "input_rows": progress.get("numInputRows", 0),
        "output_rows": sink.get("numOutputRows", -1),
        "watermark": (progress.get("eventTime") or {}).get("watermark"),
        "end_offset": end_offset,
        "duration_ms": (progress.get("durationMs") or {}).get("triggerExecution"),
        "state_rows": [operator.get("numRowsTotal") for operator in progress.get("stateOperators") or []],
    }


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class _Reporter:
    """Prints each new progress of a query once: those of recentProgress (the last hundred, oldest first) that
    began after the last one printed (timestamps are the triggers' start times, ISO 8601 in UTC, which sort as
    text)."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}

    def report(self, query: StreamingQuery) -> None:
        name = query.name or ""
        for progress in query.recentProgress:
            raw = json.loads(progress.json)
            timestamp = str(raw.get("timestamp") or "")
            if timestamp > self.last.get(name, ""):
                self.last[name] = timestamp
                emit(progress_line(name, raw))


def run(settings: StreamingSettings) -> int:
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    settings.output.mkdir(parents=True, exist_ok=True)
    driver = spark_driver.start(
        "kbroker-pipeline-streaming",
        settings.connector,
        settings.spark_log,
        local_dir=settings.data_dir / "spark-local",
    )
    # PySpark's SparkContext installs its own SIGINT handler (cancel every job, raise KeyboardInterrupt wherever
    # the main thread is, even inside a call to the JVM): ours again, to stop the queries in order.
    signal.signal(signal.SIGINT, on_signal)
    try:
        queries = [start_aggregates(driver.spark, settings)]
        emit(
            {
                "event": "started",
                "pid": os.getpid(),
                "jvm_pid": driver.jvm_pid,
                "spark_log": str(settings.spark_log),
            }
        )
        reporter = _Reporter()
        while not stopping:
            if len(queries) == 1 and sink_log_exists(settings.output):
                queries.append(start_results(driver.spark, settings))
            for query in queries:
                reporter.report(query)
                if not query.isActive:
                    error = query.exception()
                    emit({"event": "failed", "query": query.name, "error": str(error)})
                    return 1
            time.sleep(POLL_INTERVAL_S)
        for query in queries:
            query.stop()
            reporter.report(query)
    finally:
        spark_driver.stop(driver)
    emit({"event": "stopped"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.streaming",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bootstrap", required=True, help="the Kafka bootstrap servers, HOST:PORT[,HOST:PORT…]"
    )
    parser.add_argument(
        "--connector", choices=spark_driver.CONNECTORS, default="kafka", help="(default: kafka)"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path("pipeline-data"), help="(default: ./pipeline-data)"
    )
    parser.add_argument("--events-topic", default="events", help="(default: events)")
    parser.add_argument("--results-topic", default="event-aggregates", help="(default: event-aggregates)")
    parser.add_argument(
        "--watermark-delay",
        type=int,
        default=300,
        metavar="SECONDS",
        help="how far behind the latest event time an event may be and still count (default: 300)",
    )
    parser.add_argument("--trigger-interval", type=float, default=5.0, metavar="SECONDS", help="(default: 5)")
    parser.add_argument(
        "--max-offsets-per-trigger",
        type=int,
        default=10_000,
        help="records per micro-batch at most (default: 10000)",
    )
    args = parser.parse_args(argv)
    settings = StreamingSettings(
        bootstrap=args.bootstrap,
        data_dir=args.data_dir,
        connector=args.connector,
        events_topic=args.events_topic,
        results_topic=args.results_topic,
        watermark_delay_s=args.watermark_delay,
        trigger_interval_s=args.trigger_interval,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
    )
    try:
        return run(settings)
    except spark_driver.PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
