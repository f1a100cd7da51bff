"""SyncGroupRequest (API key 14), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class SyncGroupRequestAssignment:
    member_id: str = ''
    assignment: bytes = b''


@dataclass(kw_only=True, slots=True)
class SyncGroupRequest:
    group_id: str = ''
    generation_id: int = 0
    member_id: str = ''
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: list[SyncGroupRequestAssignment] = field(default_factory=list)


_SyncGroupRequestAssignment_SCHEMA = StructSchema(
    SyncGroupRequestAssignment,
    (
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('assignment', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)
_SyncGroupRequest_SCHEMA = StructSchema(
    SyncGroupRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('generation_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), None, None),
        Field('protocol_type', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('protocol_name', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), None, None),
        Field('assignments', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _SyncGroupRequestAssignment_SCHEMA),
    ),
)

SCHEMA = MessageSchema(14, 'request', 'SyncGroupRequest', Versions(0, 5), Versions(4, 32767), _SyncGroupRequest_SCHEMA)
