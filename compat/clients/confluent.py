"""confluent-kafka (librdkafka 2.x), in-process. Its defaults: acks=all, not idempotent, linger 5 ms."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Mapping, Sequence

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record

ADMIN_TIMEOUT_S = 60.0


def create_topic(bootstrap: str, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
    """Also the admin for clients that have none of their own (kcat)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, num_partitions=partitions, replication_factor=1, config=configs or {})
    futures = admin.create_topics([new])
    futures[topic].result(timeout=ADMIN_TIMEOUT_S)


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"compat-offsets-{uuid.uuid4()}"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=ADMIN_TIMEOUT_S)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def partition_offset(message: Message) -> tuple[int, int]:
    """Where a delivered or consumed message sits: librdkafka sets both, though its types allow None."""
    partition, offset = message.partition(), message.offset()
    assert partition is not None
    assert offset is not None
    return partition, offset


def value_of(message: Message) -> bytes:
    """The value of a message written with one (not a tombstone)."""
    value = message.value()
    assert isinstance(value, bytes)
    return value


def _header_value(data: str | bytes | None) -> bytes:
    assert not isinstance(data, str)  # consumed header values are bytes, or None for a null value
    return data or b""


def to_consumed(message: Message) -> Consumed:
    error = message.error()
    if error is not None:
        raise KafkaException(error)
    partition, offset = partition_offset(message)
    key, value = message.key(), message.value()
    assert not isinstance(key, str)
    assert not isinstance(value, str)
    headers = message.headers() or []
    assert isinstance(headers, list)  # a consumed message's headers are (name, value) pairs, not a dict
    return Consumed(
        partition=partition,
        offset=offset,
        key=key,
        value=value,
        headers=tuple((name, _header_value(data)) for name, data in headers),
        timestamp=message.timestamp()[1],
    )


class Confluent(Client):
    name = f"confluent-kafka-{confluent_kafka.version()[0]}"

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        create_topic(bootstrap, topic, partitions)

    def produce(
        self,
        bootstrap: str,
        topic: str,
        records: Sequence[Record],
        codec: str,
        config: Mapping[str, str] | None = None,
    ) -> list[Ack]:
        """`config`: librdkafka settings over the defaults (acks=all, not idempotent)."""
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": "compat-confluent-producer",
                "compression.type": codec,
                **(config or {}),
            }
        )
        acks: list[Ack] = []
        errors: list[str] = []

        def on_delivery(index: int, error: object, message: Message) -> None:
            if error is not None:
                errors.append(f"record {index}: {error}")
            else:
                acks.append(Ack(index, *partition_offset(message)))

        for record in records:
            while True:
                try:
                    producer.produce(
                        topic,
                        key=record.key,
                        value=record.value,
                        partition=-1 if record.partition is None else record.partition,
                        timestamp=record.timestamp or 0,
                        headers=list(record.headers),
                        on_delivery=functools.partial(on_delivery, record.index),
                    )
                    break
                except BufferError:
                    # The local queue is full: serve delivery reports until there is room.
                    producer.poll(0.1)
        remaining = producer.flush(CONSUME_TIMEOUT_S)
        assert remaining == 0, f"{remaining} records still undelivered after {CONSUME_TIMEOUT_S} s"
        assert not errors, f"{len(errors)} delivery errors, first: {errors[0]}"
        return acks

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        # librdkafka wants a group.id even for assign(); it is never joined.
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": "compat-confluent-consumer",
                "group.id": f"compat-confluent-{uuid.uuid4()}",
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.assign(
                [TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(partitions)]
            )
            received: list[Consumed] = []
            deadline = time.monotonic() + CONSUME_TIMEOUT_S
            while len(received) < count and time.monotonic() < deadline:
                received.extend(to_consumed(m) for m in consumer.consume(num_messages=10_000, timeout=1.0))
            return received
        finally:
            consumer.close()

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        return end_offsets(bootstrap, topic, partitions)
