"""confluent-kafka (librdkafka 2.x), in-process. Its defaults: acks=all, not idempotent, linger 5 ms."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record

ADMIN_TIMEOUT_S = 60.0


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """Also the admin for clients that have none of their own (kcat)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
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


def to_consumed(message: Message) -> Consumed:
    error = message.error()
    if error is not None:
        raise KafkaException(error)
    partition, offset = message.partition(), message.offset()
    assert partition is not None
    assert offset is not None
    key, value = message.key(), message.value()
    assert not isinstance(key, str)
    assert not isinstance(value, str)
    return Consumed(
        partition=partition,
        offset=offset,
        key=key,
        value=value,
        headers=tuple((name, data or b"") for name, data in message.headers() or ()),
        timestamp=message.timestamp()[1],
    )


class Confluent(Client):
    name = f"confluent-kafka-{confluent_kafka.version()[0]}"

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        create_topic(bootstrap, topic, partitions)

    def produce(self, bootstrap: str, topic: str, records: Sequence[Record], codec: str) -> list[Ack]:
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": "compat-confluent-producer",
                "compression.type": codec,
            }
        )
        acks: list[Ack] = []
        errors: list[str] = []

        def on_delivery(index: int, error: object, message: Message) -> None:
            if error is not None:
                errors.append(f"record {index}: {error}")
            else:
                partition, offset = message.partition(), message.offset()
                assert partition is not None
                assert offset is not None
                acks.append(Ack(index, partition, offset))

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
                        on_delivery=lambda err, msg, index=record.index: on_delivery(index, err, msg),
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
