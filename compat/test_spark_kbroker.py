"""`format("kbroker")` (kbroker/spark/): Spark's Kafka source and sink in pure Python, through real PySpark, against
every target (a kbroker, Apache Kafka 3.9.2 and 4.3.1), with exact results.

One SparkSession (local[2]) serves the module; each scenario makes its own topics and checkpoint directories.
Records a scenario reads are produced with confluent-kafka at timestamps of its choosing, so the source is checked
on its own; what the sink writes is read back with the source and checked record by record.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ClientTopicPartition
from kafka.partitioner.default import murmur2

from compat.target import Target
from tests.conftest import missing_tool

pytestmark = pytest.mark.timeout(300)

FORMAT = "kbroker"
QUERY_TIMEOUT_S = 120.0
CREATE_TIME = 0  # Spark's timestampType of CreateTime

Headers = tuple[tuple[str, bytes | None], ...]


class Rec(NamedTuple):
    """One row of the source, in plain Python values."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers | None
    timestamp: int  # ms
    timestamp_type: int


class Seed(NamedTuple):
    """A record to produce: partition, key, value, headers, CreateTime in ms."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int


# ---- the SparkSession ------------------------------------------------------------------------------------------

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.app.name": "kbroker-format",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.memory": "1g",
    # the Python workers are this interpreter, which has kbroker and its `spark` extra installed
    "spark.pyspark.python": sys.executable,
    "spark.pyspark.driver.python": sys.executable,
}


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """PySpark in local mode with format("kbroker") registered; its JVM is stopped by pid."""
    if importlib.util.find_spec("pyspark") is None:
        missing_tool("pyspark is not installed (the `spark` extra, part of the `test` extra)")
    if shutil.which("java") is None:
        missing_tool("java is not installed (apt package openjdk-17-jdk-headless), needed by Spark")
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    import kbroker.spark

    work = tmp_path_factory.mktemp("spark-kbroker")
    conf = SparkConf(loadDefaults=False)
    for key, value in SPARK_CONF.items():
        conf.set(key, value)
    conf.set("spark.local.dir", str(work / "local"))
    conf.set("spark.sql.warehouse.dir", str(work / "warehouse"))
    conf.set("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={work}")
    # The JVM inherits this environment: without SPARK_LOCAL_* Spark advertises the host's first non-loopback
    # address. PySpark reads PYSPARK_PYTHON when the SparkContext starts, for the Python processes that plan a
    # Python data source's reads and writes (they do not look at spark.pyspark.python).
    environment = pytest.MonkeyPatch()
    environment.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    environment.setenv("SPARK_LOCAL_HOSTNAME", "127.0.0.1")
    environment.setenv("PYSPARK_PYTHON", sys.executable)
    log_path = work / "spark.log"
    try:
        with log_path.open("ab") as log:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": subprocess.STDOUT})  # type: ignore[no-untyped-call]
    except BaseException:
        environment.undo()
        raise
    process: subprocess.Popen[bytes] = gateway.proc
    try:
        context = SparkContext(conf=conf, gateway=gateway)
        context.setLogLevel("WARN")
        session = SparkSession(context)
        kbroker.spark.register(session)
        yield session
    finally:
        try:
            if SparkContext._active_spark_context is not None:
                SparkContext._active_spark_context.stop()
            gateway.shutdown()
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdin is not None:
                process.stdin.close()
            SparkContext._gateway = None
            SparkContext._jvm = None
            environment.undo()


# ---- helpers ---------------------------------------------------------------------------------------------------


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def create_topic(target: Target, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    (future,) = admin.create_topics([NewTopic(topic, partitions, 1, config=configs or {})]).values()
    future.result(30)
    target.wait_topic_ready(topic, partitions)


def produce(target: Target, topic: str, seeds: Sequence[Seed]) -> list[Rec]:
    """Produce in order (idempotent); the Recs the source should give for them."""
    producer = Producer({"bootstrap.servers": target.bootstrap, "enable.idempotence": True, "linger.ms": 5})
    acks: list[tuple[int, int] | None] = [None] * len(seeds)
    errors: list[object] = []

    def on_delivery(index: int) -> Callable[[Any, Any], None]:
        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                errors.append(error)
            else:
                acks[index] = (message.partition(), message.offset())

        return delivered

    for index, seed in enumerate(seeds):
        producer.produce(
            topic,
            seed.value,
            seed.key,
            partition=seed.partition,
            headers=list(seed.headers),
            timestamp=seed.timestamp,
            on_delivery=on_delivery(index),
        )
        producer.poll(0)
    assert producer.flush(60) == 0, "records still unsent after 60 s"
    assert errors == []
    out = []
    for seed, ack in zip(seeds, acks, strict=True):
        assert ack is not None
        headers = seed.headers or None
        out.append(Rec(topic, ack[0], ack[1], seed.key, seed.value, headers, seed.timestamp, CREATE_TIME))
    return sorted(out)


def records(frame: Any) -> list[Rec]:
    """A source DataFrame's rows as Recs, sorted by topic, partition and offset."""
    has_headers = "headers" in frame.columns
    rows = frame.selectExpr(
        "topic",
        "partition",
        "offset",
        "key",
        "value",
        "headers" if has_headers else "NULL AS headers",
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


def offsets(recs: Sequence[Rec]) -> dict[int, list[int]]:
    """partition -> the offsets read there."""
    out: dict[int, list[int]] = {}
    for rec in recs:
        out.setdefault(rec.partition, []).append(rec.offset)
    return out


def source(spark: Any, target: Target, *, stream: bool = False) -> Any:
    reader = spark.readStream if stream else spark.read
    return (
        reader.format(FORMAT)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("includeHeaders", "true")
    )


def collect_available_now(frame: Any, checkpoint: Path) -> dict[int, list[Rec]]:
    """Run a streaming source with trigger(availableNow=True) into foreachBatch: batch id -> its records."""
    batches: dict[int, list[Rec]] = {}

    def keep(batch: Any, batch_id: int) -> None:
        batches[batch_id] = records(batch)

    query = frame.writeStream.foreachBatch(keep).option("checkpointLocation", str(checkpoint))
    run_available_now(query)
    return batches


def run_available_now(writer: Any) -> None:
    query = writer.trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(QUERY_TIMEOUT_S), f"the query still ran after {QUERY_TIMEOUT_S} s"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()


def five_a_partition(partitions: int, base: int) -> list[Seed]:
    """Five records in each partition, value b"p<partition>-<i>", a second apart from `base`."""
    return [
        Seed(p, f"k{i}".encode(), f"p{p}-{i}".encode(), (("i", str(i).encode()),), base + i * 1000)
        for p in range(partitions)
        for i in range(5)
    ]


# ---- batch -----------------------------------------------------------------------------------------------------

# Keys and values as bytes (not all UTF-8), null keys and values, empty values; headers: none, one, a repeated key,
# a null value, an empty one.
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


def test_batch_write_and_read_back(spark: Any, target: Target) -> None:
    """The sink writes keys, values (null ones too) and headers to the partitions named, and a `topic` column with
    string keys and values routes each row, null partitions going where the key's murmur2 hash says (the Java
    client's partitioner); the source reads exactly that back, stamped with CreateTime."""
    first, second, third = (target.topic(f"kb-write-{n}") for n in "abc")
    create_topic(target, first, 3)
    create_topic(target, second, 4)
    create_topic(target, third, 2)
    before = now_ms()
    frame = spark.createDataFrame(WRITE_ROWS, WRITE_SCHEMA).coalesce(1)  # one task: the rows' order is kept
    frame.write.format(FORMAT).mode("append").option("kafka.bootstrap.servers", target.bootstrap).option(
        "topic", first
    ).save()
    routed = [
        (second, "x", "0", 3),
        (second, "key-a", "1", None),
        (third, "key-b", "2", None),
        (second, "key-a", "3", None),
        (third, "y", "4", 1),
    ]
    spark.createDataFrame(routed, "topic string, key string, value string, partition int").coalesce(
        1
    ).write.format(FORMAT).mode("append").option("kafka.bootstrap.servers", target.bootstrap).save()
    after = now_ms()

    read = records(source(spark, target).option("subscribe", f"{first},{second},{third}").load())

    want = []
    next_offset: dict[tuple[str, int], int] = {}

    def place(topic: str, partition: int) -> int:
        offset = next_offset.get((topic, partition), 0)
        next_offset[(topic, partition)] = offset + 1
        return offset

    for key, value, headers, partition in WRITE_ROWS:
        want.append((first, partition, place(first, partition), key, value, tuple(headers) or None))
    sizes = {second: 4, third: 2}
    for topic, key_text, value_text, routed_to in routed:
        key = key_text.encode()
        where = routed_to if routed_to is not None else (murmur2(key) & 0x7FFFFFFF) % sizes[topic]
        want.append((topic, where, place(topic, where), key, value_text.encode(), None))
    assert [rec[:6] for rec in read] == sorted(want)
    assert {rec.timestamp_type for rec in read} == {CREATE_TIME}
    assert all(before <= rec.timestamp <= after for rec in read), (before, [r.timestamp for r in read], after)

    plain = (
        spark.read.format(FORMAT)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("subscribe", first)
    )
    assert plain.load().columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]


