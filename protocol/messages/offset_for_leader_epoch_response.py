"""OffsetForLeaderEpochResponse (API key 23), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
    error_code: int = 0
    partition: int = 0
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(kw_only=True, slots=True)
class OffsetForLeaderTopicResult:
    topic: str = ''
    partitions: list[EpochEndOffset] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetForLeaderEpochResponse:
    throttle_time_ms: int = 0
    topics: list[OffsetForLeaderTopicResult] = field(default_factory=list)


_EpochEndOffset_SCHEMA = StructSchema(
    EpochEndOffset,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('end_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_OffsetForLeaderTopicResult_SCHEMA = StructSchema(
    OffsetForLeaderTopicResult,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _EpochEndOffset_SCHEMA),
    ),
)
_OffsetForLeaderEpochResponse_SCHEMA = StructSchema(
    OffsetForLeaderEpochResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetForLeaderTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(23, 'response', 'OffsetForLeaderEpochResponse', Versions(0, 4), Versions(4, 32767), _OffsetForLeaderEpochResponse_SCHEMA)
