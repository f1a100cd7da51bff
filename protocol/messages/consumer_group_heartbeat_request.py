"""ConsumerGroupHeartbeatRequest (API key 68), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
class ConsumerGroupHeartbeatRequest:
    group_id: str = ''
    member_id: str = ''
    member_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    server_assignor: str | None = None
    topic_partitions: list[TopicPartitions] | None = None


_TopicPartitions_SCHEMA = StructSchema(
    TopicPartitions,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_ConsumerGroupHeartbeatRequest_SCHEMA = StructSchema(
    ConsumerGroupHeartbeatRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('member_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('instance_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('rack_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('rebalance_timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('subscribed_topic_names', 'string', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('server_assignor', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('topic_partitions', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, _TopicPartitions_SCHEMA),
    ),
)

SCHEMA = MessageSchema(68, 'request', 'ConsumerGroupHeartbeatRequest', Versions(0, 0), Versions(0, 32767), _ConsumerGroupHeartbeatRequest_SCHEMA)
