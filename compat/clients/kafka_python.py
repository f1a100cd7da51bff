"""kafka-python 3.x, in-process. Its defaults: idempotent producer with acks=all, version negotiation."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import kafka.codec
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.version import __version__ as kafka_version

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record

# kafka-python finds each codec through an optional package; the name to install when it is missing.
_CODEC_PACKAGES: dict[str, tuple[Callable[[], object], str]] = {
    "snappy": (kafka.codec.has_snappy, "python-snappy"),
    "lz4": (kafka.codec.has_lz4, "lz4"),
    "zstd": (kafka.codec.has_zstd, "zstandard"),
}
# The producer's compression_type for each codec of compat.clients.CODECS.
_COMPRESSION_TYPES: dict[str, Literal["gzip", "snappy", "lz4", "zstd"] | None] = {
    "none": None,
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "zstd": "zstd",
}


class KafkaPython(Client):
    name = f"kafka-python-{kafka_version}"

    def unsupported_codec_reason(self, codec: str) -> str | None:
        if codec in _CODEC_PACKAGES:
            available, package = _CODEC_PACKAGES[codec]
            if not available():
                return f"kafka-python needs the package {package} for {codec}; it is not installed"
        return None

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-kafka-python-admin")
        try:
            admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
        finally:
            admin.close()

    def produce(
        self,
        bootstrap: str,
        topic: str,
        records: Sequence[Record],
        codec: str,
        config: Mapping[str, Any] | None = None,
    ) -> list[Ack]:
        """`config`: KafkaProducer options over the defaults (which are idempotent, acks=all)."""
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            client_id="compat-kafka-python-producer",
            compression_type=_COMPRESSION_TYPES[codec],
            **(config or {}),
        )
        try:
            futures = [
                (
                    record.index,
                    producer.send(
                        topic,
                        key=record.key,
                        value=record.value,
                        headers=list(record.headers),
                        partition=record.partition,
                        timestamp_ms=record.timestamp,
                    ),
                )
                for record in records
            ]
            producer.flush(timeout=CONSUME_TIMEOUT_S)
            acks = []
            for index, future in futures:
                metadata = future.get(timeout=0)
                acks.append(Ack(index, metadata.partition, metadata.offset))
            return acks
        finally:
            producer.close(timeout=10)

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            client_id="compat-kafka-python-consumer",
            group_id=None,
            enable_auto_commit=False,
        )
        try:
            assignment = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(assignment)
            consumer.seek_to_beginning(*assignment)
            received: list[Consumed] = []
            deadline = time.monotonic() + CONSUME_TIMEOUT_S
            while len(received) < count and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                    received.extend(
                        Consumed(
                            partition=r.partition,
                            offset=r.offset,
                            key=r.key,
                            value=r.value,
                            headers=tuple(r.headers),
                            timestamp=r.timestamp,
                        )
                        for r in batch
                    )
            return received
        finally:
            consumer.close()

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
        try:
            offsets = consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
            return {tp.partition: offset for tp, offset in offsets.items()}
        finally:
            consumer.close()
