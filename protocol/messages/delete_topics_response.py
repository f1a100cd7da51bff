"""DeleteTopicsResponse (API key 20), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeletableTopicResult:
    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    error_code: int = 0
    error_message: str | None = None


@dataclass(kw_only=True, slots=True)
class DeleteTopicsResponse:
    throttle_time_ms: int = 0
    responses: list[DeletableTopicResult] = field(default_factory=list)


_DeletableTopicResult_SCHEMA = StructSchema(
    DeletableTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(6, 32767), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(6, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
    ),
)
_DeleteTopicsResponse_SCHEMA = StructSchema(
    DeleteTopicsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeletableTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(20, 'response', 'DeleteTopicsResponse', Versions(0, 6), Versions(4, 32767), _DeleteTopicsResponse_SCHEMA)