def test_batch_offset_options(spark: Any, target: Target) -> None:
    """startingOffsets/endingOffsets as JSON (-2, -1), by timestamp per partition and for all (and the strategy
    for no match), assign, subscribePattern, minPartitions and maxRecordsPerPartition (which cut ranges into more
    tasks and read the same records)."""
    topic = target.topic("kb-offsets")
    create_topic(target, topic, 3)
    base = now_ms() - 60_000
    want = produce(target, topic, five_a_partition(3, base))

    def read(**options: str) -> list[Rec]:
        frame = source(spark, target)
        if not any(name in options for name in ("assign", "subscribePattern")):
            frame = frame.option("subscribe", topic)
        for name, value in options.items():
            frame = frame.option(name, value)
        got = records(frame.load())
        assert got == [rec for rec in want if rec.offset in offsets(got).get(rec.partition, [])]
        return got

    everything = read()
    assert everything == want
    json_range = {
        "startingOffsets": json.dumps({topic: {"0": 1, "1": 2, "2": -2}}),
        "endingOffsets": json.dumps({topic: {"0": 4, "1": -1, "2": 2}}),
    }
    assert offsets(read(**json_range)) == {0: [1, 2, 3], 1: [2, 3, 4], 2: [0, 1]}
    # 1.5 s falls between offsets 1 and 2; 3 s is exactly offset 3's; 3.5 s -> 4; past the end -> the end
    by_partition = read(
        startingOffsetsByTimestamp=json.dumps({topic: {"0": base + 1500, "1": base + 3000, "2": base}}),
        endingOffsetsByTimestamp=json.dumps(
            {topic: {"0": base + 3500, "1": base + 60_000, "2": base + 1000}}
        ),
    )
    assert offsets(by_partition) == {0: [2, 3], 1: [3, 4], 2: [0]}
    assert offsets(read(startingTimestamp=str(base + 2500), endingTimestamp=str(base + 4000))) == {
        p: [3] for p in range(3)
    }
    # no record is as late as 4.5 s after base: by default an error, with the "latest" strategy the end
    with pytest.raises(Exception, match="No offset matched"):
        read(startingTimestamp=str(base + 4500))
    assert read(startingTimestamp=str(base + 4500), startingOffsetsByTimestampStrategy="latest") == []
    assert offsets(read(assign=json.dumps({topic: [0, 2]}))) == {0: list(range(5)), 2: list(range(5))}
    assert read(subscribePattern=f"^{re.escape(topic)}$") == want
    assert read(subscribePattern=f"^{re.escape(topic)}-nothing$") == []

    def tasks(**options: str) -> int:
        frame = source(spark, target).option("subscribe", topic)
        for name, value in options.items():
            frame = frame.option(name, value)
        count: int = frame.load().rdd.getNumPartitions()
        assert read(**options) == want
        return count

    assert tasks() == 3
    assert tasks(minPartitions="6") == 6
    assert (
        tasks(maxRecordsPerPartition="2") == 9
    )  # each partition's 5 records as 2 + 2 + 1 (Spark cuts 3 ways)


