"""WriteTxnMarkersResponse (API key 27), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class WritableTxnMarkerPartitionResult:
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class WritableTxnMarkerTopicResult:
    name: str = ''
    partitions: list[WritableTxnMarkerPartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WritableTxnMarkerResult:
    producer_id: int = 0
    topics: list[WritableTxnMarkerTopicResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WriteTxnMarkersResponse:
    markers: list[WritableTxnMarkerResult] = field(default_factory=list)


_WritableTxnMarkerPartitionResult_SCHEMA = StructSchema(
    WritableTxnMarkerPartitionResult,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_WritableTxnMarkerTopicResult_SCHEMA = StructSchema(
    WritableTxnMarkerTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WritableTxnMarkerPartitionResult_SCHEMA),
    ),
)
_WritableTxnMarkerResult_SCHEMA = StructSchema(
    WritableTxnMarkerResult,
    (
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WritableTxnMarkerTopicResult_SCHEMA),
    ),
)
_WriteTxnMarkersResponse_SCHEMA = StructSchema(
    WriteTxnMarkersResponse,
    (
        Field('markers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WritableTxnMarkerResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(27, 'response', 'WriteTxnMarkersResponse', Versions(0, 1), Versions(1, 32767), _WriteTxnMarkersResponse_SCHEMA)
