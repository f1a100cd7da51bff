"""SaslHandshakeRequest (API key 17), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SaslHandshakeRequest:
    mechanism: str = ''


_SaslHandshakeRequest_SCHEMA = StructSchema(
    SaslHandshakeRequest,
    (
        Field('mechanism', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)

SCHEMA = MessageSchema(17, 'request', 'SaslHandshakeRequest', Versions(0, 1), Versions(1, 0), _SaslHandshakeRequest_SCHEMA)
