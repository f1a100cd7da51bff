"""SaslAuthenticateRequest (API key 36), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SaslAuthenticateRequest:
    auth_bytes: bytes = b''


_SaslAuthenticateRequest_SCHEMA = StructSchema(
    SaslAuthenticateRequest,
    (
        Field('auth_bytes', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)

SCHEMA = MessageSchema(36, 'request', 'SaslAuthenticateRequest', Versions(0, 2), Versions(2, 32767), _SaslAuthenticateRequest_SCHEMA)