def test_refused_options(spark: Any, target: Target) -> None:
    """Options Spark's own connector refuses are refused here too, with its explanation."""
    topic = target.topic("kb-refused")
    create_topic(target, topic, 1)

    def load(**options: str) -> None:
        frame = spark.read.format(FORMAT).option("kafka.bootstrap.servers", target.bootstrap)
        for name, value in options.items():
            frame = frame.option(name, value)
        frame.load().collect()

    with pytest.raises(Exception, match=r"auto\.offset\.reset' is not supported"):
        load(subscribe=topic, **{"kafka.auto.offset.reset": "earliest"})
    with pytest.raises(Exception, match="Only one of the following options"):
        load(subscribe=topic, assign=json.dumps({topic: [0]}))
    with pytest.raises(Exception, match="starting offset can't be latest for batch queries"):
        load(subscribe=topic, startingOffsets="latest")
    with pytest.raises(Exception, match="fixed schema"):
        spark.read.format(FORMAT).schema("value binary").option(
            "kafka.bootstrap.servers", target.bootstrap
        ).option("subscribe", topic).load().collect()
    frame = spark.createDataFrame([(1,)], "value int")
    with pytest.raises(Exception, match="value attribute unsupported type int"):
        frame.write.format(FORMAT).mode("append").option("kafka.bootstrap.servers", target.bootstrap).option(
            "topic", topic
        ).save()


