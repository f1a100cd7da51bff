"""AssignReplicasToDirsResponse (API key 73), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DirectoryData:
    id: uuid.UUID = ZERO_UUID
    topics: list[TopicData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AssignReplicasToDirsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    directories: list[DirectoryData] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_DirectoryData_SCHEMA = StructSchema(
    DirectoryData,
    (
        Field('id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
    ),
)
_AssignReplicasToDirsResponse_SCHEMA = StructSchema(
    AssignReplicasToDirsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('directories', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DirectoryData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(73, 'response', 'AssignReplicasToDirsResponse', Versions(0, 0), Versions(0, 32767), _AssignReplicasToDirsResponse_SCHEMA)
