"""ListOffsetsResponse (API key 2), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListOffsetsPartitionResponse:
    partition_index: int = 0
    error_code: int = 0
    old_style_offsets: list[int] = field(default_factory=list)
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


@dataclass(kw_only=True, slots=True)
class ListOffsetsTopicResponse:
    name: str = ''
    partitions: list[ListOffsetsPartitionResponse] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ListOffsetsResponse:
    throttle_time_ms: int = 0
    topics: list[ListOffsetsTopicResponse] = field(default_factory=list)


_ListOffsetsPartitionResponse_SCHEMA = StructSchema(
    ListOffsetsPartitionResponse,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('old_style_offsets', 'int64', True, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('timestamp', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('offset', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('leader_epoch', 'int32', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_ListOffsetsTopicResponse_SCHEMA = StructSchema(
    ListOffsetsTopicResponse,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ListOffsetsPartitionResponse_SCHEMA),
    ),
)
_ListOffsetsResponse_SCHEMA = StructSchema(
    ListOffsetsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ListOffsetsTopicResponse_SCHEMA),
    ),
)

SCHEMA = MessageSchema(2, 'response', 'ListOffsetsResponse', Versions(0, 9), Versions(6, 32767), _ListOffsetsResponse_SCHEMA)