# ---- streaming -------------------------------------------------------------------------------------------------


def test_stream_micro_batches_then_restart(spark: Any, target: Target, tmp_path: Path) -> None:
    """availableNow reads what is there in micro-batches of at most maxOffsetsPerTrigger records, split across the
    partitions in proportion to what each has left; started again on its checkpoint the query reads exactly the
    records produced since."""
    topic = target.topic("kb-stream")
    create_topic(target, topic, 2)
    base = now_ms() - 60_000
    first = produce(
        target,
        topic,
        [Seed(p, None, f"p{p}-{i}".encode(), (), base + i) for p in range(2) for i in range(10)],
    )
    checkpoint = tmp_path / "checkpoint"

    def run() -> dict[int, list[Rec]]:
        frame = (
            source(spark, target, stream=True)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "6")
            .load()
        )
        return collect_available_now(frame, checkpoint)

    batches = run()
    assert {batch_id: offsets(recs) for batch_id, recs in batches.items()} == {
        0: {0: [0, 1, 2], 1: [0, 1, 2]},
        1: {0: [3, 4, 5], 1: [3, 4, 5]},
        2: {0: [6, 7, 8], 1: [6, 7, 8]},
        3: {0: [9], 1: [9]},
    }
    assert sorted(rec for recs in batches.values() for rec in recs) == first

    second = produce(target, topic, [Seed(0, b"k", b"late", (("h", b"v"),), base + 100)])
    assert run() == {4: second}
    assert run() == {}


def test_stream_restart_in_its_first_batch(spark: Any, target: Target, tmp_path: Path) -> None:
    """A query starting at `latest` that fails in its first micro-batch (Spark runs it at once, empty) and is
    restarted after more records came runs that batch again from the same start, then reads every record since:
    the batch's start is kept in the checkpoint, not asked for anew (which would now be later, and lose records)."""
    topic = target.topic("kb-first-batch")
    create_topic(target, topic, 1)
    base = now_ms() - 60_000

    def seeds(values: range) -> list[Seed]:
        return [Seed(0, None, f"v{i}".encode(), (), base + i) for i in values]

    produce(target, topic, seeds(range(5)))  # before the query: not read
    checkpoint = tmp_path / "checkpoint"

    def failing(batch: Any, batch_id: int) -> None:
        raise RuntimeError(f"batch {batch_id} fails on purpose")

    frame = source(spark, target, stream=True).option("subscribe", topic).load()
    query = frame.writeStream.foreachBatch(failing).option("checkpointLocation", str(checkpoint)).start()
    try:
        with pytest.raises(Exception, match="batch 0 fails on purpose"):
            query.awaitTermination(QUERY_TIMEOUT_S)
    finally:
        query.stop()

    later = produce(target, topic, seeds(range(5, 10)))
    batches = collect_available_now(
        source(spark, target, stream=True).option("subscribe", topic).load(), checkpoint
    )
    assert batches == {0: [], 1: later}


