"""DescribeQuorumRequest (API key 55), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_name: str = ''
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeQuorumRequest:
    topics: list[TopicData] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_DescribeQuorumRequest_SCHEMA = StructSchema(
    DescribeQuorumRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(55, 'request', 'DescribeQuorumRequest', Versions(0, 2), Versions(0, 32767), _DescribeQuorumRequest_SCHEMA)
