"""Spark's Kafka source and sink, `format("kafka")` and `format("kbroker")`, through PySpark, against a kbroker, a
3-node kbroker cluster and Apache Kafka 3.9.2, with exact results.

PySpark is pinned in the `test` extra; scripts/test resolves Spark's own connector (spark-sql-kafka-0-10 at the
installed PySpark's version) with mvn once into ~/.cache/kbroker/spark-kafka (compat/spark/install.py), and the
scenarios hand Spark the jars of it that PySpark does not ship. One SparkSession (local[2], compat/spark/session.py)
serves the whole test session; every scenario makes its own topics and checkpoint directories.

The targets are a kbroker, Apache Kafka 3.9.2 (the reference) and a 3-node kbroker cluster whose topics
are created at replication factor 3 (the `kbroker_cluster` mark). Test data is produced with confluent-kafka where
the scenario reads (so that a source is tested on its own, with timestamps of our choosing), with Spark's sink where
the scenario writes.

Each scenario takes the data source's name from `source_format` and runs for both connectors: Spark's own "kafka"
and kbroker's "kbroker" (kbroker/spark/, a Python data source over confluent-kafka; docs/spark.md), so that any
difference between them shows. The options used are those of Spark's Kafka integration guide
(`kafka.bootstrap.servers`, `subscribe`, `subscribePattern`, `assign`, `startingOffsets`, `endingOffsets`,
`startingOffsetsByTimestamp`, `endingOffsetsByTimestamp`, `startingTimestamp`, `endingTimestamp`,
`startingOffsetsByTimestampStrategy`, `includeHeaders`, `minPartitions`, `maxRecordsPerPartition`,
`maxOffsetsPerTrigger`, `failOnDataLoss`, `topic`, and the client settings `kafka.isolation.level` and
`kafka.compression.type`; read_committed is checked against transactions written by confluent-kafka); none of them
is peculiar to one connector. Batch writes use `mode("append")`, which Spark
requires of a Python data source and which means the same to its own sink as its default.

Run alone: `scripts/test compat/test_spark.py` (`--kafka none`: the kbroker targets only).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from confluent_kafka import Consumer, Message, Producer
from confluent_kafka import TopicPartition as ClientTopicPartition
from kafka.partitioner.default import murmur2

from compat.spark.install import (
    SCALA,
    artifact_name,
    install,
    pyspark_jars,
    pyspark_version,
)
from compat.target import Target

if TYPE_CHECKING:  # pyspark is imported by the session fixture, which says so when it is missing
    from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

# One Apache Kafka (3.9.2, the release Spark's connector's Java client belongs to) is the reference: the scenarios
# cost Spark jobs, and 4.3.1 answered them alike (checked 2026-11 before it was dropped from CI to save its time).
pytestmark = [
    pytest.mark.kbroker_cluster,
    pytest.mark.only_targets("kbroker", "kbroker-cluster", "kafka-3.9.2"),
    pytest.mark.timeout(300),
]

# The data sources under test, by the name given to format(): Spark's own connector, and kbroker's Python one
# (kbroker/spark/, registered in the session by kbroker.spark.register).
FORMATS = ["kafka", "kbroker"]
# A streaming query with availableNow stops by itself once it has read what was there when it started.
QUERY_TIMEOUT_S = 120
# The source's timestampType column: CreateTime (0) or LogAppendTime (1).
CREATE_TIME = 0
LOG_APPEND_TIME = 1

Headers = tuple[tuple[str, bytes | None], ...]


class Rec(NamedTuple):
    """One row of the Kafka source, in plain Python values."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers | None
    timestamp: int  # ms since the epoch
    timestamp_type: int


