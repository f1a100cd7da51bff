"""FetchSnapshotResponse (API key 59), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SnapshotId:
    end_offset: int = 0
    epoch: int = 0


@dataclass(kw_only=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = 0
    leader_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class PartitionSnapshot:
    index: int = 0
    error_code: int = 0
    snapshot_id: SnapshotId = field(default_factory=SnapshotId)
    current_leader: LeaderIdAndEpoch = field(default_factory=LeaderIdAndEpoch)
    size: int = 0
    position: int = 0
    unaligned_records: bytes | memoryview | None = None


@dataclass(kw_only=True, slots=True)
class TopicSnapshot:
    name: str = ''
    partitions: list[PartitionSnapshot] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class FetchSnapshotResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    topics: list[TopicSnapshot] = field(default_factory=list)
    node_endpoints: list[NodeEndpoint] = field(default_factory=list)


_SnapshotId_SCHEMA = StructSchema(
    SnapshotId,
    (
        Field('end_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_LeaderIdAndEpoch_SCHEMA = StructSchema(
    LeaderIdAndEpoch,
    (
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionSnapshot_SCHEMA = StructSchema(
    PartitionSnapshot,
    (
        Field('index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('snapshot_id', 'struct', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, _SnapshotId_SCHEMA),
        Field('current_leader', 'struct', False, Versions(0, 32767), Versions(1, 0), 0, Versions(0, 32767), None, _LeaderIdAndEpoch_SCHEMA),
        Field('size', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('position', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('unaligned_records', 'records', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, None),
    ),
)
_TopicSnapshot_SCHEMA = StructSchema(
    TopicSnapshot,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionSnapshot_SCHEMA),
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
_FetchSnapshotResponse_SCHEMA = StructSchema(
    FetchSnapshotResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicSnapshot_SCHEMA),
        Field('node_endpoints', 'struct', True, Versions(1, 32767), Versions(1, 0), 0, Versions(1, 32767), [], _NodeEndpoint_SCHEMA),
    ),
)

SCHEMA = MessageSchema(59, 'response', 'FetchSnapshotResponse', Versions(0, 1), Versions(0, 32767), _FetchSnapshotResponse_SCHEMA)
