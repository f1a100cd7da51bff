"""DescribeGroupsResponse (API key 15), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribedGroupMember:
    member_id: str = ''
    group_instance_id: str | None = None
    client_id: str = ''
    client_host: str = ''
    member_metadata: bytes = b''
    member_assignment: bytes = b''


@dataclass(kw_only=True, slots=True)
class DescribedGroup:
    error_code: int = 0
    group_id: str = ''
    group_state: str = ''
    protocol_type: str = ''
    protocol_data: str = ''
    members: list[DescribedGroupMember] = field(default_factory=list)
    authorized_operations: int = -2147483648


@dataclass(kw_only=True, slots=True)
class DescribeGroupsResponse:
    throttle_time_ms: int = 0
    groups: list[DescribedGroup] = field(default_factory=list)


_DescribedGroupMember_SCHEMA = StructSchema(
    DescribedGroupMember,
    (
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(4, 32767), Versions(4, 32767), None, Versions(1, 0), None, None),
        Field('client_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('client_host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_metadata', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('member_assignment', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)
_DescribedGroup_SCHEMA = StructSchema(
    DescribedGroup,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_state', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('protocol_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('protocol_data', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('members', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribedGroupMember_SCHEMA),
        Field('authorized_operations', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)
_DescribeGroupsResponse_SCHEMA = StructSchema(
    DescribeGroupsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('groups', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribedGroup_SCHEMA),
    ),
)

SCHEMA = MessageSchema(15, 'response', 'DescribeGroupsResponse', Versions(0, 5), Versions(5, 32767), _DescribeGroupsResponse_SCHEMA)
