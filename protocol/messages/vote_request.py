"""VoteRequest (API key 52), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    candidate_epoch: int = 0
    candidate_id: int = 0
    candidate_directory_id: uuid.UUID = ZERO_UUID
    voter_directory_id: uuid.UUID = ZERO_UUID
    last_offset_epoch: int = 0
    last_offset: int = 0


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_name: str = ''
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class VoteRequest:
    cluster_id: str | None = None
    voter_id: int = -1
    topics: list[TopicData] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('candidate_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('candidate_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('candidate_directory_id', 'uuid', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('voter_directory_id', 'uuid', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('last_offset_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_VoteRequest_SCHEMA = StructSchema(
    VoteRequest,
    (
        Field('cluster_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('voter_id', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(52, 'request', 'VoteRequest', Versions(0, 1), Versions(0, 32767), _VoteRequest_SCHEMA)
