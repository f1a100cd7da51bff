"""OffsetCommitResponse (API key 8), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetCommitResponsePartition:
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetCommitResponseTopic:
    name: str = ''
    partitions: list[OffsetCommitResponsePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetCommitResponse:
    throttle_time_ms: int = 0
    topics: list[OffsetCommitResponseTopic] = field(default_factory=list)


_OffsetCommitResponsePartition_SCHEMA = StructSchema(
    OffsetCommitResponsePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetCommitResponseTopic_SCHEMA = StructSchema(
    OffsetCommitResponseTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetCommitResponsePartition_SCHEMA),
    ),
)
_OffsetCommitResponse_SCHEMA = StructSchema(
    OffsetCommitResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetCommitResponseTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(8, 'response', 'OffsetCommitResponse', Versions(0, 9), Versions(8, 32767), _OffsetCommitResponse_SCHEMA)
