"""LeaveGroupRequest (API key 13), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class MemberIdentity:
    member_id: str = ''
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(kw_only=True, slots=True)
class LeaveGroupRequest:
    group_id: str = ''
    member_id: str = ''
    members: list[MemberIdentity] = field(default_factory=list)


_MemberIdentity_SCHEMA = StructSchema(
    MemberIdentity,
    (
        Field('member_id', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), None, None),
        Field('reason', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
    ),
)
_LeaveGroupRequest_SCHEMA = StructSchema(
    LeaveGroupRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_id', 'string', False, Versions(0, 2), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('members', 'struct', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], _MemberIdentity_SCHEMA),
    ),
)

SCHEMA = MessageSchema(13, 'request', 'LeaveGroupRequest', Versions(0, 5), Versions(4, 32767), _LeaveGroupRequest_SCHEMA)
