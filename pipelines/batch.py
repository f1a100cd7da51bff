"""The batch job: a day of events (or any event-time range) from the events topic, as a report.

    python -m pipelines.batch --bootstrap 127.0.0.1:9092 --topic events --date 2026-11-24
    python -m pipelines.batch --bootstrap … --topic events --from 2026-11-24T10:00:00Z --to 2026-11-24T11:00:00Z \\
        --bucket 60 --output report.json

It reads only the part of the topic the range needs, by timestamp: each partition from the first record whose
timestamp is at or after the range's start (`startingTimestamp`; a partition with none starts at its end) to the
first at or after its end plus `--max-lateness` (`endingTimestamp`). The generator stamps each record with its
event time and sends events in order except for late ones, so a record of the range can only come after that end
if it is later than the lateness allows. Then it keeps the events whose event time is in the range, drops the
re-sent copies (by event id) and reports: per time bucket (an hour by default) and event type the events and the
revenue, the totals, and the top users by events. The report is printed, and written as JSON with `--output` (in
the form of pipelines.reference.daily_report, which the tests compare it with).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines import spark as spark_driver
from pipelines.events import format_time
from pipelines.generator import parse_start
from pipelines.streaming import parse_events

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read_range(
    spark: SparkSession,
    connector: str,
    bootstrap: str,
    topic: str,
    from_ms: int,
    to_ms: int,
    max_lateness_ms: int,
) -> DataFrame:
    """The records of the topic that may hold events of [from_ms, to_ms), found by timestamp."""
    return (
        spark.read.format(spark_driver.source_format(connector))
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingTimestamp", str(from_ms))
        .option("startingOffsetsByTimestampStrategy", "latest")
        .option("endingTimestamp", str(to_ms + max_lateness_ms))
        .load()
    )


def report(records: DataFrame, from_ms: int, to_ms: int, bucket_s: int, top: int) -> dict[str, Any]:
    """The report of the de-duplicated events of [from_ms, to_ms) among `records` (the form of
    pipelines.reference.daily_report, plus how many records were read)."""
    from pyspark.sql import functions as F

    values = records.select("value").cache()
    start, end = F.timestamp_millis(F.lit(from_ms)), F.timestamp_millis(F.lit(to_ms))
    events = parse_events(values).where((F.col("event_time") >= start) & (F.col("event_time") < end))
    unique = events.dropDuplicates(["event_id"]).cache()
    try:
        records_read = values.count()
        totals = unique.agg(
            F.count(F.lit(1)).alias("events"),
            F.count_distinct("user_id").alias("users"),
            F.coalesce(F.sum("amount_cents"), F.lit(0)).alias("revenue_cents"),
        ).collect()[0]
        buckets = (
            unique.groupBy(F.window("event_time", f"{bucket_s} seconds").start.alias("bucket"), "event_type")
            .agg(F.count(F.lit(1)).alias("events"), F.sum("amount_cents").alias("revenue_cents"))
            .select(F.unix_millis("bucket").alias("bucket_start_ms"), "event_type", "events", "revenue_cents")
            .orderBy("bucket_start_ms", "event_type")
            .collect()
        )
        users = (
            unique.groupBy("user_id")
            .agg(F.count(F.lit(1)).alias("events"), F.sum("amount_cents").alias("revenue_cents"))
            .orderBy(F.desc("events"), F.asc("user_id"))
            .limit(top)
            .collect()
        )
    finally:
        unique.unpersist()
        values.unpersist()
    return {
        "from_ms": from_ms,
        "to_ms": to_ms,
        "events": totals["events"],
        "users": totals["users"],
        "revenue_cents": totals["revenue_cents"],
        "buckets": [row.asDict() for row in buckets],
        "top_users": [row.asDict() for row in users],
        "records_read": records_read,
    }


def render(result: dict[str, Any], bucket_s: int) -> str:
    """The report as text."""
    lines = [
        f"events from {format_time(result['from_ms'])} to {format_time(result['to_ms'])}: "
        f"{result['events']} events, {result['users']} users, revenue {result['revenue_cents'] / 100:.2f} "
        f"({result['records_read']} records read)",
        "",
        f"per {bucket_s} s:",
        f"{'bucket start':<25} {'event type':<12} {'events':>8} {'revenue':>12}",
    ]
    for row in result["buckets"]:
        lines.append(
            f"{format_time(row['bucket_start_ms']):<25} {row['event_type']:<12} {row['events']:>8} "
            f"{row['revenue_cents'] / 100:>12.2f}"
        )
    lines += ["", "top users:", f"{'user':<8} {'events':>8} {'revenue':>12}"]
    for row in result["top_users"]:
        lines.append(f"{row['user_id']:<8} {row['events']:>8} {row['revenue_cents'] / 100:>12.2f}")
    return "\n".join(lines)


def day_range(day: date) -> tuple[int, int]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return int(start.timestamp() * 1000), int((start + timedelta(days=1)).timestamp() * 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.batch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bootstrap", required=True, help="the Kafka bootstrap servers")
    parser.add_argument("--topic", default="events", help="(default: events)")
    parser.add_argument(
        "--connector", choices=spark_driver.CONNECTORS, default="kafka", help="(default: kafka)"
    )
    parser.add_argument("--date", type=date.fromisoformat, help="a UTC day, YYYY-MM-DD (default: today)")
    parser.add_argument(
        "--from", dest="from_", help="the range's start (ISO 8601 or epoch ms), instead of --date"
    )
    parser.add_argument("--to", help="the range's end, exclusive (with --from)")
    parser.add_argument("--bucket", type=int, default=3600, metavar="SECONDS", help="(default: 3600)")
    parser.add_argument("--top", type=int, default=10, help="users listed (default: 10)")
    parser.add_argument(
        "--max-lateness",
        type=int,
        default=300,
        metavar="SECONDS",
        help="how late an event of the range may be produced after its end (default: 300)",
    )
    parser.add_argument("--output", type=Path, help="write the report here as JSON")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("pipeline-data/batch"),
        help="Spark's log (spark.log) and scratch files (default: ./pipeline-data/batch)",
    )
    args = parser.parse_args(argv)
    if (args.from_ is None) != (args.to is None):
        parser.error("--from and --to go together")
    if args.from_ is not None:
        from_ms, to_ms = parse_start(args.from_), parse_start(args.to)
    else:
        from_ms, to_ms = day_range(args.date or datetime.now(UTC).date())
    try:
        driver = spark_driver.start(
            "kbroker-pipeline-batch",
            args.connector,
            args.work_dir / "spark.log",
            local_dir=args.work_dir / "local",
        )
    except spark_driver.PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        records = read_range(
            driver.spark, args.connector, args.bootstrap, args.topic, from_ms, to_ms, args.max_lateness * 1000
        )
        result = report(records, from_ms, to_ms, args.bucket, args.top)
    finally:
        spark_driver.stop(driver)
    print(render(result, args.bucket))
    if args.output is not None:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
