"""FetchResponse (API key 1), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EpochEndOffset:
    epoch: int = -1
    end_offset: int = -1


@dataclass(kw_only=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = -1
    leader_epoch: int = -1


@dataclass(kw_only=True, slots=True)
class SnapshotId:
    end_offset: int = -1
    epoch: int = -1


@dataclass(kw_only=True, slots=True)
class AbortedTransaction:
    producer_id: int = 0
    first_offset: int = 0


@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    error_code: int = 0
    high_watermark: int = 0
    last_stable_offset: int = -1
    log_start_offset: int = -1
    diverging_epoch: EpochEndOffset = field(default_factory=EpochEndOffset)
    current_leader: LeaderIdAndEpoch = field(default_factory=LeaderIdAndEpoch)
    snapshot_id: SnapshotId = field(default_factory=SnapshotId)
    aborted_transactions: list[AbortedTransaction] = field(default_factory=list)
    preferred_read_replica: int = -1
    records: bytes | memoryview | None = None


@dataclass(kw_only=True, slots=True)
class FetchableTopicResponse:
    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None


@dataclass(kw_only=True, slots=True)
class FetchResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    session_id: int = 0
    responses: list[FetchableTopicResponse] = field(default_factory=list)
    node_endpoints: list[NodeEndpoint] = field(default_factory=list)


_EpochEndOffset_SCHEMA = StructSchema(
    EpochEndOffset,
    (
        Field('epoch', 'int32', False, Versions(12, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('end_offset', 'int64', False, Versions(12, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_LeaderIdAndEpoch_SCHEMA = StructSchema(
    LeaderIdAndEpoch,
    (
        Field('leader_id', 'int32', False, Versions(12, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('leader_epoch', 'int32', False, Versions(12, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_SnapshotId_SCHEMA = StructSchema(
    SnapshotId,
    (
        Field('end_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_AbortedTransaction_SCHEMA = StructSchema(
    AbortedTransaction,
    (
        Field('producer_id', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('first_offset', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('high_watermark', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_stable_offset', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('log_start_offset', 'int64', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('diverging_epoch', 'struct', False, Versions(12, 32767), Versions(1, 0), 0, Versions(12, 32767), None, _EpochEndOffset_SCHEMA),
        Field('current_leader', 'struct', False, Versions(12, 32767), Versions(1, 0), 1, Versions(12, 32767), None, _LeaderIdAndEpoch_SCHEMA),
        Field('snapshot_id', 'struct', False, Versions(12, 32767), Versions(1, 0), 2, Versions(12, 32767), None, _SnapshotId_SCHEMA),
        Field('aborted_transactions', 'struct', True, Versions(4, 32767), Versions(4, 32767), None, Versions(1, 0), [], _AbortedTransaction_SCHEMA),
        Field('preferred_read_replica', 'int32', False, Versions(11, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('records', 'records', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_FetchableTopicResponse_SCHEMA = StructSchema(
    FetchableTopicResponse,
    (
        Field('topic', 'string', False, Versions(0, 12), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(13, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_NodeEndpoint_SCHEMA = StructSchema(
    NodeEndpoint,
    (
        Field('node_id', 'int32', False, Versions(16, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(16, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(16, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack', 'string', False, Versions(16, 32767), Versions(16, 32767), None, Versions(1, 0), None, None),
    ),
)
_FetchResponse_SCHEMA = StructSchema(
    FetchResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('session_id', 'int32', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FetchableTopicResponse_SCHEMA),
        Field('node_endpoints', 'struct', True, Versions(16, 32767), Versions(1, 0), 0, Versions(16, 32767), [], _NodeEndpoint_SCHEMA),
    ),
)

SCHEMA = MessageSchema(1, 'response', 'FetchResponse', Versions(0, 17), Versions(12, 32767), _FetchResponse_SCHEMA)
