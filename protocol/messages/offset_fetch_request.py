"""OffsetFetchRequest (API key 9), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetFetchRequestTopic:
    name: str = ''
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetFetchRequestTopics:
    name: str = ''
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetFetchRequestGroup:
    group_id: str = ''
    member_id: str | None = None
    member_epoch: int = -1
    topics: list[OffsetFetchRequestTopics] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetFetchRequest:
    group_id: str = ''
    topics: list[OffsetFetchRequestTopic] = field(default_factory=list)
    groups: list[OffsetFetchRequestGroup] = field(default_factory=list)
    require_stable: bool = False


_OffsetFetchRequestTopic_SCHEMA = StructSchema(
    OffsetFetchRequestTopic,
    (
        Field('name', 'string', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_OffsetFetchRequestTopics_SCHEMA = StructSchema(
    OffsetFetchRequestTopics,
    (
        Field('name', 'string', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_OffsetFetchRequestGroup_SCHEMA = StructSchema(
    OffsetFetchRequestGroup,
    (
        Field('group_id', 'string', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_id', 'string', False, Versions(9, 32767), Versions(9, 32767), None, Versions(1, 0), None, None),
        Field('member_epoch', 'int32', False, Versions(9, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(8, 32767), Versions(8, 32767), None, Versions(1, 0), [], _OffsetFetchRequestTopics_SCHEMA),
    ),
)
_OffsetFetchRequest_SCHEMA = StructSchema(
    OffsetFetchRequest,
    (
        Field('group_id', 'string', False, Versions(0, 7), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 7), Versions(2, 7), None, Versions(1, 0), [], _OffsetFetchRequestTopic_SCHEMA),
        Field('groups', 'struct', True, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetFetchRequestGroup_SCHEMA),
        Field('require_stable', 'bool', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(9, 'request', 'OffsetFetchRequest', Versions(0, 9), Versions(6, 32767), _OffsetFetchRequest_SCHEMA)
