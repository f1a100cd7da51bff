"""ListOffsetsRequest (API key 2), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListOffsetsPartition:
    partition_index: int = 0
    current_leader_epoch: int = -1
    timestamp: int = 0
    max_num_offsets: int = 1


@dataclass(kw_only=True, slots=True)
class ListOffsetsTopic:
    name: str = ''
    partitions: list[ListOffsetsPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ListOffsetsRequest:
    replica_id: int = 0
    isolation_level: int = 0
    topics: list[ListOffsetsTopic] = field(default_factory=list)


_ListOffsetsPartition_SCHEMA = StructSchema(
    ListOffsetsPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_leader_epoch', 'int32', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('timestamp', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_num_offsets', 'int32', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), 1, None),
    ),
)
_ListOffsetsTopic_SCHEMA = StructSchema(
    ListOffsetsTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ListOffsetsPartition_SCHEMA),
    ),
)
_ListOffsetsRequest_SCHEMA = StructSchema(
    ListOffsetsRequest,
    (
        Field('replica_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('isolation_level', 'int8', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ListOffsetsTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(2, 'request', 'ListOffsetsRequest', Versions(0, 9), Versions(6, 32767), _ListOffsetsRequest_SCHEMA)
