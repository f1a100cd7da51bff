"""OffsetFetchResponse (API key 9), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetFetchResponsePartition:
    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    metadata: str | None = ''
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetFetchResponseTopic:
    name: str = ''
    partitions: list[OffsetFetchResponsePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetFetchResponsePartitions:
    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    metadata: str | None = ''
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetFetchResponseTopics:
    name: str = ''
    partitions: list[OffsetFetchResponsePartitions] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetFetchResponseGroup:
    group_id: str = ''
    topics: list[OffsetFetchResponseTopics] = field(default_factory=list)
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetFetchResponse:
    throttle_time_ms: int = 0
    topics: list[OffsetFetchResponseTopic] = field(default_factory=list)
    error_code: int = 0
    groups: list[OffsetFetchResponseGroup] = field(default_factory=list)


_OffsetFetchResponsePartition_SCHEMA = StructSchema(
    OffsetFetchResponsePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_offset', 'int64', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_leader_epoch', 'int32', False, Versions(5, 7), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('metadata', 'string', False, Versions(0, 7), Versions(0, 7), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetFetchResponseTopic_SCHEMA = StructSchema(
    OffsetFetchResponseTopic,
    (
        Field('name', 'string', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchResponsePartition_SCHEMA),
    ),
)
_OffsetFetchResponsePartitions_SCHEMA = StructSchema(
    OffsetFetchResponsePartitions,
    (
        Field('partition_index', 'int32', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_offset', 'int64', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_leader_epoch', 'int32', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('metadata', 'string', False, Versions(8, 32767), Versions(8, 32767), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetFetchResponseTopics_SCHEMA = StructSchema(
    OffsetFetchResponseTopics,
    (
        Field('name', 'string', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchResponsePartitions_SCHEMA),
    ),
)
_OffsetFetchResponseGroup_SCHEMA = StructSchema(
    OffsetFetchResponseGroup,
    (
        Field('group_id', 'string', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchResponseTopics_SCHEMA),
        Field('error_code', 'int16', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetFetchResponse_SCHEMA = StructSchema(
    OffsetFetchResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchResponseTopic_SCHEMA),
        Field('error_code', 'int16', False, Versions(2, 7), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('groups', 'struct', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchResponseGroup_SCHEMA),
    ),
)

SCHEMA = MessageSchema(9, 'response', 'OffsetFetchResponse', Versions(0, 9), Versions(6, 32767), _OffsetFetchResponse_SCHEMA)