class Seed(NamedTuple):
    """A record to produce: its partition, key, value, headers and CreateTime (None: the producer's clock)."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()
    timestamp: int | None = None


# ---- fixtures ---------------------------------------------------------------------------------------------------


@pytest.fixture(params=FORMATS, ids=[f"format={name}" for name in FORMATS])
def source_format(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


# ---- helpers ----------------------------------------------------------------------------------------------------


def produce(target: Target, topic: str, seeds: Sequence[Seed]) -> list[tuple[int, int]]:
    """Produce in order (idempotent, acks=all) and return each record's (partition, offset)."""
    producer = Producer({"bootstrap.servers": target.bootstrap, "enable.idempotence": True, "linger.ms": 5})
    acks: list[tuple[int, int] | None] = [None] * len(seeds)
    errors: list[object] = []

    def on_delivery(index: int) -> Callable[[object, Message], None]:
        def delivered(error: object, message: Message) -> None:
            if error is not None:
                errors.append(error)
            else:
                partition, offset = message.partition(), message.offset()
                assert partition is not None
                assert offset is not None
                acks[index] = (partition, offset)

        return delivered

    for index, seed in enumerate(seeds):
        options: dict[str, Any] = {"partition": seed.partition, "headers": list(seed.headers)}
        if seed.timestamp is not None:
            options["timestamp"] = seed.timestamp
        producer.produce(topic, seed.value, seed.key, on_delivery=on_delivery(index), **options)
    assert producer.flush(60) == 0, "records still unsent after 60 s"
    assert errors == []
    done = [ack for ack in acks if ack is not None]
    assert len(done) == len(seeds), acks
    return done


def reader(spark: SparkSession, source_format: str, target: Target) -> DataFrameReader:
    """spark.read on the target, headers included."""
    return (
        spark.read.format(source_format)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("includeHeaders", "true")
    )


def batch_writer(frame: DataFrame, source_format: str, target: Target) -> DataFrameWriter:
    """frame.write in append mode: Spark's default mode (ErrorIfExists) means the same to its own Kafka sink, but
    Spark refuses it for every Python data source, format("kbroker") included (docs/spark.md)."""
    return (
        frame.write.format(source_format).mode("append").option("kafka.bootstrap.servers", target.bootstrap)
    )


def stream_reader(spark: SparkSession, source_format: str, target: Target) -> DataStreamReader:
    return (
        spark.readStream.format(source_format)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("includeHeaders", "true")
    )


def records(frame: DataFrame) -> list[Rec]:
    """A source DataFrame's rows as Recs, sorted by topic, partition and offset."""
    rows = frame.selectExpr(
        "topic",
        "partition",
        "offset",
        "key",
        "value",
        "headers",
        "unix_millis(timestamp) AS ts",
        "timestampType",
    ).collect()
    return sorted(
        Rec(
            row.topic,
            row.partition,
            row.offset,
            None if row.key is None else bytes(row.key),
            None if row.value is None else bytes(row.value),
            None
            if row.headers is None
            else tuple((h.key, None if h.value is None else bytes(h.value)) for h in row.headers),
            row.ts,
            row.timestampType,
        )
        for row in rows
    )


def expected(topic: str, seeds: Sequence[Seed], acks: Sequence[tuple[int, int]]) -> list[Rec]:
    """The Recs the source should give for records produced with explicit timestamps."""
    out = []
    for seed, (partition, offset) in zip(seeds, acks, strict=True):
        assert seed.timestamp is not None
        headers = seed.headers or None
        out.append(Rec(topic, partition, offset, seed.key, seed.value, headers, seed.timestamp, CREATE_TIME))
    return sorted(out)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def run_available_now(writer: DataStreamWriter, checkpoint: Path) -> None:
    """Start a streaming query with trigger(availableNow=True) and wait until it has stopped by itself."""
    query = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(QUERY_TIMEOUT_S), f"the query still ran after {QUERY_TIMEOUT_S} s"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()


def collect_batches(frame: DataFrame, checkpoint: Path) -> dict[int, list[Rec]]:
    """Run a streaming source DataFrame with availableNow into foreachBatch: batch id -> its records."""
    batches: dict[int, list[Rec]] = {}

    def keep(batch: DataFrame, batch_id: int) -> None:
        batches[batch_id] = records(batch)

    run_available_now(frame.writeStream.foreachBatch(keep), checkpoint)
    return batches


