"""OffsetForLeaderEpochRequest (API key 23), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OffsetForLeaderPartition:
    partition: int = 0
    current_leader_epoch: int = -1
    leader_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class OffsetForLeaderTopic:
    topic: str = ''
    partitions: list[OffsetForLeaderPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OffsetForLeaderEpochRequest:
    replica_id: int = -2
    topics: list[OffsetForLeaderTopic] = field(default_factory=list)


_OffsetForLeaderPartition_SCHEMA = StructSchema(
    OffsetForLeaderPartition,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_leader_epoch', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_OffsetForLeaderTopic_SCHEMA = StructSchema(
    OffsetForLeaderTopic,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetForLeaderPartition_SCHEMA),
    ),
)
_OffsetForLeaderEpochRequest_SCHEMA = StructSchema(
    OffsetForLeaderEpochRequest,
    (
        Field('replica_id', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), -2, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OffsetForLeaderTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(23, 'request', 'OffsetForLeaderEpochRequest', Versions(0, 4), Versions(4, 32767), _OffsetForLeaderEpochRequest_SCHEMA)
