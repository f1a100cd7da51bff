"""RemoveRaftVoterResponse (API key 81), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class RemoveRaftVoterResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''


_RemoveRaftVoterResponse_SCHEMA = StructSchema(
    RemoveRaftVoterResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)

SCHEMA = MessageSchema(81, 'response', 'RemoveRaftVoterResponse', Versions(0, 0), Versions(0, 32767), _RemoveRaftVoterResponse_SCHEMA)
