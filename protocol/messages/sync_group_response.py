"""SyncGroupResponse (API key 14), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SyncGroupResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b''


_SyncGroupResponse_SCHEMA = StructSchema(
    SyncGroupResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('protocol_type', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('protocol_name', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('assignment', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)

SCHEMA = MessageSchema(14, 'response', 'SyncGroupResponse', Versions(0, 5), Versions(4, 32767), _SyncGroupResponse_SCHEMA)
