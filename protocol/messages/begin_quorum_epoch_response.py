"""BeginQuorumEpochResponse (API key 53), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    error_code: int = 0
    leader_id: int = 0
    leader_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_name: str = ''
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class BeginQuorumEpochResponse:
    error_code: int = 0
    topics: list[TopicData] = field(default_factory=list)
    node_endpoints: list[NodeEndpoint] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_NodeEndpoint_SCHEMA = StructSchema(
    NodeEndpoint,
    (
        Field('node_id', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'uint16', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_BeginQuorumEpochResponse_SCHEMA = StructSchema(
    BeginQuorumEpochResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
        Field('node_endpoints', 'struct', True, Versions(1, 32767), Versions(1, 0), 0, Versions(1, 32767), [], _NodeEndpoint_SCHEMA),
    ),
)

SCHEMA = MessageSchema(53, 'response', 'BeginQuorumEpochResponse', Versions(0, 1), Versions(1, 32767), _BeginQuorumEpochResponse_SCHEMA)
