"""TxnOffsetCommitRequest (API key 28), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitRequestPartition:
    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ''


@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitRequestTopic:
    name: str = ''
    partitions: list[TxnOffsetCommitRequestPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TxnOffsetCommitRequest:
    transactional_id: str = ''
    group_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    generation_id: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    topics: list[TxnOffsetCommitRequestTopic] = field(default_factory=list)


_TxnOffsetCommitRequestPartition_SCHEMA = StructSchema(
    TxnOffsetCommitRequestPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed_leader_epoch', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('committed_metadata', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_TxnOffsetCommitRequestTopic_SCHEMA = StructSchema(
    TxnOffsetCommitRequestTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TxnOffsetCommitRequestPartition_SCHEMA),
    ),
)
_TxnOffsetCommitRequest_SCHEMA = StructSchema(
    TxnOffsetCommitRequest,
    (
        Field('transactional_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('generation_id', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('member_id', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_instance_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), None, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TxnOffsetCommitRequestTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(28, 'request', 'TxnOffsetCommitRequest', Versions(0, 4), Versions(3, 32767), _TxnOffsetCommitRequest_SCHEMA)
