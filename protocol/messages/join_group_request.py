"""JoinGroupRequest (API key 11), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class JoinGroupRequestProtocol:
    name: str = ''
    metadata: bytes = b''


@dataclass(kw_only=True, slots=True)
class JoinGroupRequest:
    group_id: str = ''
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    protocol_type: str = ''
    protocols: list[JoinGroupRequestProtocol] = field(default_factory=list)
    reason: str | None = None


_JoinGroupRequestProtocol_SCHEMA = StructSchema(
    JoinGroupRequestProtocol,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('metadata', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)
_JoinGroupRequest_SCHEMA = StructSchema(
    JoinGroupRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('session_timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rebalance_timeout_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('protocol_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('protocols', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _JoinGroupRequestProtocol_SCHEMA),
        Field('reason', 'string', False, Versions(8, 32767), Versions(8, 32767), None, Versions(1, 0), None, None),
    ),
)

SCHEMA = MessageSchema(11, 'request', 'JoinGroupRequest', Versions(0, 9), Versions(6, 32767), _JoinGroupRequest_SCHEMA)
