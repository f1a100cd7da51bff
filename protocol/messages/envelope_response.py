"""EnvelopeResponse (API key 58), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EnvelopeResponse:
    response_data: bytes | None = None
    error_code: int = 0


_EnvelopeResponse_SCHEMA = StructSchema(
    EnvelopeResponse,
    (
        Field('response_data', 'bytes', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(58, 'response', 'EnvelopeResponse', Versions(0, 0), Versions(0, 32767), _EnvelopeResponse_SCHEMA)
