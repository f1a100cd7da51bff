"""Runs inside .venv-kp202 (Python 3.11, kafka-python 2.0.2): the old client that never negotiates versions.

    python kp202_script.py BOOTSTRAP create-topic TOPIC PARTITIONS
    python kp202_script.py BOOTSTRAP produce TOPIC CODEC      < records (compat/records.py to_line format)
    python kp202_script.py BOOTSTRAP consume TOPIC PARTITIONS COUNT
    python kp202_script.py BOOTSTRAP end-offsets TOPIC PARTITIONS
    python kp202_script.py BOOTSTRAP codecs

Prints JSON lines: acknowledgements {"index", "partition", "offset"}, consumed records (records.consumed_to_json),
end offsets {"partition": offset}, or the codecs this installation can send {"codec": reason-or-null}.
"""

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import kafka.codec
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.version import __version__ as kafka_version

# compat/records.py (and compat/__init__.py) are standard-library only, so they work here without the rest of compat/.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from compat import records

CONSUME_TIMEOUT_S = 120.0
CODEC_CHECKS: dict[str, tuple[Callable[[], object], str]] = {
    "none": (lambda: True, ""),
    "gzip": (kafka.codec.has_gzip, ""),
    "snappy": (kafka.codec.has_snappy, "python-snappy"),
    "lz4": (kafka.codec.has_lz4, "lz4"),
    "zstd": (kafka.codec.has_zstd, "zstandard"),
}
COMPRESSION_TYPES: dict[str, Literal["gzip", "snappy", "lz4", "zstd"] | None] = {
    "none": None,
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "zstd": "zstd",
}


def create_topic(bootstrap: str, topic: str, partitions: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-kp202-admin")
    try:
        admin.create_topics([NewTopic(topic, num_partitions=int(partitions), replication_factor=1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, codec: str) -> None:
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="compat-kp202-producer",
        compression_type=COMPRESSION_TYPES[codec],
    )
    futures = []
    for index, line in enumerate(sys.stdin):
        record = records.from_line(index, line)
        future = producer.send(
            topic,
            key=record.key,
            value=record.value,
            headers=list(record.headers),
            partition=record.partition,
            timestamp_ms=record.timestamp,
        )
        futures.append((index, future))
    producer.flush(timeout=CONSUME_TIMEOUT_S)
    for index, future in futures:
        metadata = future.get(timeout=0)
        print(json.dumps({"index": index, "partition": metadata.partition, "offset": metadata.offset}))
    producer.close(timeout=10)


def consume(bootstrap: str, topic: str, partitions: str, count: str) -> None:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id="compat-kp202-consumer",
        group_id=None,
        enable_auto_commit=False,
    )
    assignment = [TopicPartition(topic, p) for p in range(int(partitions))]
    consumer.assign(assignment)
    consumer.seek_to_beginning(*assignment)
    received = 0
    deadline = time.monotonic() + CONSUME_TIMEOUT_S
    while received < int(count) and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=1000, max_records=10000).values():
            for r in batch:
                consumed = records.Consumed(
                    partition=r.partition,
                    offset=r.offset,
                    key=r.key,
                    value=r.value,
                    headers=tuple(r.headers),
                    timestamp=r.timestamp,
                )
                print(records.consumed_to_json(consumed))
                received += 1
    consumer.close()


def end_offsets(bootstrap: str, topic: str, partitions: str) -> None:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    offsets = consumer.end_offsets([TopicPartition(topic, p) for p in range(int(partitions))])
    print(json.dumps({str(tp.partition): offset for tp, offset in offsets.items()}))
    consumer.close()


def codecs() -> None:
    print(
        json.dumps(
            {
                codec: None if available() else f"kafka-python 2.0.2 needs the package {package} for {codec}"
                for codec, (available, package) in CODEC_CHECKS.items()
            }
        )
    )


if __name__ == "__main__":
    assert kafka_version == "2.0.2", kafka_version
    bootstrap, command, *args = sys.argv[1:]
    if command == "codecs":
        codecs()
    else:
        commands: dict[str, Callable[..., None]] = {
            "create-topic": create_topic,
            "produce": produce,
            "consume": consume,
            "end-offsets": end_offsets,
        }
        commands[command](bootstrap, *args)
