"""DescribeTransactionsResponse (API key 65), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TopicData:
    topic: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TransactionState:
    error_code: int = 0
    transactional_id: str = ''
    transaction_state: str = ''
    transaction_timeout_ms: int = 0
    transaction_start_time_ms: int = 0
    producer_id: int = 0
    producer_epoch: int = 0
    topics: list[TopicData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeTransactionsResponse:
    throttle_time_ms: int = 0
    transaction_states: list[TransactionState] = field(default_factory=list)


_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_TransactionState_SCHEMA = StructSchema(
    TransactionState,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('transactional_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('transaction_state', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('transaction_timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('transaction_start_time_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
    ),
)
_DescribeTransactionsResponse_SCHEMA = StructSchema(
    DescribeTransactionsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('transaction_states', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TransactionState_SCHEMA),
    ),
)

SCHEMA = MessageSchema(65, 'response', 'DescribeTransactionsResponse', Versions(0, 0), Versions(0, 32767), _DescribeTransactionsResponse_SCHEMA)
