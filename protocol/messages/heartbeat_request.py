"""HeartbeatRequest (API key 12), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class HeartbeatRequest:
    group_id: str = ''
    generation_id: int = 0
    member_id: str = ''
    group_instance_id: str | None = None


_HeartbeatRequest_SCHEMA = StructSchema(
    HeartbeatRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('generation_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), None, None),
    ),
)

SCHEMA = MessageSchema(12, 'request', 'HeartbeatRequest', Versions(0, 4), Versions(4, 32767), _HeartbeatRequest_SCHEMA)