def offsets(recs: Sequence[Rec]) -> dict[int, list[int]]:
    """partition -> the offsets read there."""
    out: dict[int, list[int]] = {}
    for rec in recs:
        out.setdefault(rec.partition, []).append(rec.offset)
    return out


# ---- batch ------------------------------------------------------------------------------------------------------

# Keys and values as bytes (not all of them UTF-8), null keys and values, headers: none, one, a repeated key, a
# null value.
WRITE_ROWS: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = [
    (b"k0", b"v0", [], 0),
    (None, b"no key", [("h", b"1")], 1),
    (b"k2", None, [("dup", b"a"), ("dup", b"b")], 2),
    (b"\x00\xff", b"\xfe\x00binary", [("null-value", None)], 0),
    (None, None, [], 1),
    (b"k5", b"", [("empty", b"")], 2),
    (b"k6", b"v6", [], 0),
]
WRITE_SCHEMA = "key binary, value binary, headers array<struct<key: string, value: binary>>, partition int"


def test_batch_write_and_read_back(
    spark: SparkSession, source_format: str, target: Target, tmp_path: Path
) -> None:
    """The sink writes keys, null keys and values, and headers to the partitions named (in zstd batches); the
    source reads exactly them back, at consecutive offsets in write order, stamped with CreateTime."""
    topic = target.topic("spark-batch")
    target.create_topic(topic, 3)
    before = now_ms()
    # One Spark partition: a single task writes the rows, in order.
    frame = spark.createDataFrame(WRITE_ROWS, WRITE_SCHEMA).coalesce(1)
    batch_writer(frame, source_format, target).option("topic", topic).option(
        "kafka.compression.type", "zstd"
    ).save()
    after = now_ms()

    read = records(reader(spark, source_format, target).option("subscribe", topic).load())

    next_offset = [0, 0, 0]
    want = []
    for key, value, headers, partition in WRITE_ROWS:
        want.append((topic, partition, next_offset[partition], key, value, tuple(headers) or None))
        next_offset[partition] += 1
    assert [rec[:6] for rec in read] == sorted(want)
    assert {rec.timestamp_type for rec in read} == {CREATE_TIME}
    assert all(before <= rec.timestamp <= after for rec in read), (before, [r.timestamp for r in read], after)


def test_sink_routes_by_partition_topic_and_key(
    spark: SparkSession, source_format: str, target: Target
) -> None:
    """The sink's `partition` column picks the partition; where it is null the key's murmur2 hash does (the Java
    client's default partitioner); a `topic` column routes each row to its own topic. (Batches in snappy.)"""
    first, second = target.topic("spark-route-a"), target.topic("spark-route-b")
    target.create_topic(first, 4)
    target.create_topic(second, 2)
    rows = [
        (first, b"x", b"0", 3),
        (first, b"x", b"1", 1),
        (second, b"y", b"2", 1),
        (first, b"key-a", b"3", None),
        (first, b"key-b", b"4", None),
        (first, b"key-a", b"5", None),
        (second, b"key-c", b"6", None),
        (first, b"x", b"7", 3),
    ]
    frame = spark.createDataFrame(rows, "topic string, key binary, value binary, partition int").coalesce(1)
    batch_writer(frame, source_format, target).option("kafka.compression.type", "snappy").save()

    read = records(reader(spark, source_format, target).option("subscribe", f"{first},{second}").load())

    sizes = {first: 4, second: 2}
    next_offset: dict[tuple[str, int], int] = {}
    want = []
    for topic, key, value, partition in rows:
        where = partition if partition is not None else (murmur2(key) & 0x7FFFFFFF) % sizes[topic]
        offset = next_offset.get((topic, where), 0)
        next_offset[(topic, where)] = offset + 1
        want.append((topic, where, offset, key, value))
    assert [rec[:5] for rec in read] == sorted(want)


