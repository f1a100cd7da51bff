"""OffsetDeleteResponse (API key 47), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetDeleteResponsePartition:
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetDeleteResponseTopic:
    name: str = ''
    partitions: list[OffsetDeleteResponsePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetDeleteResponse:
    error_code: int = 0
    throttle_time_ms: int = 0
    topics: list[OffsetDeleteResponseTopic] = field(default_factory=list)


_OffsetDeleteResponsePartition_SCHEMA = StructSchema(
    OffsetDeleteResponsePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetDeleteResponseTopic_SCHEMA = StructSchema(
    OffsetDeleteResponseTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetDeleteResponsePartition_SCHEMA),
    ),
)
_OffsetDeleteResponse_SCHEMA = StructSchema(
    OffsetDeleteResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetDeleteResponseTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(47, 'response', 'OffsetDeleteResponse', Versions(0, 0), Versions(1, 0), _OffsetDeleteResponse_SCHEMA)
