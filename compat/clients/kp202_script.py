"""Runs inside .venv-kp202 (Python 3.11, kafka-python 2.0.2): the old client that never negotiates versions.

    python kp202_script.py BOOTSTRAP create-topic TOPIC PARTITIONS
    python kp202_script.py BOOTSTRAP produce TOPIC CODEC      < records (compat/records.py to_line format)
    python kp202_script.py BOOTSTRAP consume TOPIC PARTITIONS COUNT
    python kp202_script.py BOOTSTRAP end-offsets TOPIC PARTITIONS
    python kp202_script.py BOOTSTRAP codecs
    python kp202_script.py BOOTSTRAP ops CONFIG_JSON         < operations (compat/clients/ops.py), one per line
    python kp202_script.py BOOTSTRAP group-member TOPIC GROUP CONFIG_JSON

Prints JSON lines: acknowledgements {"index", "partition", "offset"}, consumed records (records.consumed_to_json),
end offsets {"partition": offset}, the codecs this installation can send {"codec": reason-or-null}, one result per
operation, or a group member's assignments, records and commits (until stdin closes; then it leaves the group).
"""

import base64
import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import kafka.codec
import kafka.errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.consumer.subscription_state import ConsumerRebalanceListener
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


def options(config_json: str) -> dict[str, Any]:
    """kafka-python's own options; values that look like integers become ints."""
    config: dict[str, str] = json.loads(config_json)
    return {key: int(value) if value.lstrip("-").isdigit() else value for key, value in config.items()}


def raise_code(code: int) -> None:
    if code:
        raise kafka.errors.for_code(code)()


def ops(bootstrap: str, config_json: str) -> None:
    """compat/clients/ops.py's operations. kafka-python 2.0.2's admin returns responses without raising for their
    error codes: those are named as kafka-python names the code (kafka.errors.for_code)."""
    admin: Any = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-kp202-ops")
    producers: list[Any] = []

    def create(topic: str, partitions: str, replication: str, *configs: str) -> dict[str, Any]:
        settings = dict(config.split("=", 1) for config in configs)
        new = NewTopic(topic, int(partitions), int(replication), topic_configs=settings)
        response = admin.create_topics([new])
        for error in response.topic_errors:
            raise_code(error[1])
        return {}

    def describe(topic: str) -> dict[str, Any]:
        (answer,) = admin.describe_topics([topic])
        raise_code(answer["error_code"])
        partitions = sorted(answer["partitions"], key=lambda p: p["partition"])
        return {
            "partitions": [p["partition"] for p in partitions],
            "replicas": [len(p["replicas"]) for p in partitions],
            "internal": answer["is_internal"],
        }

    def delete(topic: str) -> dict[str, Any]:
        response = admin.delete_topics([topic])
        for _, code in response.topic_error_codes:
            raise_code(code)
        return {}

    def wait_gone(topic: str, ms: str) -> dict[str, Any]:
        deadline = time.monotonic() + int(ms) / 1000
        while topic in admin.list_topics():
            if time.monotonic() > deadline:
                return {"gone": False}
            time.sleep(0.05)
        return {"gone": True}

    def topics() -> dict[str, Any]:
        return {"topics": sorted(admin.list_topics())}

    def configs(topic: str) -> dict[str, Any]:
        (response,) = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        ((code, _message, _type, _name, entries),) = response.resources
        raise_code(code)
        return {"configs": {entry[0]: entry[1] for entry in entries}}

    def offsets(topic: str, partition: str, spec: str) -> dict[str, Any]:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
        try:
            tp = TopicPartition(topic, int(partition))
            if spec == "earliest":
                return {"offset": consumer.beginning_offsets([tp])[tp]}
            if spec == "latest":
                return {"offset": consumer.end_offsets([tp])[tp]}
            if spec == "max":
                return {"error": "unsupported", "message": "kafka-python 2.0.2 has no max-timestamp query"}
            found = consumer.offsets_for_times({tp: int(spec)})[tp]
            if found is None:
                return {"offset": -1, "timestamp": -1}
            return {"offset": found.offset, "timestamp": found.timestamp}
        finally:
            consumer.close()

    def produce(topic: str, partition: str, size: str) -> dict[str, Any]:
        if not producers:
            settings = options(config_json)
            producers.append(
                KafkaProducer(bootstrap_servers=bootstrap, client_id="compat-kp202-ops", **settings)
            )
        number = int(partition)
        future = producers[0].send(topic, value=b"x" * int(size), partition=None if number < 0 else number)
        metadata = future.get(timeout=CONSUME_TIMEOUT_S)
        return {"partition": metadata.partition, "offset": metadata.offset}

    def groups() -> dict[str, Any]:
        # ListGroups v0-v2 carry no state.
        return {"groups": {group_id: None for group_id, _protocol_type in admin.list_consumer_groups()}}

    def describe_group(group: str) -> dict[str, Any]:
        (answer,) = admin.describe_consumer_groups([group])
        members = []
        for member in answer.members:
            assigned = member.member_assignment.assignment if member.member_assignment else []
            members.append(
                {
                    "client_id": member.client_id,
                    "host": member.client_host,
                    "partitions": sorted(p for _topic, partitions in assigned for p in partitions),
                }
            )
        return {"state": answer.state, "assignor": answer.protocol, "members": members}

    def group_offsets(group: str) -> dict[str, Any]:
        answer = admin.list_consumer_group_offsets(group)
        return {"offsets": {f"{tp.topic}:{tp.partition}": o.offset for tp, o in sorted(answer.items())}}

    handlers: dict[str, Callable[..., dict[str, Any]]] = {
        "create": create,
        "describe": describe,
        "delete": delete,
        "wait-gone": wait_gone,
        "topics": topics,
        "configs": configs,
        "offsets": offsets,
        "produce": produce,
        "groups": groups,
        "describe-group": describe_group,
        "group-offsets": group_offsets,
    }
    for line in sys.stdin:
        op = line.rstrip("\n").split("\t")
        handler = handlers.get(op[0])
        if handler is None:
            result = {"error": "unsupported", "message": f"kafka-python 2.0.2 has no {op[0]} here"}
        else:
            try:
                result = handler(*op[1:])
            except Exception as error:
                result = {"error": type(error).__name__, "message": str(error)}
        print(json.dumps({"op": op[0], **result}), flush=True)
    for producer in producers:
        producer.close(timeout=10)
    admin.close()


def group_member(bootstrap: str, topic: str, group: str, config_json: str) -> None:
    """An application's group member: subscribe, process, commit synchronously; leave when stdin closes."""
    stop = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            print(json.dumps({"revoked": sorted(tp.partition for tp in revoked)}), flush=True)

        def on_partitions_assigned(self, assigned: Any) -> None:
            print(json.dumps({"assigned": sorted(tp.partition for tp in assigned)}), flush=True)

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **options(config_json),
    )
    consumer.subscribe([topic], listener=Listener())
    while not stop.is_set():
        batches = consumer.poll(timeout_ms=200)
        count = 0
        for batch in batches.values():
            for r in batch:
                value = base64.b64encode(r.value).decode()
                print(json.dumps({"partition": r.partition, "offset": r.offset, "value": value}), flush=True)
                count += 1
        if count:
            consumer.commit()
            print(json.dumps({"committed": count}), flush=True)
    consumer.close()
    print(json.dumps({"closed": True}), flush=True)


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
            "ops": ops,
            "group-member": group_member,
        }
        commands[command](bootstrap, *args)
