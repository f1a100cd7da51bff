"""ShareFetchRequest (API key 78), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AcknowledgementBatch:
    first_offset: int = 0
    last_offset: int = 0
    acknowledge_types: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FetchPartition:
    partition_index: int = 0
    partition_max_bytes: int = 0
    acknowledgement_batches: list[AcknowledgementBatch] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FetchTopic:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[FetchPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ForgottenTopic:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ShareFetchRequest:
    group_id: str | None = None
    member_id: str | None = ''
    share_session_epoch: int = 0
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 2147483647
    topics: list[FetchTopic] = field(default_factory=list)
    forgotten_topics_data: list[ForgottenTopic] = field(default_factory=list)


_AcknowledgementBatch_SCHEMA = StructSchema(
    AcknowledgementBatch,
    (
        Field('first_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('acknowledge_types', 'int8', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_FetchPartition_SCHEMA = StructSchema(
    FetchPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_max_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('acknowledgement_batches', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AcknowledgementBatch_SCHEMA),
    ),
)
_FetchTopic_SCHEMA = StructSchema(
    FetchTopic,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FetchPartition_SCHEMA),
    ),
)
_ForgottenTopic_SCHEMA = StructSchema(
    ForgottenTopic,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_ShareFetchRequest_SCHEMA = StructSchema(
    ShareFetchRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('share_session_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_wait_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('min_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 2147483647, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FetchTopic_SCHEMA),
        Field('forgotten_topics_data', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ForgottenTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(78, 'request', 'ShareFetchRequest', Versions(0, 0), Versions(0, 32767), _ShareFetchRequest_SCHEMA)
