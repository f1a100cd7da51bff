"""ProduceResponse (API key 0), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class BatchIndexAndErrorMessage:
    batch_index: int = 0
    batch_index_error_message: str | None = None


@dataclass(kw_only=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = -1
    leader_epoch: int = -1


@dataclass(kw_only=True, slots=True)
class PartitionProduceResponse:
    index: int = 0
    error_code: int = 0
    base_offset: int = 0
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: list[BatchIndexAndErrorMessage] = field(default_factory=list)
    error_message: str | None = None
    current_leader: LeaderIdAndEpoch = field(default_factory=LeaderIdAndEpoch)


@dataclass(kw_only=True, slots=True)
class TopicProduceResponse:
    name: str = ''
    partition_responses: list[PartitionProduceResponse] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None


@dataclass(kw_only=True, slots=True)
class ProduceResponse:
    responses: list[TopicProduceResponse] = field(default_factory=list)
    throttle_time_ms: int = 0
    node_endpoints: list[NodeEndpoint] = field(default_factory=list)


_BatchIndexAndErrorMessage_SCHEMA = StructSchema(
    BatchIndexAndErrorMessage,
    (
        Field('batch_index', 'int32', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('batch_index_error_message', 'string', False, Versions(8, 32767), Versions(8, 32767), None, Versions(1, 0), None, None),
    ),
)
_LeaderIdAndEpoch_SCHEMA = StructSchema(
    LeaderIdAndEpoch,
    (
        Field('leader_id', 'int32', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('leader_epoch', 'int32', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_PartitionProduceResponse_SCHEMA = StructSchema(
    PartitionProduceResponse,
    (
        Field('index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('base_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('log_append_time_ms', 'int64', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('log_start_offset', 'int64', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('record_errors', 'struct', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], _BatchIndexAndErrorMessage_SCHEMA),
        Field('error_message', 'string', False, Versions(8, 32767), Versions(8, 32767), None, Versions(1, 0), None, None),
        Field('current_leader', 'struct', False, Versions(10, 32767), Versions(1, 0), 0, Versions(10, 32767), None, _LeaderIdAndEpoch_SCHEMA),
    ),
)
_TopicProduceResponse_SCHEMA = StructSchema(
    TopicProduceResponse,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionProduceResponse_SCHEMA),
    ),
)
_NodeEndpoint_SCHEMA = StructSchema(
    NodeEndpoint,
    (
        Field('node_id', 'int32', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack', 'string', False, Versions(10, 32767), Versions(10, 32767), None, Versions(1, 0), None, None),
    ),
)
_ProduceResponse_SCHEMA = StructSchema(
    ProduceResponse,
    (
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicProduceResponse_SCHEMA),
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('node_endpoints', 'struct', True, Versions(10, 32767), Versions(1, 0), 0, Versions(10, 32767), [], _NodeEndpoint_SCHEMA),
    ),
)

SCHEMA = MessageSchema(0, 'response', 'ProduceResponse', Versions(0, 11), Versions(9, 32767), _ProduceResponse_SCHEMA)
