"""compat/clients/ops.py's operations through kafka-python 3.x, in process: its KafkaAdminClient and KafkaProducer.

Where the admin client hands back a response's error code instead of raising (describe_topics), the error is named
as kafka-python names that code (kafka.errors.for_code). Config values that look like integers are passed as ints
(kafka-python's own options, e.g. {"max_block_ms": "2000"}).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import kafka.errors
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, OffsetSpec

from compat.clients.ops import Op, Ops, Result, run_in_process

TIMEOUT_S = 60.0
SPECS = {"earliest": OffsetSpec.EARLIEST, "latest": OffsetSpec.LATEST, "max": OffsetSpec.MAX_TIMESTAMP}


def options(config: Mapping[str, str] | None) -> dict[str, Any]:
    return {
        key: int(value) if value.lstrip("-").isdigit() else value for key, value in (config or {}).items()
    }


def error_name(error: Exception) -> str:
    return type(error).__name__


def raise_code(code: int) -> None:
    if code:
        raise kafka.errors.for_code(code)()


class KafkaPythonOps(Ops):
    name = "kafka-python"

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-kafka-python-ops")
        producer: list[KafkaProducer] = []

        def the_producer() -> KafkaProducer:
            if not producer:
                producer.append(
                    KafkaProducer(
                        bootstrap_servers=bootstrap, client_id="compat-kafka-python-ops", **options(config)
                    )
                )
            return producer[0]

        def create(topic: str, partitions: str, replication: str, *configs: str) -> dict[str, Any]:
            settings = dict(config.split("=", 1) for config in configs)
            new = {
                "num_partitions": int(partitions),
                "replication_factor": int(replication),
                "configs": settings,
            }
            admin.create_topics({topic: new})
            return {}

        def describe(topic: str) -> dict[str, Any]:
            (answer,) = admin.describe_topics([topic])
            raise_code(answer["error_code"])
            partitions = sorted(answer["partitions"], key=lambda p: p["partition_index"])
            return {
                "partitions": [p["partition_index"] for p in partitions],
                "replicas": [len(p["replica_nodes"]) for p in partitions],
                "internal": answer["is_internal"],
            }

        def delete(topic: str) -> dict[str, Any]:
            admin.delete_topics([topic])
            return {}

        def wait_gone(topic: str, ms: str) -> dict[str, Any]:
            deadline = time.monotonic() + int(ms) / 1000
            while True:
                (answer,) = admin.describe_topics([topic])
                if answer["error_code"] == kafka.errors.UnknownTopicOrPartitionError.errno:
                    return {"gone": True}
                raise_code(answer["error_code"])
                if time.monotonic() > deadline:
                    return {"gone": False}
                time.sleep(0.05)

        def topics() -> dict[str, Any]:
            return {"topics": sorted(admin.list_topics())}

        def configs(topic: str) -> dict[str, Any]:
            answer = admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
            )
            entries = answer["topic"][topic]
            return {
                "configs": {name: entry["value"] for name, entry in entries.items()},
                "sources": {name: entry["config_source"] for name, entry in entries.items()},
            }

        def offsets(topic: str, partition: str, spec: str) -> dict[str, Any]:
            tp = TopicPartition(topic, int(partition))
            answer = admin.list_partition_offsets({tp: SPECS[spec] if spec in SPECS else int(spec)})
            return {"offset": answer[tp].offset, "timestamp": answer[tp].timestamp}

        def produce(topic: str, partition: str, size: str) -> dict[str, Any]:
            number = int(partition)
            future = the_producer().send(
                topic, value=b"x" * int(size), partition=None if number < 0 else number
            )
            metadata = future.get(timeout=TIMEOUT_S)
            return {"partition": metadata.partition, "offset": metadata.offset}

        def groups() -> dict[str, Any]:
            return {"groups": {g["group_id"]: g["group_state"] for g in admin.list_groups()}}

        def describe_group(group: str) -> dict[str, Any]:
            answer = admin.describe_groups([group])[group]
            members = []
            for member in answer["members"]:
                assigned = (member.get("member_assignment") or {}).get("assigned_partitions") or []
                members.append(
                    {
                        "client_id": member["client_id"],
                        "host": member["client_host"],
                        "partitions": sorted(p for topic in assigned for p in topic["partitions"]),
                    }
                )
            return {"state": answer["group_state"], "assignor": answer["protocol_data"], "members": members}

        def group_offsets(group: str) -> dict[str, Any]:
            answer = admin.list_group_offsets(group)[group]
            return {"offsets": {f"{tp.topic}:{tp.partition}": o.offset for tp, o in sorted(answer.items())}}

        def producers(topic: str, partition: str) -> dict[str, Any]:
            tp = TopicPartition(topic, int(partition))
            answer = admin.describe_producers([tp])[tp]
            return {
                "producers": [
                    {
                        "producer_id": p.producer_id,
                        "epoch": p.producer_epoch,
                        "last_sequence": p.last_sequence,
                    }
                    for p in answer.active_producers
                ]
            }

        handlers = {
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
            "producers": producers,
        }
        try:
            return run_in_process(ops, handlers, error_name)
        finally:
            for p in producer:
                p.close(timeout=10)
            admin.close()
