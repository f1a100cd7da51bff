"""ShareAcknowledgeRequest (API key 79), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
class AcknowledgePartition:
    partition_index: int = 0
    acknowledgement_batches: list[AcknowledgementBatch] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AcknowledgeTopic:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[AcknowledgePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ShareAcknowledgeRequest:
    group_id: str | None = None
    member_id: str | None = ''
    share_session_epoch: int = 0
    topics: list[AcknowledgeTopic] = field(default_factory=list)


_AcknowledgementBatch_SCHEMA = StructSchema(
    AcknowledgementBatch,
    (
        Field('first_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('acknowledge_types', 'int8', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_AcknowledgePartition_SCHEMA = StructSchema(
    AcknowledgePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('acknowledgement_batches', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AcknowledgementBatch_SCHEMA),
    ),
)
_AcknowledgeTopic_SCHEMA = StructSchema(
    AcknowledgeTopic,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AcknowledgePartition_SCHEMA),
    ),
)
_ShareAcknowledgeRequest_SCHEMA = StructSchema(
    ShareAcknowledgeRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('share_session_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AcknowledgeTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(79, 'request', 'ShareAcknowledgeRequest', Versions(0, 0), Versions(0, 32767), _ShareAcknowledgeRequest_SCHEMA)
