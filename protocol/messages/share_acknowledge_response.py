"""ShareAcknowledgeResponse (API key 79), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = 0
    leader_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = None
    current_leader: LeaderIdAndEpoch = field(default_factory=LeaderIdAndEpoch)


@dataclass(kw_only=True, slots=True)
class ShareAcknowledgeTopicResponse:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None


@dataclass(kw_only=True, slots=True)
class ShareAcknowledgeResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    responses: list[ShareAcknowledgeTopicResponse] = field(default_factory=list)
    node_endpoints: list[NodeEndpoint] = field(default_factory=list)


_LeaderIdAndEpoch_SCHEMA = StructSchema(
    LeaderIdAndEpoch,
    (
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('current_leader', 'struct', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, _LeaderIdAndEpoch_SCHEMA),
    ),
)
_ShareAcknowledgeTopicResponse_SCHEMA = StructSchema(
    ShareAcknowledgeTopicResponse,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_NodeEndpoint_SCHEMA = StructSchema(
    NodeEndpoint,
    (
        Field('node_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_ShareAcknowledgeResponse_SCHEMA = StructSchema(
    ShareAcknowledgeResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ShareAcknowledgeTopicResponse_SCHEMA),
        Field('node_endpoints', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _NodeEndpoint_SCHEMA),
    ),
)

SCHEMA = MessageSchema(79, 'response', 'ShareAcknowledgeResponse', Versions(0, 0), Versions(0, 32767), _ShareAcknowledgeResponse_SCHEMA)
