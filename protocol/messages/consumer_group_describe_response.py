"""ConsumerGroupDescribeResponse (API key 69), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
    topic_name: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class Assignment:
    topic_partitions: list[TopicPartitions] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class Member:
    member_id: str = ''
    instance_id: str | None = None
    rack_id: str | None = None
    member_epoch: int = 0
    client_id: str = ''
    client_host: str = ''
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    assignment: Assignment = field(default_factory=Assignment)
    target_assignment: Assignment = field(default_factory=Assignment)


@dataclass(kw_only=True, slots=True)
class DescribedGroup:
    error_code: int = 0
    error_message: str | None = None
    group_id: str = ''
    group_state: str = ''
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ''
    members: list[Member] = field(default_factory=list)
    authorized_operations: int = -2147483648


@dataclass(kw_only=True, slots=True)
class ConsumerGroupDescribeResponse:
    throttle_time_ms: int = 0
    groups: list[DescribedGroup] = field(default_factory=list)


_TopicPartitions_SCHEMA = StructSchema(
    TopicPartitions,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_Assignment_SCHEMA = StructSchema(
    Assignment,
    (
        Field('topic_partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicPartitions_SCHEMA),
    ),
)
_Member_SCHEMA = StructSchema(
    Member,
    (
        Field('member_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('instance_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('rack_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('member_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('client_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('client_host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('subscribed_topic_names', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('subscribed_topic_regex', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('assignment', 'struct', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, _Assignment_SCHEMA),
        Field('target_assignment', 'struct', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), None, _Assignment_SCHEMA),
    ),
)
_DescribedGroup_SCHEMA = StructSchema(
    DescribedGroup,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_state', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('group_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('assignment_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('assignor_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('members', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _Member_SCHEMA),
        Field('authorized_operations', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)
_ConsumerGroupDescribeResponse_SCHEMA = StructSchema(
    ConsumerGroupDescribeResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('groups', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribedGroup_SCHEMA),
    ),
)

SCHEMA = MessageSchema(69, 'response', 'ConsumerGroupDescribeResponse', Versions(0, 0), Versions(0, 32767), _ConsumerGroupDescribeResponse_SCHEMA)
