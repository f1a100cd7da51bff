"""SaslAuthenticateResponse (API key 36), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SaslAuthenticateResponse:
    error_code: int = 0
    error_message: str | None = ''
    auth_bytes: bytes = b''
    session_lifetime_ms: int = 0


_SaslAuthenticateResponse_SCHEMA = StructSchema(
    SaslAuthenticateResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('auth_bytes', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('session_lifetime_ms', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(36, 'response', 'SaslAuthenticateResponse', Versions(0, 2), Versions(2, 32767), _SaslAuthenticateResponse_SCHEMA)
