"""DescribeProducersRequest (API key 61), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeProducersRequest:
    topics: list[TopicRequest] = field(default_factory=list)


_TopicRequest_SCHEMA = StructSchema(
    TopicRequest,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_DescribeProducersRequest_SCHEMA = StructSchema(
    DescribeProducersRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicRequest_SCHEMA),
    ),
)

SCHEMA = MessageSchema(61, 'request', 'DescribeProducersRequest', Versions(0, 0), Versions(0, 32767), _DescribeProducersRequest_SCHEMA)
