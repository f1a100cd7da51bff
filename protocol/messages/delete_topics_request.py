"""DeleteTopicsRequest (API key 20), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeleteTopicState:
    name: str | None = None
    topic_id: uuid.UUID = ZERO_UUID


@dataclass(kw_only=True, slots=True)
class DeleteTopicsRequest:
    topics: list[DeleteTopicState] = field(default_factory=list)
    topic_names: list[str] = field(default_factory=list)
    timeout_ms: int = 0


_DeleteTopicState_SCHEMA = StructSchema(
    DeleteTopicState,
    (
        Field('name', 'string', False, Versions(6, 32767), Versions(6, 32767), None, Versions(1, 0), None, None),
        Field('topic_id', 'uuid', False, Versions(6, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
    ),
)
_DeleteTopicsRequest_SCHEMA = StructSchema(
    DeleteTopicsRequest,
    (
        Field('topics', 'struct', True, Versions(6, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteTopicState_SCHEMA),
        Field('topic_names', 'string', True, Versions(0, 5), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(20, 'request', 'DeleteTopicsRequest', Versions(0, 6), Versions(4, 32767), _DeleteTopicsRequest_SCHEMA)
