"""ListGroupsResponse (API key 16), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListedGroup:
    group_id: str = ''
    protocol_type: str = ''
    group_state: str = ''
    group_type: str = ''


@dataclass(kw_only=True, slots=True)
class ListGroupsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    groups: list[ListedGroup] = field(default_factory=list)


_ListedGroup_SCHEMA = StructSchema(
    ListedGroup,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('protocol_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_state', 'string', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_type', 'string', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_ListGroupsResponse_SCHEMA = StructSchema(
    ListGroupsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('groups', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ListedGroup_SCHEMA),
    ),
)

SCHEMA = MessageSchema(16, 'response', 'ListGroupsResponse', Versions(0, 5), Versions(3, 32767), _ListGroupsResponse_SCHEMA)
