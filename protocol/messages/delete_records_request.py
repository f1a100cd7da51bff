"""DeleteRecordsRequest (API key 21), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeleteRecordsPartition:
    partition_index: int = 0
    offset: int = 0


@dataclass(kw_only=True, slots=True)
class DeleteRecordsTopic:
    name: str = ''
    partitions: list[DeleteRecordsPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeleteRecordsRequest:
    topics: list[DeleteRecordsTopic] = field(default_factory=list)
    timeout_ms: int = 0


_DeleteRecordsPartition_SCHEMA = StructSchema(
    DeleteRecordsPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DeleteRecordsTopic_SCHEMA = StructSchema(
    DeleteRecordsTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteRecordsPartition_SCHEMA),
    ),
)
_DeleteRecordsRequest_SCHEMA = StructSchema(
    DeleteRecordsRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteRecordsTopic_SCHEMA),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(21, 'request', 'DeleteRecordsRequest', Versions(0, 2), Versions(2, 32767), _DeleteRecordsRequest_SCHEMA)
