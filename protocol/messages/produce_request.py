"""ProduceRequest (API key 0), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionProduceData:
    index: int = 0
    records: bytes | memoryview | None = None


@dataclass(kw_only=True, slots=True)
class TopicProduceData:
    name: str = ''
    partition_data: list[PartitionProduceData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ProduceRequest:
    transactional_id: str | None = None
    acks: int = 0
    timeout_ms: int = 0
    topic_data: list[TopicProduceData] = field(default_factory=list)


_PartitionProduceData_SCHEMA = StructSchema(
    PartitionProduceData,
    (
        Field('index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('records', 'records', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_TopicProduceData_SCHEMA = StructSchema(
    TopicProduceData,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_data', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionProduceData_SCHEMA),
    ),
)
_ProduceRequest_SCHEMA = StructSchema(
    ProduceRequest,
    (
        Field('transactional_id', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), None, None),
        Field('acks', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topic_data', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicProduceData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(0, 'request', 'ProduceRequest', Versions(0, 11), Versions(9, 32767), _ProduceRequest_SCHEMA)
