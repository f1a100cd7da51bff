"""DescribeProducersResponse (API key 61), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ProducerState:
    producer_id: int = 0
    producer_epoch: int = 0
    last_sequence: int = -1
    last_timestamp: int = -1
    coordinator_epoch: int = 0
    current_txn_start_offset: int = -1


@dataclass(kw_only=True, slots=True)
class PartitionResponse:
    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = None
    active_producers: list[ProducerState] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TopicResponse:
    name: str = ''
    partitions: list[PartitionResponse] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeProducersResponse:
    throttle_time_ms: int = 0
    topics: list[TopicResponse] = field(default_factory=list)


_ProducerState_SCHEMA = StructSchema(
    ProducerState,
    (
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_sequence', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('last_timestamp', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('coordinator_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_txn_start_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_PartitionResponse_SCHEMA = StructSchema(
    PartitionResponse,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('active_producers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ProducerState_SCHEMA),
    ),
)
_TopicResponse_SCHEMA = StructSchema(
    TopicResponse,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionResponse_SCHEMA),
    ),
)
_DescribeProducersResponse_SCHEMA = StructSchema(
    DescribeProducersResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicResponse_SCHEMA),
    ),
)

SCHEMA = MessageSchema(61, 'response', 'DescribeProducersResponse', Versions(0, 0), Versions(0, 32767), _DescribeProducersResponse_SCHEMA)
