"""WriteShareGroupStateResponse (API key 85), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionResult:
    partition: int = 0
    error_code: int = 0
    error_message: str | None = None


@dataclass(kw_only=True, slots=True)
class WriteStateResult:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WriteShareGroupStateResponse:
    results: list[WriteStateResult] = field(default_factory=list)


_PartitionResult_SCHEMA = StructSchema(
    PartitionResult,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_WriteStateResult_SCHEMA = StructSchema(
    WriteStateResult,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionResult_SCHEMA),
    ),
)
_WriteShareGroupStateResponse_SCHEMA = StructSchema(
    WriteShareGroupStateResponse,
    (
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WriteStateResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(85, 'response', 'WriteShareGroupStateResponse', Versions(0, 0), Versions(0, 32767), _WriteShareGroupStateResponse_SCHEMA)
