"""BrokerHeartbeatRequest (API key 63), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class BrokerHeartbeatRequest:
    broker_id: int = 0
    broker_epoch: int = -1
    current_metadata_offset: int = 0
    want_fence: bool = False
    want_shut_down: bool = False
    offline_log_dirs: list[uuid.UUID] = field(default_factory=list)


_BrokerHeartbeatRequest_SCHEMA = StructSchema(
    BrokerHeartbeatRequest,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('current_metadata_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('want_fence', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('want_shut_down', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('offline_log_dirs', 'uuid', True, Versions(1, 32767), Versions(1, 0), 0, Versions(1, 32767), [], None),
    ),
)

SCHEMA = MessageSchema(63, 'request', 'BrokerHeartbeatRequest', Versions(0, 1), Versions(0, 32767), _BrokerHeartbeatRequest_SCHEMA)