def three_partitions_of_five(topic: str, base: int) -> list[Seed]:
    """Five records in each of three partitions, value b"p<partition>-<i>", a second apart from `base`."""
    return [
        Seed(p, f"k{i}".encode(), f"p{p}-{i}".encode(), (("i", str(i).encode()),), base + i * 1000)
        for p in range(3)
        for i in range(5)
    ]


def test_starting_and_ending_offsets_as_json(spark: SparkSession, source_format: str, target: Target) -> None:
    topic = target.topic("spark-offsets")
    target.create_topic(topic, 3)
    seeds = three_partitions_of_five(topic, now_ms() - 60_000)
    acks = produce(target, topic, seeds)
    assert acks == [(p, i) for p in range(3) for i in range(5)]

    starting = {topic: {"0": 1, "1": 2, "2": -2}}  # -2: earliest
    ending = {topic: {"0": 4, "1": -1, "2": 2}}  # -1: latest; the end is exclusive
    read = records(
        reader(spark, source_format, target)
        .option("subscribe", topic)
        .option("startingOffsets", json.dumps(starting))
        .option("endingOffsets", json.dumps(ending))
        # Ranges split into several tasks, each starting to fetch inside a record batch.
        .option("minPartitions", "6")
        # ListOffsets and Fetch at isolation level 1 (no transactions in this topic: the same records).
        .option("kafka.isolation.level", "read_committed")
        .load()
    )

    assert offsets(read) == {0: [1, 2, 3], 1: [2, 3, 4], 2: [0, 1]}
    assert read == [rec for rec in expected(topic, seeds, acks) if rec.offset in offsets(read)[rec.partition]]


def test_read_committed_reads_only_committed_transactions(
    spark: SparkSession, source_format: str, target: Target
) -> None:
    """kafka.isolation.level=read_committed: a committed transaction's rows, never an aborted one's, and nothing of a
    transaction still open (nor after it: the read ends at the last stable offset); read_uncommitted reads them all."""
    topic = target.topic("spark-txn")
    target.create_topic(topic, 2)
    producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": f"spark-{topic}"})
    producer.init_transactions(60)

    def transaction(prefix: bytes, end: Callable[[float], None] | None) -> None:
        producer.begin_transaction()
        for i in range(6):
            producer.produce(topic, value=prefix + b"%d" % i, partition=i % 2)
        producer.flush(60)
        if end is not None:
            end(60)

    transaction(b"committed-", producer.commit_transaction)
    transaction(b"aborted-", producer.abort_transaction)
    transaction(b"open-", None)

    def values(isolation: str) -> list[bytes]:
        frame = reader(spark, source_format, target).option("subscribe", topic)
        frame = frame.option("kafka.isolation.level", isolation)
        return sorted(rec.value or b"" for rec in records(frame.load()))

    committed = sorted(b"committed-%d" % i for i in range(6))
    assert values("read_committed") == committed
    assert values("read_uncommitted") == sorted(
        committed + [b"aborted-%d" % i for i in range(6)] + [b"open-%d" % i for i in range(6)]
    )
    producer.commit_transaction(60)
    assert values("read_committed") == sorted(committed + [b"open-%d" % i for i in range(6)])


