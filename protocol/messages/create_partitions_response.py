"""CreatePartitionsResponse (API key 37), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreatePartitionsTopicResult:
    name: str = ''
    error_code: int = 0
    error_message: str | None = None


@dataclass(kw_only=True, slots=True)
class CreatePartitionsResponse:
    throttle_time_ms: int = 0
    results: list[CreatePartitionsTopicResult] = field(default_factory=list)


_CreatePartitionsTopicResult_SCHEMA = StructSchema(
    CreatePartitionsTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_CreatePartitionsResponse_SCHEMA = StructSchema(
    CreatePartitionsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatePartitionsTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(37, 'response', 'CreatePartitionsResponse', Versions(0, 3), Versions(2, 32767), _CreatePartitionsResponse_SCHEMA)
