"""DescribeLogDirsRequest (API key 35), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribableLogDirTopic:
    topic: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeLogDirsRequest:
    topics: list[DescribableLogDirTopic] = field(default_factory=list)


_DescribableLogDirTopic_SCHEMA = StructSchema(
    DescribableLogDirTopic,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_DescribeLogDirsRequest_SCHEMA = StructSchema(
    DescribeLogDirsRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], _DescribableLogDirTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(35, 'request', 'DescribeLogDirsRequest', Versions(0, 4), Versions(2, 32767), _DescribeLogDirsRequest_SCHEMA)
