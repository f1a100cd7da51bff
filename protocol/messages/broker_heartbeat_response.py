"""BrokerHeartbeatResponse (API key 63), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class BrokerHeartbeatResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


_BrokerHeartbeatResponse_SCHEMA = StructSchema(
    BrokerHeartbeatResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('is_caught_up', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('is_fenced', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), True, None),
        Field('should_shut_down', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(63, 'response', 'BrokerHeartbeatResponse', Versions(0, 1), Versions(0, 32767), _BrokerHeartbeatResponse_SCHEMA)
