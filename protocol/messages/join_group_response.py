"""JoinGroupResponse (API key 11), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class JoinGroupResponseMember:
    member_id: str = ''
    group_instance_id: str | None = None
    metadata: bytes = b''


@dataclass(kw_only=True, slots=True)
class JoinGroupResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = ''
    leader: str = ''
    skip_assignment: bool = False
    member_id: str = ''
    members: list[JoinGroupResponseMember] = field(default_factory=list)


_JoinGroupResponseMember_SCHEMA = StructSchema(
    JoinGroupResponseMember,
    (
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('metadata', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)
_JoinGroupResponse_SCHEMA = StructSchema(
    JoinGroupResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('generation_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('protocol_type', 'string', False, Versions(7, 32767), Versions(7, 32767), None, Versions(1, 0), None, None),
        Field('protocol_name', 'string', False, Versions(0, 32767), Versions(7, 32767), None, Versions(1, 0), '', None),
        Field('leader', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('skip_assignment', 'bool', False, Versions(9, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('members', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _JoinGroupResponseMember_SCHEMA),
    ),
)

SCHEMA = MessageSchema(11, 'response', 'JoinGroupResponse', Versions(0, 9), Versions(6, 32767), _JoinGroupResponse_SCHEMA)