def test_stream_copy_through_the_sink(spark: Any, target: Target, tmp_path: Path) -> None:
    """A streaming query copies a topic into another through the sink: keys, values (null ones too), headers and
    partitions kept, each partition's records in order."""
    source_topic, copy = target.topic("kb-copy-from"), target.topic("kb-copy-to")
    create_topic(target, source_topic, 3)
    create_topic(target, copy, 3)
    base = now_ms() - 60_000
    header_sets: list[Headers] = [(), (("a", b"1"),), (("a", b"1"), ("a", None)), (("b", b""),)]
    want = produce(
        target,
        source_topic,
        [
            Seed(
                p,
                None if i == 1 else f"k{i}".encode(),
                None if i == 2 else f"{p}/{i}".encode(),
                headers,
                base + i,
            )
            for p in range(3)
            for i, headers in enumerate(header_sets)
        ],
    )
    frame = (
        source(spark, target, stream=True)
        .option("subscribe", source_topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "value", "headers", "partition")
    )
    before = now_ms()
    run_available_now(
        frame.writeStream.format(FORMAT)
        .option("kafka.bootstrap.servers", target.bootstrap)
        .option("topic", copy)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
    )
    after = now_ms()

    read = records(source(spark, target).option("subscribe", copy).load())
    assert [rec[1:6] for rec in read] == [rec[1:6] for rec in want]
    assert {rec.topic for rec in read} == {copy}
    assert all(before <= rec.timestamp <= after and rec.timestamp_type == CREATE_TIME for rec in read)


# ---- lost data -------------------------------------------------------------------------------------------------

SEGMENT_BYTES = 1024 * 1024  # Kafka 4's smallest segment.bytes


def wait_log_start(target: Target, topic: str, partition: int, above: int, timeout: float = 60.0) -> int:
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "kb-watermarks"})
    try:
        deadline = time.monotonic() + timeout
        while True:
            low, _ = consumer.get_watermark_offsets(ClientTopicPartition(topic, partition), timeout=10)
            if low > above:
                return int(low)
            assert time.monotonic() < deadline, (
                f"retention did not move the log start of {topic} past {above}"
            )
            time.sleep(0.1)
    finally:
        consumer.close()


def test_fail_on_data_loss(spark: Any, target: Target, tmp_path: Path) -> None:
    """Retention deletes the records a read asks for: failOnDataLoss=true (the default) fails the batch read and
    the streaming query saying so; false reads on from the log start offset."""
    topic = target.topic("kb-lost")
    # Records a day old in 1 MiB segments, kept an hour: once a segment is full it is deleted at once. The last
    # records are new, so that the last segment stays (Kafka also deletes an active segment that has expired).
    create_topic(target, topic, 1, {"segment.bytes": str(SEGMENT_BYTES), "retention.ms": "3600000"})
    old, new = now_ms() - 86_400_000, now_ms()
    value = b"x" * 1000
    count = 1510
    produce(target, topic, [Seed(0, None, value, (), old + i if i < 1500 else new) for i in range(count)])
    log_start = wait_log_start(target, topic, 0, above=0)
    assert log_start < 1500
    from_zero = json.dumps({topic: {"0": 0}})

    def batch(**options: str) -> list[Rec]:
        frame = source(spark, target).option("subscribe", topic).option("startingOffsets", from_zero)
        for name, value in options.items():
            frame = frame.option(name, value)
        return records(frame.load())

    with pytest.raises(Exception, match="Some data may have been lost"):
        batch()
    assert offsets(batch(failOnDataLoss="false")) == {0: list(range(log_start, count))}

    def stream(checkpoint: Path, **options: str) -> dict[int, list[Rec]]:
        frame = (
            source(spark, target, stream=True).option("subscribe", topic).option("startingOffsets", from_zero)
        )
        for name, value in options.items():
            frame = frame.option(name, value)
        return collect_available_now(frame.load(), checkpoint)

    with pytest.raises(Exception, match="Some data may have been lost"):
        stream(tmp_path / "failing")
    read = stream(tmp_path / "lenient", failOnDataLoss="false")
    assert {batch_id: offsets(recs) for batch_id, recs in read.items()} == {
        0: {0: list(range(log_start, count))}
    }
