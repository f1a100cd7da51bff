"""ReadShareGroupStateResponse (API key 84), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class StateBatch:
    first_offset: int = 0
    last_offset: int = 0
    delivery_state: int = 0
    delivery_count: int = 0


@dataclass(kw_only=True, slots=True)
class PartitionResult:
    partition: int = 0
    error_code: int = 0
    error_message: str | None = None
    state_epoch: int = 0
    start_offset: int = 0
    state_batches: list[StateBatch] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ReadStateResult:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ReadShareGroupStateResponse:
    results: list[ReadStateResult] = field(default_factory=list)


_StateBatch_SCHEMA = StructSchema(
    StateBatch,
    (
        Field('first_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('delivery_state', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('delivery_count', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionResult_SCHEMA = StructSchema(
    PartitionResult,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('state_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('start_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('state_batches', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _StateBatch_SCHEMA),
    ),
)
_ReadStateResult_SCHEMA = StructSchema(
    ReadStateResult,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionResult_SCHEMA),
    ),
)
_ReadShareGroupStateResponse_SCHEMA = StructSchema(
    ReadShareGroupStateResponse,
    (
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReadStateResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(84, 'response', 'ReadShareGroupStateResponse', Versions(0, 0), Versions(0, 32767), _ReadShareGroupStateResponse_SCHEMA)
