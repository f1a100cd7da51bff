"""ShareGroupHeartbeatRequest (API key 76), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ShareGroupHeartbeatRequest:
    group_id: str = ''
    member_id: str = ''
    member_epoch: int = 0
    rack_id: str | None = None
    subscribed_topic_names: list[str] | None = None


_ShareGroupHeartbeatRequest_SCHEMA = StructSchema(
    ShareGroupHeartbeatRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('subscribed_topic_names', 'string', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)

SCHEMA = MessageSchema(76, 'request', 'ShareGroupHeartbeatRequest', Versions(0, 0), Versions(0, 32767), _ShareGroupHeartbeatRequest_SCHEMA)
