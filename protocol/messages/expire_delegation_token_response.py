"""ExpireDelegationTokenResponse (API key 40), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ExpireDelegationTokenResponse:
    error_code: int = 0
    expiry_timestamp_ms: int = 0
    throttle_time_ms: int = 0


_ExpireDelegationTokenResponse_SCHEMA = StructSchema(
    ExpireDelegationTokenResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('expiry_timestamp_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(40, 'response', 'ExpireDelegationTokenResponse', Versions(0, 2), Versions(2, 32767), _ExpireDelegationTokenResponse_SCHEMA)
