"""DescribeTopicPartitionsResponse (API key 75), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeTopicPartitionsResponsePartition:
    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1
    replica_nodes: list[int] = field(default_factory=list)
    isr_nodes: list[int] = field(default_factory=list)
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None
    offline_replicas: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeTopicPartitionsResponseTopic:
    error_code: int = 0
    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: list[DescribeTopicPartitionsResponsePartition] = field(default_factory=list)
    topic_authorized_operations: int = -2147483648


@dataclass(kw_only=True, slots=True)
class Cursor:
    topic_name: str = ''
    partition_index: int = 0


@dataclass(kw_only=True, slots=True)
class DescribeTopicPartitionsResponse:
    throttle_time_ms: int = 0
    topics: list[DescribeTopicPartitionsResponseTopic] = field(default_factory=list)
    next_cursor: Cursor | None = None


_DescribeTopicPartitionsResponsePartition_SCHEMA = StructSchema(
    DescribeTopicPartitionsResponsePartition,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('replica_nodes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('isr_nodes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('eligible_leader_replicas', 'int32', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('last_known_elr', 'int32', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('offline_replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_DescribeTopicPartitionsResponseTopic_SCHEMA = StructSchema(
    DescribeTopicPartitionsResponseTopic,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('name', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('is_internal', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeTopicPartitionsResponsePartition_SCHEMA),
        Field('topic_authorized_operations', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)
_Cursor_SCHEMA = StructSchema(
    Cursor,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DescribeTopicPartitionsResponse_SCHEMA = StructSchema(
    DescribeTopicPartitionsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeTopicPartitionsResponseTopic_SCHEMA),
        Field('next_cursor', 'struct', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, _Cursor_SCHEMA),
    ),
)

SCHEMA = MessageSchema(75, 'response', 'DescribeTopicPartitionsResponse', Versions(0, 0), Versions(0, 32767), _DescribeTopicPartitionsResponse_SCHEMA)
