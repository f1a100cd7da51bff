"""FindCoordinatorRequest (API key 10), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class FindCoordinatorRequest:
    key: str = ''
    key_type: int = 0
    coordinator_keys: list[str] = field(default_factory=list)


_FindCoordinatorRequest_SCHEMA = StructSchema(
    FindCoordinatorRequest,
    (
        Field('key', 'string', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('key_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('coordinator_keys', 'string', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(10, 'request', 'FindCoordinatorRequest', Versions(0, 6), Versions(3, 32767), _FindCoordinatorRequest_SCHEMA)
