"""OffsetCommitRequest (API key 8), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetCommitRequestPartition:
    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    commit_timestamp: int = -1
    committed_metadata: str | None = ''


@dataclass(kw_only=True, slots=True)
class OffsetCommitRequestTopic:
    name: str = ''
    partitions: list[OffsetCommitRequestPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetCommitRequest:
    group_id: str = ''
    generation_id_or_member_epoch: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    topics: list[OffsetCommitRequestTopic] = field(default_factory=list)


_OffsetCommitRequestPartition_SCHEMA = StructSchema(
    OffsetCommitRequestPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_leader_epoch', 'int32', False, Versions(6, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('commit_timestamp', 'int64', False, Versions(1, 1), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('committed_metadata', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_OffsetCommitRequestTopic_SCHEMA = StructSchema(
    OffsetCommitRequestTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetCommitRequestPartition_SCHEMA),
    ),
)
_OffsetCommitRequest_SCHEMA = StructSchema(
    OffsetCommitRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('generation_id_or_member_epoch', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('member_id', 'string', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(7, 32767), Versions(7, 32767), None, Versions(1, 0), None, None),
        Field('retention_time_ms', 'int64', False, Versions(2, 4), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetCommitRequestTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(8, 'request', 'OffsetCommitRequest', Versions(0, 9), Versions(8, 32767), _OffsetCommitRequest_SCHEMA)
