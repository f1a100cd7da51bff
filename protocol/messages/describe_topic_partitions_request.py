"""DescribeTopicPartitionsRequest (API key 75), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TopicRequest:
    name: str = ''


@dataclass(kw_only=True, slots=True)
class Cursor:
    topic_name: str = ''
    partition_index: int = 0


@dataclass(kw_only=True, slots=True)
class DescribeTopicPartitionsRequest:
    topics: list[TopicRequest] = field(default_factory=list)
    response_partition_limit: int = 2000
    cursor: Cursor | None = None


_TopicRequest_SCHEMA = StructSchema(
    TopicRequest,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_Cursor_SCHEMA = StructSchema(
    Cursor,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DescribeTopicPartitionsRequest_SCHEMA = StructSchema(
    DescribeTopicPartitionsRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicRequest_SCHEMA),
        Field('response_partition_limit', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 2000, None),
        Field('cursor', 'struct', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, _Cursor_SCHEMA),
    ),
)

SCHEMA = MessageSchema(75, 'request', 'DescribeTopicPartitionsRequest', Versions(0, 0), Versions(0, 32767), _DescribeTopicPartitionsRequest_SCHEMA)
