"""MetadataResponse (API key 3), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class MetadataResponseBroker:
    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None


@dataclass(kw_only=True, slots=True)
class MetadataResponsePartition:
    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1
    replica_nodes: list[int] = field(default_factory=list)
    isr_nodes: list[int] = field(default_factory=list)
    offline_replicas: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class MetadataResponseTopic:
    error_code: int = 0
    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: list[MetadataResponsePartition] = field(default_factory=list)
    topic_authorized_operations: int = -2147483648


@dataclass(kw_only=True, slots=True)
class MetadataResponse:
    throttle_time_ms: int = 0
    brokers: list[MetadataResponseBroker] = field(default_factory=list)
    cluster_id: str | None = None
    controller_id: int = -1
    topics: list[MetadataResponseTopic] = field(default_factory=list)
    cluster_authorized_operations: int = -2147483648


_MetadataResponseBroker_SCHEMA = StructSchema(
    MetadataResponseBroker,
    (
        Field('node_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack', 'string', False, Versions(1, 32767), Versions(1, 32767), None, Versions(1, 0), None, None),
    ),
)
_MetadataResponsePartition_SCHEMA = StructSchema(
    MetadataResponsePartition,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('replica_nodes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('isr_nodes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('offline_replicas', 'int32', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_MetadataResponseTopic_SCHEMA = StructSchema(
    MetadataResponseTopic,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('name', 'string', False, Versions(0, 32767), Versions(12, 32767), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('is_internal', 'bool', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _MetadataResponsePartition_SCHEMA),
        Field('topic_authorized_operations', 'int32', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)
_MetadataResponse_SCHEMA = StructSchema(
    MetadataResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('brokers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _MetadataResponseBroker_SCHEMA),
        Field('cluster_id', 'string', False, Versions(2, 32767), Versions(2, 32767), None, Versions(1, 0), None, None),
        Field('controller_id', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _MetadataResponseTopic_SCHEMA),
        Field('cluster_authorized_operations', 'int32', False, Versions(8, 10), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)

SCHEMA = MessageSchema(3, 'response', 'MetadataResponse', Versions(0, 12), Versions(9, 32767), _MetadataResponse_SCHEMA)
