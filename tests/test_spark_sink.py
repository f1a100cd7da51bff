"""format("kbroker")'s sink task (kbroker/spark/producer.py) against a real kbroker, without Spark: what it writes,
and that a record the broker cannot take fails the task instead of vanishing.

The sink through Spark, against every target, is compat/test_spark.py.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kbroker.spark.producer import write_batches
from tests.broker_process import BrokerProcess

pytestmark = pytest.mark.timeout(120)

# the Arrow type Spark hands the sink for its headers column, array<struct<key: string, value: binary>>
HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.create_topics([NewTopic(topic, partitions, 1)]).values()
    future.result(30)


def read_all(
    bootstrap: str, topic: str, partition: int, count: int
) -> list[tuple[bytes | None, bytes | None, object]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "sink-test", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        out: list[tuple[bytes | None, bytes | None, object]] = []
        while len(out) < count:
            messages = consumer.consume(count, 10)
            assert messages, f"only {len(out)} of {count} records in {topic}-{partition}"
            for message in messages:
                assert message.error() is None, message.error()
                out.append((message.key(), message.value(), message.headers()))
        return out
    finally:
        consumer.close()


def test_a_task_writes_its_rows_with_keys_headers_and_partitions(broker: BrokerProcess) -> None:
    topic = "sink-rows"
    create_topic(broker.bootstrap, topic, 2)
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(["k0", None, "k2"], pa.string()),
            pa.array([b"v0", b"v1", None], pa.binary()),
            pa.array([1, 1, 0], pa.int32()),
            pa.array([[{"key": "h", "value": b"x"}], None, [{"key": "n", "value": None}]], HEADERS),
        ],
        names=["key", "value", "partition", "headers"],
    )
    assert write_batches(iter([batch]), topic, {"bootstrap.servers": broker.bootstrap}) == 3
    assert read_all(broker.bootstrap, topic, 1, 2) == [(b"k0", b"v0", [("h", b"x")]), (None, b"v1", None)]
    assert read_all(broker.bootstrap, topic, 0, 1) == [(b"k2", None, [("n", None)])]


def test_a_record_the_broker_refuses_fails_the_task(broker: BrokerProcess) -> None:
    """Partition 7 of a 2-partition topic: librdkafka reports it undeliverable, and the task raises (Spark then
    retries or fails the job) rather than returning as if written."""
    topic = "sink-refused"
    create_topic(broker.bootstrap, topic, 2)
    batch = pa.RecordBatch.from_arrays(
        [pa.array([b"ok", b"nowhere"], pa.binary()), pa.array([0, 7], pa.int32())],
        names=["value", "partition"],
    )
    with pytest.raises(RuntimeError, match=r"could not be written: .*[Uu]nknown partition"):
        write_batches(
            iter([batch]), topic, {"bootstrap.servers": broker.bootstrap, "delivery.timeout.ms": 10_000}
        )
