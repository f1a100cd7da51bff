"""DeleteRecordsResponse (API key 21), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeleteRecordsPartitionResult:
    partition_index: int = 0
    low_watermark: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class DeleteRecordsTopicResult:
    name: str = ''
    partitions: list[DeleteRecordsPartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeleteRecordsResponse:
    throttle_time_ms: int = 0
    topics: list[DeleteRecordsTopicResult] = field(default_factory=list)


_DeleteRecordsPartitionResult_SCHEMA = StructSchema(
    DeleteRecordsPartitionResult,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('low_watermark', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DeleteRecordsTopicResult_SCHEMA = StructSchema(
    DeleteRecordsTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteRecordsPartitionResult_SCHEMA),
    ),
)
_DeleteRecordsResponse_SCHEMA = StructSchema(
    DeleteRecordsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteRecordsTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(21, 'response', 'DeleteRecordsResponse', Versions(0, 2), Versions(2, 32767), _DeleteRecordsResponse_SCHEMA)