def test_offsets_by_timestamp(spark: SparkSession, source_format: str, target: Target) -> None:
    """Starting and ending offsets by timestamp resolve to the first record at or after it (ListOffsets by
    timestamp); where no record is that late, an ending offset is the latest and a starting one follows
    startingOffsetsByTimestampStrategy."""
    topic = target.topic("spark-timestamps")
    target.create_topic(topic, 2)
    base = now_ms() - 60_000
    # partition 0 at base + 0, 1, 2, 3, 4 s; partition 1 ten seconds later
    seeds = [
        Seed(p, None, f"p{p}-{i}".encode(), (), base + p * 10_000 + i * 1000)
        for p in range(2)
        for i in range(5)
    ]
    want = expected(topic, seeds, produce(target, topic, seeds))

    def read(**options: str) -> dict[int, list[int]]:
        frame = reader(spark, source_format, target).option("subscribe", topic)
        for name, value in options.items():
            frame = frame.option(name, value)
        got = records(frame.load())
        assert got == [rec for rec in want if rec.offset in offsets(got).get(rec.partition, [])]
        return offsets(got)

    # per partition: 1.5 s falls between offsets 1 and 2; 13 s is exactly offset 3's; 3.5 s -> 4; past the end -> 5
    by_partition = read(
        startingOffsetsByTimestamp=json.dumps({topic: {"0": base + 1500, "1": base + 13_000}}),
        endingOffsetsByTimestamp=json.dumps({topic: {"0": base + 3500, "1": base + 60_000}}),
    )
    assert by_partition == {0: [2, 3], 1: [3, 4]}
    # one timestamp for every partition
    assert read(startingTimestamp=str(base + 2500), endingTimestamp=str(base + 12_500)) == {
        0: [3, 4],
        1: [0, 1, 2],
    }
    # no record of partition 0 is as late as 4.5 s after base: it starts at its latest offset
    assert read(startingTimestamp=str(base + 4500), startingOffsetsByTimestampStrategy="latest") == {
        1: [0, 1, 2, 3, 4]
    }


def test_subscribe_pattern(spark: SparkSession, source_format: str, target: Target) -> None:
    """subscribePattern reads every topic whose name matches, and no other. (Spark's driver looks for the pattern
    anywhere in a name, Scala's Regex.findFirstIn, where its executors' consumers match whole names: anchored,
    both agree.)"""
    prefix = target.topic("spark-pattern")
    matching = [f"{prefix}-a", f"{prefix}-b"]
    others = [f"{prefix}_c", f"x{prefix}-d"]
    for topic in [*matching, *others]:
        target.create_topic(topic, 2)
    base = now_ms() - 60_000
    want = []
    for n, topic in enumerate([*matching, *others]):
        seeds = [Seed(p, None, f"{topic}/{p}".encode(), (), base + n) for p in range(2)]
        acks = produce(target, topic, seeds)
        if topic in matching:
            want += expected(topic, seeds, acks)

    read = records(
        reader(spark, source_format, target).option("subscribePattern", f"^{re.escape(prefix)}-.*$").load()
    )

    assert read == sorted(want)


def test_assign(spark: SparkSession, source_format: str, target: Target) -> None:
    """assign reads the partitions named and no other."""
    topic = target.topic("spark-assign")
    target.create_topic(topic, 3)
    seeds = three_partitions_of_five(topic, now_ms() - 60_000)
    want = expected(topic, seeds, produce(target, topic, seeds))

    read = records(reader(spark, source_format, target).option("assign", json.dumps({topic: [0, 2]})).load())

    assert read == [rec for rec in want if rec.partition in (0, 2)]


# ---- streaming --------------------------------------------------------------------------------------------------


def test_available_now_with_max_offsets_per_trigger(
    spark: SparkSession, source_format: str, target: Target, tmp_path: Path
) -> None:
    """trigger(availableNow=True) reads what is there in micro-batches of at most maxOffsetsPerTrigger records,
    split across the partitions in proportion to what each has left, then stops."""
    topic = target.topic("spark-trigger")
    target.create_topic(topic, 2)
    seeds = [
        Seed(p, None, f"p{p}-{i}".encode(), (), now_ms() - 60_000 + i) for p in range(2) for i in range(10)
    ]
    want = expected(topic, seeds, produce(target, topic, seeds))

    frame = (
        stream_reader(spark, source_format, target)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "6")
        .load()
    )
    batches = collect_batches(frame, tmp_path / "checkpoint")

    # 20 records, 6 a batch, 3 from each partition: 6, 6, 6, then the last one of each
    assert {batch_id: offsets(recs) for batch_id, recs in batches.items()} == {
        0: {0: [0, 1, 2], 1: [0, 1, 2]},
        1: {0: [3, 4, 5], 1: [3, 4, 5]},
        2: {0: [6, 7, 8], 1: [6, 7, 8]},
        3: {0: [9], 1: [9]},
    }
    assert sorted(rec for recs in batches.values() for rec in recs) == want


