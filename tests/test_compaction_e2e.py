"""Log compaction end to end: a real broker process, a compacted topic, stock clients.

100,000 updates over 1,000 keys (see update_keys) are produced with confluent-kafka (lz4, so the cleaner also
rewrites compressed batches that lose part of their records). Once the broker's cleaner has caught up with
everything below the active segment, consumers reading from offset 0 (confluent-kafka, then kafka-python) must
see one record per key below the active segment, the latest value of every key, and every record at the offset
its producer was told. The same holds after a restart of the broker (recovery of cleaned segments, gaps included).
`__consumer_offsets` is compacted like any such topic: after many commits only the latest ones remain, and the
coordinator reloads them after a restart.
"""

from __future__ import annotations

import random
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka import TopicPartition as ConfluentPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaPythonPartition

from tests.conftest import BrokerFactory

pytestmark = pytest.mark.timeout(180)

KEYS = 1000
UPDATES = 100_000
SEGMENT_BYTES = 100_000

Entry = tuple[int, bytes, bytes]  # offset, key, value


def update_keys() -> list[int]:
    """The key of each update: every key once, then random keys from a range that shrinks from all the keys to
    one. So the latest update of key k lies around offset UPDATES * (1 - k / KEYS): latest values are spread over
    the whole log, and most of them below the active segment, inside batches that lose their other records.
    """
    rng = random.Random(3)
    keys = list(range(KEYS))
    rest = UPDATES - KEYS
    keys += [rng.randrange(max(1, KEYS - KEYS * i // rest)) for i in range(rest)]
    return keys


def produce_updates(bootstrap: str, topic: str) -> dict[int, tuple[bytes, bytes]]:
    """(key, value) of every update, by the offset the broker acknowledged."""
    acknowledged: dict[int, tuple[bytes, bytes]] = {}
    errors: list[str] = []

    def on_delivery(error: KafkaError | None, message: Message) -> None:
        if error is not None:
            errors.append(str(error))
            return
        offset, key, value = message.offset(), message.key(), message.value()
        assert offset is not None
        assert isinstance(key, bytes)
        assert isinstance(value, bytes)
        acknowledged[offset] = (key, value)

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            # below segment.bytes: a batch larger than a segment is refused (RECORD_LIST_TOO_LARGE)
            "batch.size": 32 * 1024,
            "compression.type": "lz4",
        }
    )
    for i, k in enumerate(update_keys()):
        key = f"key-{k:04d}".encode()
        value = f"value-{i:06d}-of-{key.decode()}".encode()
        while True:
            try:
                producer.produce(topic, key=key, value=value, partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors[:5]
    assert len(acknowledged) == UPDATES
    return acknowledged


def segment_bases(partition_dir: Path) -> list[int]:
    return sorted(int(path.name[: -len(".log")]) for path in partition_dir.glob("*.log"))


def wait_until_cleaned(partition_dir: Path, timeout: float = 90.0) -> int:
    """Wait until the cleaner's checkpoint reaches the active segment; returns the active segment's base offset."""
    deadline = time.monotonic() + timeout
    checkpoint_file = partition_dir / "cleaner-offset-checkpoint"
    while True:
        active = segment_bases(partition_dir)[-1]
        try:
            checkpoint = int(checkpoint_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            checkpoint = -1
        if checkpoint == active:
            return active
        assert time.monotonic() < deadline, (
            f"the cleaner reached {checkpoint}, the active segment is at {active}"
        )
        time.sleep(0.2)


def consume_confluent(bootstrap: str, topic: str, end: int) -> list[Entry]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}", "enable.auto.commit": False}
    )
    out: list[Entry] = []
    try:
        consumer.assign([ConfluentPartition(topic, 0, 0)])
        deadline = time.monotonic() + 60
        while not out or out[-1][0] < end - 1:
            assert time.monotonic() < deadline, f"confluent-kafka stopped at {out[-1][0] if out else None}"
            for message in consumer.consume(10_000, timeout=1.0):
                assert message.error() is None, message.error()
                offset, key, value = message.offset(), message.key(), message.value()
                assert offset is not None
                assert isinstance(key, bytes)
                assert isinstance(value, bytes)
                out.append((offset, key, value))
    finally:
        consumer.close()
    return out


def consume_kafka_python(bootstrap: str, topic: str, end: int) -> list[Entry]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    partition = KafkaPythonPartition(topic, 0)
    out: list[Entry] = []
    try:
        consumer.assign([partition])
        consumer.seek(partition, 0)
        deadline = time.monotonic() + 60
        while not out or out[-1][0] < end - 1:
            assert time.monotonic() < deadline, f"kafka-python stopped at {out[-1][0] if out else None}"
            for records in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                out.extend((r.offset, r.key, r.value) for r in records)
    finally:
        consumer.close()
    return out


def check(consumed: list[Entry], acknowledged: dict[int, tuple[bytes, bytes]], active_base: int) -> None:
    offsets = [offset for offset, _, _ in consumed]
    assert offsets == sorted(set(offsets)), "offsets strictly increasing, none twice"
    for offset, key, value in consumed:
        assert acknowledged[offset] == (key, value), (
            f"offset {offset} does not hold what was acknowledged there"
        )
    below = [key for offset, key, _ in consumed if offset < active_base]
    assert len(below) == len(set(below)), "more than one record of a key below the active segment"
    latest: dict[bytes, tuple[int, bytes]] = {}
    for offset, (key, value) in sorted(acknowledged.items()):
        latest[key] = (offset, value)
    seen: dict[bytes, tuple[int, bytes]] = {key: (offset, value) for offset, key, value in consumed}
    assert seen == latest, "the latest value of every key, at its offset"
    assert len(consumed) < UPDATES // 10, f"{len(consumed)} records: compaction did not happen"
    assert len(below) > KEYS // 2, "most latest values lie below the active segment"


def test_a_compacted_topic_keeps_the_latest_value_of_every_key(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides={"log.cleaner.backoff.ms": "200"})
    topic = f"compacted-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    configs = {
        "cleanup.policy": "compact",
        "segment.bytes": str(SEGMENT_BYTES),
        "min.cleanable.dirty.ratio": "0.01",
    }
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1, config=configs)])[
        topic
    ].result(30)

    acknowledged = produce_updates(broker.bootstrap, topic)
    end = max(acknowledged) + 1
    assert sorted(acknowledged) == list(range(end))
    partition_dir = broker.data_dir / f"{topic}-0"
    assert len(segment_bases(partition_dir)) > 1 or SEGMENT_BYTES > 10_000_000
    active_base = wait_until_cleaned(partition_dir)
    assert 0 < active_base < end

    check(consume_confluent(broker.bootstrap, topic, end), acknowledged, active_base)
    check(consume_kafka_python(broker.bootstrap, topic, end), acknowledged, active_base)

    # Cleaned segments, and the gaps between them, survive a restart as they are.
    broker.restart()
    check(consume_confluent(broker.bootstrap, topic, end), acknowledged, active_base)


