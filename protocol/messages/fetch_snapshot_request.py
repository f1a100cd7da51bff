"""FetchSnapshotRequest (API key 59), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
class PartitionSnapshot:
    partition: int = 0
    current_leader_epoch: int = 0
    snapshot_id: SnapshotId = field(default_factory=SnapshotId)
    position: int = 0
    replica_directory_id: uuid.UUID = ZERO_UUID


@dataclass(kw_only=True, slots=True)
class TopicSnapshot:
    name: str = ''
    partitions: list[PartitionSnapshot] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FetchSnapshotRequest:
    cluster_id: str | None = None
    replica_id: int = -1
    max_bytes: int = 2147483647
    topics: list[TopicSnapshot] = field(default_factory=list)


_SnapshotId_SCHEMA = StructSchema(
    SnapshotId,
    (
        Field('end_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionSnapshot_SCHEMA = StructSchema(
    PartitionSnapshot,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('snapshot_id', 'struct', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, _SnapshotId_SCHEMA),
        Field('position', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replica_directory_id', 'uuid', False, Versions(1, 32767), Versions(1, 0), 0, Versions(1, 32767), ZERO_UUID, None),
    ),
)
_TopicSnapshot_SCHEMA = StructSchema(
    TopicSnapshot,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionSnapshot_SCHEMA),
    ),
)
_FetchSnapshotRequest_SCHEMA = StructSchema(
    FetchSnapshotRequest,
    (
        Field('cluster_id', 'string', False, Versions(0, 32767), Versions(0, 32767), 0, Versions(0, 32767), None, None),
        Field('replica_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('max_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 2147483647, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicSnapshot_SCHEMA),
    ),
)

SCHEMA = MessageSchema(59, 'request', 'FetchSnapshotRequest', Versions(0, 1), Versions(0, 32767), _FetchSnapshotRequest_SCHEMA)