def test_restart_from_checkpoint_reads_only_new_rows(
    spark: SparkSession, source_format: str, target: Target, tmp_path: Path
) -> None:
    """A query started again on its checkpoint reads exactly the records produced since, in the next batch."""
    topic = target.topic("spark-restart")
    target.create_topic(topic, 2)
    base = now_ms() - 60_000
    first = [Seed(p, None, f"first-{p}-{i}".encode(), (), base + i) for p in range(2) for i in range(4)]
    second = [Seed(0, None, b"second-0", (), base + 10), Seed(1, b"k", None, (("h", b"v"),), base + 11)]
    second.append(Seed(0, None, b"second-1", (), base + 12))
    checkpoint = tmp_path / "checkpoint"

    def run() -> dict[int, list[Rec]]:
        frame = stream_reader(spark, source_format, target).option("subscribe", topic)
        # startingOffsets only counts for a query's first run; later ones start where the checkpoint says
        return collect_batches(frame.option("startingOffsets", "earliest").load(), checkpoint)

    want_first = expected(topic, first, produce(target, topic, first))
    assert run() == {0: want_first}
    want_second = expected(topic, second, produce(target, topic, second))
    assert offsets(want_second) == {0: [4, 5], 1: [4]}
    assert run() == {1: want_second}


def test_streaming_copy_with_the_kafka_sink(
    spark: SparkSession, source_format: str, target: Target, tmp_path: Path
) -> None:
    """A streaming query copies a topic into another through the sink: keys, values (null ones too), headers and
    partitions kept, each partition's records in order (in lz4 batches); the copy's topic stamps them with
    LogAppendTime."""
    source, copy = target.topic("spark-copy-from"), target.topic("spark-copy-to")
    target.create_topic(source, 3)
    target.create_topic(copy, 3, {"message.timestamp.type": "LogAppendTime"})
    base = now_ms() - 60_000
    seeds = [
        Seed(
            p,
            None if i == 1 else f"k{i}".encode(),
            None if i == 2 else f"{p}/{i}".encode(),
            headers,
            base + i,
        )
        for p in range(3)
        for i, headers in enumerate([(), (("a", b"1"),), (("a", b"1"), ("a", None)), (("b", b""),)])
    ]
    want = expected(source, seeds, produce(target, source, seeds))

    frame = (
        stream_reader(spark, source_format, target)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "value", "headers", "partition")
    )
    writer = (
        frame.writeStream.format(source_format)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("topic", copy)
        .option("kafka.compression.type", "lz4")
    )
    before = now_ms()
    run_available_now(writer, tmp_path / "checkpoint")
    after = now_ms()

    read = records(reader(spark, source_format, target).option("subscribe", copy).load())
    assert [rec[1:6] for rec in read] == [rec[1:6] for rec in want]
    assert {rec.topic for rec in read} == {copy}
    assert all(before <= rec.timestamp <= after and rec.timestamp_type == LOG_APPEND_TIME for rec in read)


