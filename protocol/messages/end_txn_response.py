"""EndTxnResponse (API key 26), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EndTxnResponse:
    throttle_time_ms: int = 0
    error_code: int = 0


_EndTxnResponse_SCHEMA = StructSchema(
    EndTxnResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(26, 'response', 'EndTxnResponse', Versions(0, 4), Versions(3, 32767), _EndTxnResponse_SCHEMA)
