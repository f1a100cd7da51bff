"""FetchRequest (API key 1), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ReplicaState:
    replica_id: int = -1
    replica_epoch: int = -1


@dataclass(kw_only=True, slots=True)
class FetchPartition:
    partition: int = 0
    current_leader_epoch: int = -1
    fetch_offset: int = 0
    last_fetched_epoch: int = -1
    log_start_offset: int = -1
    partition_max_bytes: int = 0
    replica_directory_id: uuid.UUID = ZERO_UUID


@dataclass(kw_only=True, slots=True)
class FetchTopic:
    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[FetchPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ForgottenTopic:
    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FetchRequest:
    cluster_id: str | None = None
    replica_id: int = -1
    replica_state: ReplicaState = field(default_factory=ReplicaState)
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 2147483647
    isolation_level: int = 0
    session_id: int = 0
    session_epoch: int = -1
    topics: list[FetchTopic] = field(default_factory=list)
    forgotten_topics_data: list[ForgottenTopic] = field(default_factory=list)
    rack_id: str = ''


_ReplicaState_SCHEMA = StructSchema(
    ReplicaState,
    (
        Field('replica_id', 'int32', False, Versions(15, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('replica_epoch', 'int64', False, Versions(15, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_FetchPartition_SCHEMA = StructSchema(
    FetchPartition,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_leader_epoch', 'int32', False, Versions(9, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('fetch_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_fetched_epoch', 'int32', False, Versions(12, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('log_start_offset', 'int64', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('partition_max_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replica_directory_id', 'uuid', False, Versions(17, 32767), Versions(1, 0), 0, Versions(17, 32767), ZERO_UUID, None),
    ),
)
_FetchTopic_SCHEMA = StructSchema(
    FetchTopic,
    (
        Field('topic', 'string', False, Versions(0, 12), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(13, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FetchPartition_SCHEMA),
    ),
)
_ForgottenTopic_SCHEMA = StructSchema(
    ForgottenTopic,
    (
        Field('topic', 'string', False, Versions(7, 12), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(13, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'int32', True, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_FetchRequest_SCHEMA = StructSchema(
    FetchRequest,
    (
        Field('cluster_id', 'string', False, Versions(12, 32767), Versions(12, 32767), 0, Versions(12, 32767), None, None),
        Field('replica_id', 'int32', False, Versions(0, 14), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('replica_state', 'struct', False, Versions(15, 32767), Versions(1, 0), 1, Versions(15, 32767), None, _ReplicaState_SCHEMA),
        Field('max_wait_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('min_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_bytes', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 2147483647, None),
        Field('isolation_level', 'int8', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('session_id', 'int32', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('session_epoch', 'int32', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FetchTopic_SCHEMA),
        Field('forgotten_topics_data', 'struct', True, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), [], _ForgottenTopic_SCHEMA),
        Field('rack_id', 'string', False, Versions(11, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)

SCHEMA = MessageSchema(1, 'request', 'FetchRequest', Versions(0, 17), Versions(12, 32767), _FetchRequest_SCHEMA)