def test_restart_in_the_first_batch(
    spark: SparkSession, source_format: str, target: Target, tmp_path: Path
) -> None:
    """A query starting at `latest` that fails in its first micro-batch (Spark runs it at once, empty) and is
    restarted after more records came runs that batch again from the same start, then reads every record since: the
    start is kept with the checkpoint, not asked for anew (it would now be later, and records lost)."""
    topic = target.topic("spark-first-batch")
    target.create_topic(topic, 1)
    base = now_ms() - 60_000

    def seeds(values: range) -> list[Seed]:
        return [Seed(0, None, f"v{i}".encode(), (), base + i) for i in values]

    produce(target, topic, seeds(range(5)))  # before the query: not read
    checkpoint = tmp_path / "checkpoint"

    def failing(batch: DataFrame, batch_id: int) -> None:
        raise RuntimeError(f"batch {batch_id} fails on purpose")

    frame = stream_reader(spark, source_format, target).option("subscribe", topic).load()
    query = frame.writeStream.foreachBatch(failing).option("checkpointLocation", str(checkpoint)).start()
    try:
        with pytest.raises(Exception, match="batch 0 fails on purpose"):
            query.awaitTermination(QUERY_TIMEOUT_S)
    finally:
        query.stop()

    later = seeds(range(5, 10))
    want = expected(topic, later, produce(target, topic, later))
    frame = stream_reader(spark, source_format, target).option("subscribe", topic).load()
    assert collect_batches(frame, checkpoint) == {0: [], 1: want}


# Kafka 4's smallest segment.bytes.
SEGMENT_BYTES = 1024 * 1024


def wait_log_start_above(target: Target, topic: str, offset: int, timeout: float = 60.0) -> int:
    """Partition 0's log start offset once retention has moved it past `offset`."""
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "spark-watermarks"})
    try:
        deadline = time.monotonic() + timeout
        while True:
            low, _ = consumer.get_watermark_offsets(ClientTopicPartition(topic, 0), timeout=10)
            if low > offset:
                return int(low)
            assert time.monotonic() < deadline, (
                f"retention did not move the log start of {topic} past {offset}"
            )
            time.sleep(0.1)
    finally:
        consumer.close()


def test_fail_on_data_loss(spark: SparkSession, source_format: str, target: Target, tmp_path: Path) -> None:
    """Retention deletes the records a read starts at: failOnDataLoss=true (the default) fails the batch read and
    the streaming query, saying so; false reads on from the log start offset. (compat/conftest.py runs the
    targets' retention every half second.)"""
    topic = target.topic("spark-lost")
    # 1,500 records a day old in 1 MiB segments, kept an hour: each full segment is deleted as soon as it rolls.
    # The last records are new, so that the last segment stays (retention deletes an expired active segment too).
    target.create_topic(topic, 1, {"segment.bytes": str(SEGMENT_BYTES), "retention.ms": "3600000"})
    old, new = now_ms() - 86_400_000, now_ms()
    count = 1510
    produce(
        target, topic, [Seed(0, None, b"x" * 1000, (), old + i if i < 1500 else new) for i in range(count)]
    )
    log_start = wait_log_start_above(target, topic, 0)
    assert log_start < 1500
    from_zero = json.dumps({topic: {"0": 0}})

    def batch(**options: str) -> dict[int, list[int]]:
        frame = (
            reader(spark, source_format, target)
            .option("subscribe", topic)
            .option("startingOffsets", from_zero)
        )
        for name, value in options.items():
            frame = frame.option(name, value)
        return offsets(records(frame.load()))

    with pytest.raises(Exception, match="Some data may have been lost"):
        batch()
    assert batch(failOnDataLoss="false") == {0: list(range(log_start, count))}

    def stream(checkpoint: Path, **options: str) -> dict[int, dict[int, list[int]]]:
        frame = (
            stream_reader(spark, source_format, target)
            .option("subscribe", topic)
            .option("startingOffsets", from_zero)
        )
        for name, value in options.items():
            frame = frame.option(name, value)
        return {
            batch_id: offsets(recs) for batch_id, recs in collect_batches(frame.load(), checkpoint).items()
        }

    with pytest.raises(Exception, match="Some data may have been lost"):
        stream(tmp_path / "failing")
    assert stream(tmp_path / "lenient", failOnDataLoss="false") == {0: {0: list(range(log_start, count))}}


