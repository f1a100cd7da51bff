"""Plain load generators over confluent-kafka, against any bootstrap address (bench/profile.py, bench/scale.py).

bench/run.py keeps its own measured versions (CPU readings, statistics); these only move records and count them.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common import BenchError

PARTITIONS = 4
CLIENT_COMMON: dict[str, Any] = {"log.connection.close": False}


def random_value(size: int) -> bytes:
    """Incompressible: no compression is configured anyway."""
    return os.urandom(size)


def create_topic(bootstrap: str, topic: str, partitions: int, replication_factor: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **CLIENT_COMMON})
    futures = admin.create_topics(
        [NewTopic(topic, partitions, replication_factor)], operation_timeout=60, request_timeout=60
    )
    futures[topic].result(65)
    deadline = time.monotonic() + 60
    while True:
        md = admin.list_topics(topic, timeout=10).topics.get(topic)
        if (
            md is not None
            and md.error is None
            and len(md.partitions) == partitions
            and all(p.leader >= 0 for p in md.partitions.values())
        ):
            return
        if time.monotonic() > deadline:
            raise BenchError(f"topic {topic!r} has no leaders after 60 s: {md!r}")
        time.sleep(0.2)


def produce(
    bootstrap: str,
    topic: str,
    n: int,
    value: bytes,
    acks: str,
    timeout: float,
    partitions: int = PARTITIONS,
    linger_ms: int = 5,
    rate: float | None = None,
) -> int:
    """n records round-robin over the partitions; returns n once all are acknowledged. With `rate`, at that many
    records per second (with linger_ms=0, one record per Produce request, as bench/run.py's latency runs send)."""
    failed: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            failed.append(str(err))

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": linger_ms,
            "message.timeout.ms": int(timeout * 1000),
            "on_delivery": on_delivery,
            **CLIENT_COMMON,
        }
    )
    producer.list_topics(topic, timeout=10)
    start = time.perf_counter()
    for i in range(n):
        if rate is not None and (wait := start + i / rate - time.perf_counter()) > 0:
            time.sleep(wait)
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.005)
    remaining = producer.flush(timeout)
    if remaining or failed:
        raise BenchError(f"produce to {topic}: {remaining} undelivered, {len(failed)} failed: {failed[:3]}")
    return n


def fill(bootstrap: str, topic: str, n: int, value: bytes, partitions: int = PARTITIONS) -> None:
    produce(bootstrap, topic, n, value, "1", 300, partitions)


def consume(
    bootstrap: str, topic: str, n: int, passes: int, timeout: float, partitions: int = PARTITIONS
) -> int:
    """Read the n records of the topic `passes` times, each by a fresh consumer from the beginning; returns the
    records read."""
    total = 0
    for _ in range(passes):
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "auto.offset.reset": "error",
                **CLIENT_COMMON,
            }
        )
        try:
            consumer.assign(
                [TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(partitions)]
            )
            count = 0
            deadline = time.monotonic() + timeout
            while count < n:
                if time.monotonic() > deadline:
                    raise BenchError(f"consume {topic}: {count}/{n} after {timeout:.0f} s")
                for msg in consumer.consume(num_messages=min(1000, n - count), timeout=0.5):
                    if msg.error() is not None:
                        raise BenchError(f"consume {topic}: {msg.error()}")
                    count += 1
            total += count
        finally:
            consumer.close()
    return total
