"""RenewDelegationTokenRequest (API key 39), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class RenewDelegationTokenRequest:
    hmac: bytes = b''
    renew_period_ms: int = 0


_RenewDelegationTokenRequest_SCHEMA = StructSchema(
    RenewDelegationTokenRequest,
    (
        Field('hmac', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('renew_period_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(39, 'request', 'RenewDelegationTokenRequest', Versions(0, 2), Versions(2, 32767), _RenewDelegationTokenRequest_SCHEMA)