def test_tasks_per_read(spark: SparkSession, source_format: str, target: Target) -> None:
    """One task per partition; minPartitions asks for more (the large ranges cut in proportion),
    maxRecordsPerPartition cuts every range longer than it; the records read are the same. Without includeHeaders
    there is no headers column. (maxRecordsPerPartition is given offsets here: Spark's own connector judges a range
    from `earliest` to `latest` by its unresolved ends and never cuts it, docs/spark.md.)"""
    topic = target.topic("spark-tasks")
    target.create_topic(topic, 3)
    seeds = three_partitions_of_five(topic, now_ms() - 60_000)
    want = expected(topic, seeds, produce(target, topic, seeds))

    def tasks(**options: str) -> int:
        frame = reader(spark, source_format, target).option("subscribe", topic)
        for name, value in options.items():
            frame = frame.option(name, value)
        loaded = frame.load()
        assert records(loaded) == want
        count: int = loaded.rdd.getNumPartitions()
        return count

    assert tasks() == 3
    assert tasks(minPartitions="6") == 6
    whole = {
        "startingOffsets": json.dumps({topic: {str(p): 0 for p in range(3)}}),
        "endingOffsets": json.dumps({topic: {str(p): 5 for p in range(3)}}),
    }
    assert tasks(maxRecordsPerPartition="2", **whole) == 9  # each partition's 5 records in 3 parts
    plain = spark.read.format(source_format).option("kafka.bootstrap.servers", target.bootstrap)
    assert plain.option("subscribe", topic).load().columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]


def test_refused_options(spark: SparkSession, source_format: str, target: Target) -> None:
    """What Spark's connector refuses is refused, with its explanation."""
    topic = target.topic("spark-refused")
    target.create_topic(topic, 1)

    def read(**options: str) -> None:
        frame = spark.read.format(source_format).option("kafka.bootstrap.servers", target.bootstrap)
        for name, value in options.items():
            frame = frame.option(name, value)
        frame.load().collect()

    with pytest.raises(Exception, match=r"option 'auto\.offset\.reset' is not supported"):
        read(subscribe=topic, **{"kafka.auto.offset.reset": "earliest"})
    with pytest.raises(Exception, match="Only one of the following options can be specified"):
        read(subscribe=topic, assign=json.dumps({topic: [0]}))
    with pytest.raises(Exception, match="starting offset can't be latest for batch queries"):
        read(subscribe=topic, startingOffsets="latest")
    # (Spark refuses it itself before its own connector is asked; a Python data source is asked, and refuses)
    with pytest.raises(
        Exception, match=r"Kafka source has a fixed schema|USER_SPECIFIED_AND_ACTUAL_SCHEMA_MISMATCH"
    ):
        spark.read.format(source_format).schema("value binary").option(
            "kafka.bootstrap.servers", target.bootstrap
        ).option("subscribe", topic).load().collect()
    frame = spark.createDataFrame([(1,)], "value int")
    with pytest.raises(Exception, match="value attribute unsupported type int"):
        batch_writer(frame, source_format, target).option("topic", topic).save()
    frame = spark.createDataFrame([(b"v",)], "value binary")
    with pytest.raises(Exception, match="topic option required when no 'topic' attribute is present"):
        batch_writer(frame, source_format, target).save()


# ---- set-up -----------------------------------------------------------------------------------------------------


def test_spark_gets_only_the_connector_jars_pyspark_lacks(spark_connector_jars: list[Path]) -> None:
    """Of the connector's runtime dependencies, Spark is handed those PySpark does not ship (a second copy of
    scala-library or hadoop-client at another version would be a classpath clash waiting to happen)."""
    jars = spark_connector_jars
    assert {artifact_name(jar.name) for jar in jars} == {
        f"spark-sql-kafka-0-10_{SCALA}",
        f"spark-token-provider-kafka-0-10_{SCALA}",
        "kafka-clients",
        "commons-pool2",
    }
    assert {jar.parent for jar in jars} == {install(pyspark_version())}
    shipped = {artifact_name(jar.name) for jar in pyspark_jars().glob("*.jar")}
    everything = {artifact_name(jar.name) for jar in install(pyspark_version()).glob("*.jar")}
    assert {"scala-library", "hadoop-client-api", "hadoop-client-runtime"} <= everything & shipped
