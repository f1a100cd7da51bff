"""The streaming job's output read back without Spark, as reference.py's types, to compare with the reference.

- `parquet_rows`: the rows of the files the Parquet sink committed, i.e. those its log
  (<output>/_spark_metadata) lists, as every Spark reader of that directory sees them. Files an interrupted batch
  left behind are not in the log and not read. Every row is returned, so a window written twice shows twice.
- `topic_records` / `upserts`: the results topic read from the beginning to its end, every record, then the last
  value per key (the at-least-once sink may have sent a window more than once).

The sink's log is a directory of files named by batch id: "N" holds batch N's files, "N.compact" every file up to
batch N (Spark compacts every ten batches and may then delete the older ones). Each file is a version line ("v1")
followed by one JSON object per file: {"path": ..., "action": "add" | "delete", ...}.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from confluent_kafka import Consumer, TopicPartition

from pipelines.events import parse_time
from pipelines.reference import WindowKey, WindowTotals

CONSUME_TIMEOUT_S = 60.0


def committed_files(output: Path) -> list[Path]:
    """The data files the sink's log lists, in batch order."""
    log_dir = output / "_spark_metadata"
    if not log_dir.is_dir():
        return []
    batches: dict[int, Path] = {}
    compacts: dict[int, Path] = {}
    for entry in log_dir.iterdir():
        name = entry.name
        if name.endswith(".compact") and name.removesuffix(".compact").isdigit():
            compacts[int(name.removesuffix(".compact"))] = entry
        elif name.isdigit():
            batches[int(name)] = entry
    base = max(compacts, default=-1)
    logs = ([compacts[base]] if base >= 0 else []) + [batches[n] for n in sorted(batches) if n > base]
    files: dict[str, None] = {}
    for log in logs:
        lines = log.read_text().splitlines()
        if not lines or not lines[0].startswith("v"):
            raise ValueError(f"{log}: not a file sink log (first line {lines[:1]})")
        for line in lines[1:]:
            if not line.strip():
                continue
            entry = json.loads(line)
            if entry.get("action", "add") == "delete":
                files.pop(entry["path"], None)
            else:
                files[entry["path"]] = None
    return [Path(unquote(urlparse(path).path)) for path in files]


@dataclass(frozen=True)
class AggregateRow:
    key: WindowKey
    totals: WindowTotals


def parquet_rows(output: Path) -> list[AggregateRow]:
    """Every row of every committed file."""
    import pyarrow.parquet as pq

    rows = []
    for path in committed_files(output):
        table = pq.read_table(path)
        for record in table.to_pylist():
            rows.append(
                AggregateRow(
                    WindowKey(
                        record["kind"],
                        _millis(record["window_start"]),
                        _millis(record["window_end"]),
                        record["event_type"],
                    ),
                    WindowTotals(record["events"], record["amount_cents"]),
                )
            )
    return rows


def _millis(value: object) -> int:
    """A Parquet timestamp as pyarrow gives it (a datetime, with or without a time zone) in ms since the epoch."""
    from datetime import UTC, datetime

    assert isinstance(value, datetime), value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return round(value.timestamp() * 1000)


def as_table(rows: Iterable[AggregateRow]) -> dict[WindowKey, WindowTotals]:
    """Rows by window; raises if a window has two rows (the file sink writes each window once)."""
    table: dict[WindowKey, WindowTotals] = {}
    counts = Counter(row.key for row in rows)
    twice = [key for key, n in counts.items() if n > 1]
    if twice:
        raise AssertionError(f"{len(twice)} windows written more than once, e.g. {twice[:3]}")
    for row in rows:
        table[row.key] = row.totals
    return dict(sorted(table.items()))


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """partition -> high watermark of a topic, now."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kbroker-pipeline-offsets"})
    try:
        partitions = consumer.list_topics(topic, timeout=CONSUME_TIMEOUT_S).topics[topic].partitions
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=CONSUME_TIMEOUT_S)[1]
            for p in sorted(partitions)
        }
    finally:
        consumer.close()


def topic_records(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every (key, value) of the topic, from the beginning to the end offsets it has now, partition by partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kbroker-pipeline-results-reader",
            "enable.auto.commit": False,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=CONSUME_TIMEOUT_S)
        partitions = sorted(metadata.topics[topic].partitions)
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=CONSUME_TIMEOUT_S)[1]
            for p in partitions
        }
        wanted = {p for p, end in ends.items() if end > 0}
        consumer.assign([TopicPartition(topic, p, 0) for p in sorted(wanted)])
        out: list[tuple[bytes | None, bytes | None]] = []
        positions = dict.fromkeys(wanted, 0)
        deadline = time.monotonic() + CONSUME_TIMEOUT_S
        while any(positions[p] < ends[p] for p in wanted):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: read up to {positions} of {ends} in {CONSUME_TIMEOUT_S} s")
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                raise RuntimeError(f"{topic}: {error}")
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            if offset < ends[partition]:
                out.append((message.key(), message.value()))
            positions[partition] = offset + 1
        return out
    finally:
        consumer.close()


def upserts(records: Iterable[tuple[bytes | None, bytes | None]]) -> dict[WindowKey, WindowTotals]:
    """The last value per key of the results topic, as windows; raises if a key does not name its value's window."""
    last: dict[bytes | None, bytes | None] = {}
    for key, value in records:
        last[key] = value
    table: dict[WindowKey, WindowTotals] = {}
    for key, value in last.items():
        if value is None:
            continue
        row = json.loads(value)
        if key != f"{row['kind']}|{row['window_start']}|{row['event_type']}".encode():
            raise ValueError(f"the key {key!r} does not name the window of {row}")
        window = WindowKey(
            row["kind"], parse_time(row["window_start"]), parse_time(row["window_end"]), row["event_type"]
        )
        table[window] = WindowTotals(row["events"], row["amount_cents"])
    return dict(sorted(table.items()))
