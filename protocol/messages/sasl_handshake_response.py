"""SaslHandshakeResponse (API key 17), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SaslHandshakeResponse:
    error_code: int = 0
    mechanisms: list[str] = field(default_factory=list)


_SaslHandshakeResponse_SCHEMA = StructSchema(
    SaslHandshakeResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('mechanisms', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(17, 'response', 'SaslHandshakeResponse', Versions(0, 1), Versions(1, 0), _SaslHandshakeResponse_SCHEMA)
