"""DescribeQuorumResponse (API key 55), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ReplicaState:
    replica_id: int = 0
    replica_directory_id: uuid.UUID = ZERO_UUID
    log_end_offset: int = 0
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = ''
    leader_id: int = 0
    leader_epoch: int = 0
    high_watermark: int = 0
    current_voters: list[ReplicaState] = field(default_factory=list)
    observers: list[ReplicaState] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_name: str = ''
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class Listener:
    name: str = ''
    host: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class Node:
    node_id: int = 0
    listeners: list[Listener] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeQuorumResponse:
    error_code: int = 0
    error_message: str | None = ''
    topics: list[TopicData] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)


_ReplicaState_SCHEMA = StructSchema(
    ReplicaState,
    (
        Field('replica_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replica_directory_id', 'uuid', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('log_end_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_fetch_timestamp', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('last_caught_up_timestamp', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(2, 32767), Versions(2, 32767), None, Versions(1, 0), '', None),
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('high_watermark', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_voters', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReplicaState_SCHEMA),
        Field('observers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReplicaState_SCHEMA),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_Listener_SCHEMA = StructSchema(
    Listener,
    (
        Field('name', 'string', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('host', 'string', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'uint16', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_Node_SCHEMA = StructSchema(
    Node,
    (
        Field('node_id', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('listeners', 'struct', True, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), [], _Listener_SCHEMA),
    ),
)
_DescribeQuorumResponse_SCHEMA = StructSchema(
    DescribeQuorumResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(2, 32767), Versions(2, 32767), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
        Field('nodes', 'struct', True, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), [], _Node_SCHEMA),
    ),
)

SCHEMA = MessageSchema(55, 'response', 'DescribeQuorumResponse', Versions(0, 2), Versions(0, 32767), _DescribeQuorumResponse_SCHEMA)
