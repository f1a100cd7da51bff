"""OffsetDeleteRequest (API key 47), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetDeleteRequestPartition:
    partition_index: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetDeleteRequestTopic:
    name: str = ''
    partitions: list[OffsetDeleteRequestPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetDeleteRequest:
    group_id: str = ''
    topics: list[OffsetDeleteRequestTopic] = field(default_factory=list)


_OffsetDeleteRequestPartition_SCHEMA = StructSchema(
    OffsetDeleteRequestPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetDeleteRequestTopic_SCHEMA = StructSchema(
    OffsetDeleteRequestTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetDeleteRequestPartition_SCHEMA),
    ),
)
_OffsetDeleteRequest_SCHEMA = StructSchema(
    OffsetDeleteRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetDeleteRequestTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(47, 'request', 'OffsetDeleteRequest', Versions(0, 0), Versions(1, 0), _OffsetDeleteRequest_SCHEMA)
