"""AddPartitionsToTxnResponse (API key 24), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnPartitionResult:
    partition_index: int = 0
    partition_error_code: int = 0


@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnTopicResult:
    name: str = ''
    results_by_partition: list[AddPartitionsToTxnPartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnResult:
    transactional_id: str = ''
    topic_results: list[AddPartitionsToTxnTopicResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    results_by_transaction: list[AddPartitionsToTxnResult] = field(default_factory=list)
    results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult] = field(default_factory=list)


_AddPartitionsToTxnPartitionResult_SCHEMA = StructSchema(
    AddPartitionsToTxnPartitionResult,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_AddPartitionsToTxnTopicResult_SCHEMA = StructSchema(
    AddPartitionsToTxnTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('results_by_partition', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnPartitionResult_SCHEMA),
    ),
)
_AddPartitionsToTxnResult_SCHEMA = StructSchema(
    AddPartitionsToTxnResult,
    (
        Field('transactional_id', 'string', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_results', 'struct', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnTopicResult_SCHEMA),
    ),
)
_AddPartitionsToTxnResponse_SCHEMA = StructSchema(
    AddPartitionsToTxnResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results_by_transaction', 'struct', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnResult_SCHEMA),
        Field('results_by_topic_v3_and_below', 'struct', True, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(24, 'response', 'AddPartitionsToTxnResponse', Versions(0, 5), Versions(3, 32767), _AddPartitionsToTxnResponse_SCHEMA)
