"""Fetch answered from the segment files: every byte read back, over plain TCP (sendfile) and TLS (copied).

A fetch read of 32 KiB or more (kbroker/log/segment.py SENDFILE_MIN_BYTES) is not read into Python: the response
carries a range of the segment file, which the connection sends with os.sendfile on plain TCP and reads and encrypts
on TLS. Records of mixed sizes (a few bytes to 200 KiB, in batches of one record and of many, across many segment
rolls) go in through a stock producer; stock consumers read every partition back from offset 0, with the default
fetch sizes and with small ones (so ranges are cut by max.partition.fetch.bytes and fetch.max.bytes, and the first
batch comes whole past both), before and after a restart, over PLAINTEXT and SSL; each compares every offset, key and
value with what was produced.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.conftest import register_broker
from tests.security_support import OAuthIssuer, SecureBroker, make_pki

pytestmark = pytest.mark.timeout(180)

TOPIC = "sendfile"
PARTITIONS = 3
SIZES = (1, 100, 3_000, 20_000, 70_000, 200_000)
SEGMENT_BYTES = 1024 * 1024  # many rolls: ranges start and end at segment boundaries too
SMALL_FETCH = {"max.partition.fetch.bytes": 50_000, "fetch.max.bytes": 120_000, "message.max.bytes": 100_000}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    base = tmp_path_factory.mktemp("sendfile")
    pki = make_pki(base / "pki")
    secure = SecureBroker(
        base / "data",
        pki,
        OAuthIssuer.create(pki.dir),
        overrides={"log.segment.bytes": str(SEGMENT_BYTES)},
        log_path=base / "broker.log",
    )
    secure.start()
    yield secure
    secure.stop()


@pytest.fixture(autouse=True)
def _log_on_failure(request: pytest.FixtureRequest, broker: SecureBroker) -> None:
    register_broker(request, broker)


def produce(bootstrap: str) -> dict[int, list[tuple[bytes, bytes]]]:
    """Records of mixed sizes, some produced one by one (a batch each), some in bursts (batches of many)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
    rng = random.Random(12)
    produced: dict[int, list[tuple[bytes, bytes]]] = {p: [] for p in range(PARTITIONS)}
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000,
                         "message.max.bytes": 1_000_000, "enable.idempotence": True})  # fmt: skip
    failures: list[Any] = []
    for burst in range(40):
        for i in range(rng.choice((1, 1, 5, 30))):
            partition = rng.randrange(PARTITIONS)
            key = f"{burst}-{i}".encode()
            value = rng.randbytes(rng.choice(SIZES))
            producer.produce(
                TOPIC, value, key, partition=partition, on_delivery=lambda err, _: failures.append(err)
            )
            produced[partition].append((key, value))
        producer.flush(30)  # one burst per round of batches
    assert failures == [None] * sum(map(len, produced.values()))
    return produced


def consume(bootstrap: str, expected: dict[int, list[tuple[bytes, bytes]]], **conf: Any) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "enable.partition.eof": True, **conf})  # fmt: skip
    try:
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        got: dict[int, list[tuple[int, bytes, bytes]]] = {p: [] for p in range(PARTITIONS)}
        done: set[int] = set()
        deadline = time.monotonic() + 60
        while len(done) < PARTITIONS and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            partition, error = msg.partition(), msg.error()
            assert partition is not None
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                if len(got[partition]) >= len(expected[partition]):
                    done.add(partition)
                continue
            offset, key, value = msg.offset(), msg.key(), msg.value()
            assert offset is not None
            assert key is not None
            assert value is not None
            got[partition].append((offset, key, value))
        for p in range(PARTITIONS):
            assert [offset for offset, _, _ in got[p]] == list(range(len(expected[p])))
            # compared record by record, so a failure names the first wrong one instead of printing megabytes
            for (offset, key, value), (want_key, want_value) in zip(got[p], expected[p], strict=True):
                assert (key, len(value), value == want_value) == (want_key, len(want_value), True), (
                    p,
                    offset,
                )
    finally:
        consumer.close()


def test_every_byte_read_back_over_plain_tcp_and_tls(broker: SecureBroker) -> None:
    plain = broker.bootstrap
    produced = produce(plain)
    assert len(list((broker.data_dir / f"{TOPIC}-0").glob("*.log"))) > 2  # the reads cross segment rolls
    cert, key = broker.pki.clients["alice"]
    tls = {"security.protocol": "SSL", "ssl.ca.location": str(broker.pki.ca),
           "ssl.certificate.location": str(cert), "ssl.key.location": str(key)}  # fmt: skip
    for _ in ("before a restart", "after one"):
        consume(plain, produced)
        consume(plain, produced, **SMALL_FETCH)
        consume(broker.bootstrap_of("SSL"), produced, **tls)
        consume(broker.bootstrap_of("SSL"), produced, **tls, **SMALL_FETCH)
        broker.restart()
