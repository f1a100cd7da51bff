"""EnvelopeRequest (API key 58), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EnvelopeRequest:
    request_data: bytes = b''
    request_principal: bytes | None = b''
    client_host_address: bytes = b''


_EnvelopeRequest_SCHEMA = StructSchema(
    EnvelopeRequest,
    (
        Field('request_data', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('request_principal', 'bytes', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), b'', None),
        Field('client_host_address', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)

SCHEMA = MessageSchema(58, 'request', 'EnvelopeRequest', Versions(0, 0), Versions(0, 32767), _EnvelopeRequest_SCHEMA)
