"""ConsumerGroupHeartbeatResponse (API key 68), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TopicPartitions:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class Assignment:
    topic_partitions: list[TopicPartitions] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ConsumerGroupHeartbeatResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


_TopicPartitions_SCHEMA = StructSchema(
    TopicPartitions,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_Assignment_SCHEMA = StructSchema(
    Assignment,
    (
        Field('topic_partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicPartitions_SCHEMA),
    ),
)
_ConsumerGroupHeartbeatResponse_SCHEMA = StructSchema(
    ConsumerGroupHeartbeatResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('member_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('heartbeat_interval_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('assignment', 'struct', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, _Assignment_SCHEMA),
    ),
)

SCHEMA = MessageSchema(68, 'response', 'ConsumerGroupHeartbeatResponse', Versions(0, 0), Versions(0, 32767), _ConsumerGroupHeartbeatResponse_SCHEMA)
