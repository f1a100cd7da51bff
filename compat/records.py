"""The records every compat scenario produces, and the check of what came back.

Standard library only: the kafka-python 2.0.2 script imports this module inside its own venv.

A record's content is a pure function of its index, so any client (in-process or a subprocess in another
language) can be handed the same records and the consumed result compared field by field. Records travel to
subprocesses as one tab-separated line each (see `to_line`) and come back as JSON objects (see `from_json`).
"""

from __future__ import annotations

import base64
import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Headers = tuple[tuple[str, bytes], ...]

# The start of today (UTC), in milliseconds: fixed for a day, so a rerun produces identical bytes, and recent, so
# that time-based retention (log.retention.hours=168 by default, judged by the records' own timestamps) cannot
# delete a scenario's records under it. A constant date in 2024 did not hold: Apache Kafka's first retention check,
# 30 s after it starts, deleted them between produce and consume.
_DAY_MS = 86_400_000
BASE_TIMESTAMP_MS = int(time.time() * 1000) // _DAY_MS * _DAY_MS


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """What a client is asked to send. partition/timestamp None: the client chooses (partitioner, clock)."""

    index: int
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Consumed:
    """What a client read back."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int


def make_records(
    count: int,
    partitions: int,
    *,
    headers: bool = True,
    null_keys: bool = True,
    null_values: bool = True,
    timestamps: bool = True,
    explicit_partitions: bool = True,
) -> list[Record]:
    """Records spread round-robin over the partitions, with sizes that vary from 0 to ~300 bytes.

    The flags switch off what a client cannot express (kcat has no null key in -K mode, no per-record
    timestamp or header, and picks partitions by key hash).
    """
    records = []
    for i in range(count):
        # Mostly compressible text, with a varying tail so that batches do not all look alike.
        value: bytes | None = b"value-%d-" % i + b"abcdefghij" * (i % 30) + b"%x" % (i * 2654435761 % 2**32)
        if i % 500 == 0:
            value = b""
        elif null_values and i % 777 == 1:
            value = None  # a tombstone
        key: bytes | None = b"key-%d" % i
        if null_keys and i % 1000 == 999:
            key = None
        records.append(
            Record(
                index=i,
                partition=i % partitions if explicit_partitions else None,
                key=key,
                value=value,
                headers=(("index", b"%d" % i), ("empty", b"")) if headers else (),
                timestamp=BASE_TIMESTAMP_MS + i if timestamps else None,
            )
        )
    return records


def _b64(data: bytes | None) -> str:
    return "-" if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes | None:
    return None if text == "-" else base64.b64decode(text)


def to_line(record: Record) -> str:
    """partition, timestamp, key, value, headers; tab-separated; bytes in base64; "-" means null.

    Headers are `name=base64` joined by commas (our header names never hold "," or "=").
    """
    headers = ",".join(f"{name}={_b64(value)}" for name, value in record.headers)
    return "\t".join(
        [
            "-" if record.partition is None else str(record.partition),
            "-" if record.timestamp is None else str(record.timestamp),
            _b64(record.key),
            _b64(record.value),
            headers or "-",
        ]
    )


def from_line(index: int, line: str) -> Record:
    partition, timestamp, key, value, headers = line.rstrip("\n").split("\t")
    return Record(
        index=index,
        partition=None if partition == "-" else int(partition),
        timestamp=None if timestamp == "-" else int(timestamp),
        key=_unb64(key),
        value=_unb64(value),
        headers=()
        if headers == "-"
        else tuple(
            (name, _unb64(data) or b"") for name, data in (h.split("=", 1) for h in headers.split(","))
        ),
    )


def consumed_to_json(record: Consumed) -> str:
    return json.dumps(
        {
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": None if record.key is None else _b64(record.key),
            "value": None if record.value is None else _b64(record.value),
            "headers": [[name, _b64(value)] for name, value in record.headers],
        }
    )


def from_json(obj: dict[str, Any]) -> Consumed:
    """The inverse of consumed_to_json, also used for the Java harness's output (same field names)."""
    key, value = obj["key"], obj["value"]
    return Consumed(
        partition=obj["partition"],
        offset=obj["offset"],
        timestamp=obj["timestamp"],
        key=None if key is None else base64.b64decode(key),
        value=None if value is None else base64.b64decode(value),
        headers=tuple((str(name), base64.b64decode(data)) for name, data in obj["headers"]),
    )


@dataclass(frozen=True, slots=True)
class Ack:
    """A delivery report: where the broker stored a record."""

    index: int
    partition: int
    offset: int


def check_round_trip(
    sent: Sequence[Record],
    consumed: Iterable[Consumed],
    *,
    acks: Sequence[Ack] | None = None,
    timestamp_range: tuple[int, int] | None = None,
    expected_partitions: int | None = None,
) -> None:
    """Assert that `consumed` is exactly `sent`: every record once, dense offsets from 0 in each partition,
    each partition in send order, and every field equal.

    Records are matched to what was sent by their `index` header when present, else by key (so records without
    headers need unique, non-null keys). Records sent with timestamp None must carry one in `timestamp_range`.
    `acks`, when given, must agree with the offsets the consumer saw.
    """
    by_partition: dict[int, list[Consumed]] = defaultdict(list)
    for record in consumed:
        by_partition[record.partition].append(record)
    by_key: dict[bytes | None, Record] = {r.key: r for r in sent if r.key is not None}
    total = sum(len(records) for records in by_partition.values())
    assert total == len(sent), f"consumed {total} records, sent {len(sent)}"
    if expected_partitions is not None:
        assert set(by_partition) <= set(range(expected_partitions)), sorted(by_partition)

    seen: set[int] = set()
    placement: dict[int, tuple[int, int]] = {}
    for partition, records in sorted(by_partition.items()):
        records.sort(key=lambda r: r.offset)
        offsets = [r.offset for r in records]
        assert offsets == list(range(len(records))), (
            f"partition {partition}: offsets not dense from 0; first gap near {_first_gap(offsets)}"
        )
        previous_index = -1
        for got in records:
            header = dict(got.headers).get("index")
            want = sent[int(header)] if header is not None else by_key.get(got.key)
            assert want is not None, f"partition {partition} offset {got.offset}: unknown record {got}"
            where = f"record {want.index} (partition {partition}, offset {got.offset})"
            assert want.index not in seen, f"{where} consumed twice"
            seen.add(want.index)
            assert want.index > previous_index, f"{where} out of send order (after {previous_index})"
            previous_index = want.index
            placement[want.index] = (partition, got.offset)
            if want.partition is not None:
                assert partition == want.partition, f"{where}: sent to partition {want.partition}"
            assert got.key == want.key, f"{where}: key {got.key!r} != {want.key!r}"
            assert got.value == want.value, f"{where}: value {got.value!r} != {want.value!r}"
            assert got.headers == want.headers, f"{where}: headers {got.headers!r} != {want.headers!r}"
            if want.timestamp is not None:
                assert got.timestamp == want.timestamp, (
                    f"{where}: timestamp {got.timestamp} != {want.timestamp}"
                )
            elif timestamp_range is not None:
                low, high = timestamp_range
                assert low <= got.timestamp <= high, (
                    f"{where}: timestamp {got.timestamp} not in {timestamp_range}"
                )

    for ack in acks or ():
        assert placement.get(ack.index) == (ack.partition, ack.offset), (
            f"record {ack.index} acknowledged at {(ack.partition, ack.offset)}, consumed at {placement.get(ack.index)}"
        )


def _first_gap(offsets: list[int]) -> int:
    for expected, offset in enumerate(offsets):
        if offset != expected:
            return expected
    return len(offsets)
