"""TxnOffsetCommitResponse (API key 28), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitResponsePartition:
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitResponseTopic:
    name: str = ''
    partitions: list[TxnOffsetCommitResponsePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitResponse:
    throttle_time_ms: int = 0
    topics: list[TxnOffsetCommitResponseTopic] = field(default_factory=list)


_TxnOffsetCommitResponsePartition_SCHEMA = StructSchema(
    TxnOffsetCommitResponsePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TxnOffsetCommitResponseTopic_SCHEMA = StructSchema(
    TxnOffsetCommitResponseTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TxnOffsetCommitResponsePartition_SCHEMA),
    ),
)
_TxnOffsetCommitResponse_SCHEMA = StructSchema(
    TxnOffsetCommitResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TxnOffsetCommitResponseTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(28, 'response', 'TxnOffsetCommitResponse', Versions(0, 4), Versions(3, 32767), _TxnOffsetCommitResponse_SCHEMA)
