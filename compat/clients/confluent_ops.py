"""compat/clients/ops.py's operations through confluent-kafka (librdkafka), in process: its AdminClient and Producer.

Errors are named as librdkafka names them (KafkaError.name(): broker errors like INVALID_PARTITIONS, local ones with
a leading underscore like _UNKNOWN_TOPIC). librdkafka has no DescribeProducers, DescribeLogDirs or partition
reassignments.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    ElectionType,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from compat.clients.ops import Op, Ops, Result, run_in_process, unsupported

TIMEOUT_S = 60.0
OPERATIONS = {
    "set": AlterConfigOpType.SET,
    "delete": AlterConfigOpType.DELETE,
    "append": AlterConfigOpType.APPEND,
    "subtract": AlterConfigOpType.SUBTRACT,
}


def error_name(error: Exception) -> str:
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return str(error.args[0].name())
    return type(error).__name__


def offset_spec(spec: str) -> OffsetSpec:
    specs: Any = OffsetSpec  # its class methods are untyped
    if spec == "earliest":
        made = specs.earliest()
    elif spec == "latest":
        made = specs.latest()
    elif spec == "max":
        made = specs.max_timestamp()
    else:
        made = specs.for_timestamp(int(spec))
    assert isinstance(made, OffsetSpec)
    return made


class ConfluentOps(Ops):
    name = "confluent-kafka"

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "compat-confluent-ops"})
        producer: list[Producer] = []

        def the_producer() -> Producer:
            if not producer:
                settings = {
                    "bootstrap.servers": bootstrap,
                    "client.id": "compat-confluent-ops",
                    **(config or {}),
                }
                producer.append(Producer(settings))
            return producer[0]

        def create(topic: str, partitions: str, replication: str, *configs: str) -> dict[str, Any]:
            settings = dict(config.split("=", 1) for config in configs)
            new = NewTopic(
                topic, num_partitions=int(partitions), replication_factor=int(replication), config=settings
            )
            admin.create_topics([new])[topic].result(TIMEOUT_S)
            return {}

        def describe(topic: str) -> dict[str, Any]:
            answer = admin.describe_topics(TopicCollection([topic]))[topic].result(TIMEOUT_S)
            partitions = sorted(answer.partitions, key=lambda p: p.id)
            return {
                "partitions": [p.id for p in partitions],
                "replicas": [len(p.replicas) for p in partitions],
                "internal": answer.is_internal,
            }

        def delete(topic: str) -> dict[str, Any]:
            admin.delete_topics([topic])[topic].result(TIMEOUT_S)
            return {}

        def wait_gone(topic: str, ms: str) -> dict[str, Any]:
            deadline = time.monotonic() + int(ms) / 1000
            while True:
                try:
                    describe(topic)
                except KafkaException as error:
                    if error_name(error) == "UNKNOWN_TOPIC_OR_PART":
                        return {"gone": True}
                    raise
                if time.monotonic() > deadline:
                    return {"gone": False}
                time.sleep(0.05)

        def topics() -> dict[str, Any]:
            return {"topics": sorted(admin.list_topics(timeout=TIMEOUT_S).topics)}

        def configs(topic: str) -> dict[str, Any]:
            resource = ConfigResource(ResourceType.TOPIC, topic)
            entries = admin.describe_configs([resource])[resource].result(TIMEOUT_S)
            return {
                "configs": {name: entry.value for name, entry in entries.items()},
                "sources": {name: ConfigSource(entry.source).name for name, entry in entries.items()},
            }

        def offsets(topic: str, partition: str, spec: str) -> dict[str, Any]:
            tp = TopicPartition(topic, int(partition))
            answer = admin.list_offsets({tp: offset_spec(spec)})
            (future,) = answer.values()
            info = future.result(TIMEOUT_S)
            return {"offset": info.offset, "timestamp": info.timestamp}

        def produce(topic: str, partition: str, size: str) -> dict[str, Any]:
            outcome: list[tuple[KafkaError | None, Message]] = []
            the_producer().produce(
                topic,
                value=b"x" * int(size),
                partition=int(partition),
                on_delivery=lambda error, message: outcome.append((error, message)),
            )
            the_producer().flush(TIMEOUT_S)
            ((error, message),) = outcome
            if error is not None:
                raise KafkaException(error)
            return {"partition": message.partition(), "offset": message.offset()}

        def groups() -> dict[str, Any]:
            answer = admin.list_consumer_groups().result(TIMEOUT_S)
            if answer.errors:
                raise KafkaException(answer.errors[0])
            return {"groups": {g.group_id: g.state.name for g in answer.valid}}

        def describe_group(group: str) -> dict[str, Any]:
            answer = admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)
            return {
                "state": answer.state.name,
                "assignor": answer.partition_assignor,
                "members": [
                    {
                        "client_id": m.client_id,
                        "host": m.host,
                        "partitions": sorted(tp.partition for tp in m.assignment.topic_partitions),
                    }
                    for m in answer.members
                ],
            }

        def group_offsets(group: str) -> dict[str, Any]:
            request = [ConsumerGroupTopicPartitions(group)]
            answer = admin.list_consumer_group_offsets(request)[group].result(TIMEOUT_S)
            ordered = sorted(answer.topic_partitions, key=lambda tp: (tp.topic, tp.partition))
            return {"offsets": {f"{tp.topic}:{tp.partition}": tp.offset for tp in ordered}}

        def create_partitions(topic: str, count: str, *assignments: str) -> dict[str, Any]:
            replicas = [[int(b) for b in a.split(",")] for a in assignments]
            new = (
                NewPartitions(topic, int(count), replica_assignment=replicas)
                if replicas
                else NewPartitions(topic, int(count))
            )
            admin.create_partitions([new])[topic].result(TIMEOUT_S)
            return {}

        def alter_configs(resource: ConfigResource, changes: Sequence[str]) -> dict[str, Any]:
            for change in changes:
                op, _, setting = change.partition(":")
                name, eq, value = setting.partition("=")
                resource.add_incremental_config(
                    ConfigEntry(name, value if eq else None, incremental_operation=OPERATIONS[op])
                )
            admin.incremental_alter_configs([resource])[resource].result(TIMEOUT_S)
            return {}

        def broker_resource(broker: str) -> ConfigResource:
            return ConfigResource(ResourceType.BROKER, "" if broker == "-" else broker)

        def broker_configs(broker: str) -> dict[str, Any]:
            resource = broker_resource(broker)
            entries = admin.describe_configs([resource])[resource].result(TIMEOUT_S)
            return {
                "configs": {name: entry.value for name, entry in entries.items()},
                "sources": {name: ConfigSource(entry.source).name for name, entry in entries.items()},
                "writable": sorted(name for name, entry in entries.items() if not entry.is_read_only),
            }

        def delete_records(topic: str, partition: str, offset: str) -> dict[str, Any]:
            tp = TopicPartition(topic, int(partition), int(offset))
            (future,) = admin.delete_records([tp]).values()
            return {"low_watermark": future.result(TIMEOUT_S).low_watermark}

        def elect_leaders(election_type: str, topic: str, partition: str) -> dict[str, Any]:
            tp = TopicPartition(topic, int(partition))
            answer = admin.elect_leaders(ElectionType[election_type], [tp]).result(TIMEOUT_S)
            error = answer.get(tp)
            if error is not None:
                raise KafkaException(error)
            return {}

        def replicas(topic: str) -> dict[str, Any]:
            answer = admin.describe_topics(TopicCollection([topic]))[topic].result(TIMEOUT_S)
            return {
                "partitions": {
                    str(p.id): {
                        "leader": p.leader.id if p.leader is not None else -1,
                        "replicas": [n.id for n in p.replicas],
                        "isr": [n.id for n in p.isr],
                    }
                    for p in answer.partitions
                }
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
            "producers": lambda *_: unsupported(("producers",), "librdkafka has no DescribeProducers"),
            "create-partitions": create_partitions,
            "alter-configs": lambda topic, *c: alter_configs(ConfigResource(ResourceType.TOPIC, topic), c),
            "alter-broker-configs": lambda broker, *c: alter_configs(broker_resource(broker), c),
            "broker-configs": broker_configs,
            "delete-records": delete_records,
            "log-dirs": lambda *_: unsupported(("log-dirs",), "librdkafka has no DescribeLogDirs"),
            "elect-leaders": elect_leaders,
            "reassign": lambda *_: unsupported(
                ("reassign",), "librdkafka has no AlterPartitionReassignments"
            ),
            "reassignments": lambda *_: unsupported(("reassignments",), "librdkafka has no reassignments"),
            "replicas": replicas,
        }
        try:
            return run_in_process(ops, handlers, error_name)
        finally:
            for p in producer:
                p.flush(10)
