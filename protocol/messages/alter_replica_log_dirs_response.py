"""AlterReplicaLogDirsResponse (API key 34), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDirPartitionResult:
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDirTopicResult:
    topic_name: str = ''
    partitions: list[AlterReplicaLogDirPartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDirsResponse:
    throttle_time_ms: int = 0
    results: list[AlterReplicaLogDirTopicResult] = field(default_factory=list)


_AlterReplicaLogDirPartitionResult_SCHEMA = StructSchema(
    AlterReplicaLogDirPartitionResult,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_AlterReplicaLogDirTopicResult_SCHEMA = StructSchema(
    AlterReplicaLogDirTopicResult,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterReplicaLogDirPartitionResult_SCHEMA),
    ),
)
_AlterReplicaLogDirsResponse_SCHEMA = StructSchema(
    AlterReplicaLogDirsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterReplicaLogDirTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(34, 'response', 'AlterReplicaLogDirsResponse', Versions(0, 2), Versions(2, 32767), _AlterReplicaLogDirsResponse_SCHEMA)
