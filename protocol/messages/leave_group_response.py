"""LeaveGroupResponse (API key 13), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class MemberResponse:
    member_id: str = ''
    group_instance_id: str | None = ''
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class LeaveGroupResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    members: list[MemberResponse] = field(default_factory=list)


_MemberResponse_SCHEMA = StructSchema(
    MemberResponse,
    (
        Field('member_id', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_LeaveGroupResponse_SCHEMA = StructSchema(
    LeaveGroupResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('members', 'struct', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], _MemberResponse_SCHEMA),
    ),
)

SCHEMA = MessageSchema(13, 'response', 'LeaveGroupResponse', Versions(0, 5), Versions(4, 32767), _LeaveGroupResponse_SCHEMA)