def test_consumer_offsets_is_compacted_and_the_latest_commits_survive_a_restart(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(
        overrides={
            "log.cleaner.backoff.ms": "200",
            "offsets.topic.num.partitions": "1",
            "offsets.topic.segment.bytes": "20000",
        }
    )
    topic = f"plain-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)
    group = f"group-{uuid.uuid4().hex[:8]}"
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        for i in range(1, 1501):
            consumer.commit(
                offsets=[ConfluentPartition(topic, 0, i), ConfluentPartition(topic, 1, 10 * i)],
                asynchronous=False,
            )
    finally:
        consumer.close()
    offsets_dir = broker.data_dir / "__consumer_offsets-0"
    active_base = wait_until_cleaned(offsets_dir)
    assert active_base > 1000, "the 1,500 commits filled several segments"
    below_active = sum(
        path.stat().st_size for path in offsets_dir.glob("*.log") if path.name < f"{active_base:020d}"
    )
    # only the latest commit of each partition (and the group's metadata) is left below the active segment
    assert below_active < 2000

    broker.restart()  # the coordinator reloads the group from the compacted partition
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        committed = consumer.committed(
            [ConfluentPartition(topic, 0), ConfluentPartition(topic, 1)], timeout=30
        )
    finally:
        consumer.close()
    assert [(p.partition, p.offset) for p in committed] == [(0, 1500), (1, 15000)]
