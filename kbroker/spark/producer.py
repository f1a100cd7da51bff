"""The sink: Spark rows (as Arrow batches) to Kafka records through confluent-kafka's idempotent Producer.

The columns are those of Spark's own Kafka sink: `value` (string or binary, required), `key` (string or binary),
`topic` (string; the `topic` option wins over it), `partition` (int; where null, the key's murmur2 hash picks it,
as the Java client's default partitioner does) and `headers` (array<struct<key: string, value: binary>>). Any
other column is ignored. Records get the producer's clock as CreateTime.

A task returns only once every record it produced is acknowledged: it flushes, and the first delivery error fails
the task (Spark then retries or fails the job) instead of being lost. The producer is idempotent
(`enable.idempotence`, acks=all) unless `kafka.enable.idempotence` says otherwise: a batch that librdkafka retries
is not written twice. As with Spark's own sink, a task that Spark retries writes its rows again (at least once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaError, Message, Producer
from pyspark.sql.types import BinaryType, DataType, IntegerType, StringType, StructType

from kbroker.spark.options import OptionError
from kbroker.spark.schema import HEADERS_TYPE

log = logging.getLogger(__name__)

# How long a task waits for its last acknowledgements beyond librdkafka's own delivery.timeout.ms (which fails a
# record that cannot be delivered, 300 s by default).
FLUSH_GRACE_S = 30.0


def check_sink_schema(schema: StructType, topic: str | None) -> None:
    """Spark's KafkaWriter.validateQuery: the columns the sink uses exist where required and have usable types."""
    types = {field.name: field.dataType for field in schema.fields}
    if topic is None:
        if "topic" not in types:
            raise OptionError(
                "topic option required when no 'topic' attribute is present. Use the topic option for setting a "
                "topic."
            )
        _check_type("topic", types["topic"], [StringType()])
    if "value" not in types:
        raise OptionError("Required attribute 'value' not found")
    _check_type("value", types["value"], [StringType(), BinaryType()])
    optional: list[tuple[str, list[DataType]]] = [
        ("key", [StringType(), BinaryType()]),
        ("headers", [HEADERS_TYPE]),
        ("partition", [IntegerType()]),
    ]
    for name, allowed in optional:
        if name in types:
            _check_type(name, types[name], allowed)


def _check_type(name: str, actual: DataType, allowed: list[DataType]) -> None:
    if not any(_same_type(actual, wanted) for wanted in allowed):
        raise OptionError(
            f"{name} attribute unsupported type {actual.simpleString()}. {name} must be a(n) "
            f"{' or '.join(t.simpleString() for t in allowed)}"
        )


def _same_type(a: DataType, b: DataType) -> bool:
    # Spark's DataTypeUtils.sameType: equal but for nullability.
    return a.simpleString() == b.simpleString()


def producer_config(client_config: Mapping[str, Any]) -> dict[str, Any]:
    config = dict(client_config)
    config.setdefault("enable.idempotence", True)
    # The Java client's default partitioner hashes keys with murmur2; librdkafka's own default (consistent_random,
    # CRC32) would put a key elsewhere than Spark's own sink does.
    config.setdefault("partitioner", "murmur2_random")
    config["logger"] = log
    return config


class _Deliveries:
    """The first delivery error of a task (only failures are reported: delivery.report.only.error)."""

    def __init__(self) -> None:
        self.error: KafkaError | None = None
        self.failed = 0

    def on_delivery(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.failed += 1
            if self.error is None:
                self.error = error
                log.error("delivery to %s [%s] failed: %s", message.topic(), message.partition(), error)

    def on_error(self, error: KafkaError) -> None:
        # A fatal error (e.g. the idempotent producer fenced) ends the task; others are librdkafka's to retry.
        if error.fatal() and self.error is None:
            self.error = error

    def check(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"Kafka sink: {self.failed or 1} record(s) could not be written: {self.error}")


def write_batches(
    batches: Iterator[pa.RecordBatch], topic_option: str | None, client_config: Mapping[str, Any]
) -> int:
    """Produce every row and wait for its acknowledgement; the number of records written."""
    deliveries = _Deliveries()
    config = producer_config(client_config)
    config.update(
        {
            "delivery.report.only.error": True,
            "on_delivery": deliveries.on_delivery,
            "error_cb": deliveries.on_error,
        }
    )
    producer = Producer(config)
    written = 0
    try:
        for batch in batches:
            written += _produce_batch(producer, batch, topic_option, deliveries)
        _flush(producer, config)
        deliveries.check()
    finally:
        producer.flush(0)
    return written


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index).to_pylist()


def _produce_batch(
    producer: Producer, batch: pa.RecordBatch, topic_option: str | None, deliveries: _Deliveries
) -> int:
    count = batch.num_rows
    values = _column(batch, "value")
    assert values is not None, "the sink's schema was checked on the driver"
    keys = _column(batch, "key") or [None] * count
    partitions = _column(batch, "partition") or [None] * count
    topics = [topic_option] * count if topic_option is not None else _column(batch, "topic")
    assert topics is not None
    header_index = batch.schema.get_field_index("headers")
    headers: list[Any] = [None] * count
    if header_index >= 0:
        headers = batch.column(header_index).to_pylist()
    produce = producer.produce
    for row in range(count):
        topic = topics[row]
        if topic is None:
            raise ValueError(
                "null topic present in the data. Use the topic option for setting a default topic."
            )
        partition = partitions[row]
        row_headers = headers[row]
        record_headers = None if row_headers is None else [(h["key"], h["value"]) for h in row_headers]
        while True:
            try:
                produce(
                    topic,
                    values[row],
                    keys[row],
                    partition=-1 if partition is None else partition,
                    headers=record_headers,
                )
                break
            except BufferError:
                # librdkafka's queue is full: serve delivery reports until there is room
                producer.poll(0.05)
    producer.poll(0)
    deliveries.check()  # stop at the first failed delivery, as Spark's sink does
    return count


def _flush(producer: Producer, config: Mapping[str, Any]) -> None:
    timeout_ms = int(config.get("delivery.timeout.ms", config.get("message.timeout.ms", 300_000)))
    deadline = time.monotonic() + timeout_ms / 1000 + FLUSH_GRACE_S
    while (left := producer.flush(1.0)) > 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"Kafka sink: {left} record(s) still unacknowledged after {timeout_ms} ms")
