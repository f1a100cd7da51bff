"""DescribeLogDirsResponse (API key 35), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeLogDirsPartition:
    partition_index: int = 0
    partition_size: int = 0
    offset_lag: int = 0
    is_future_key: bool = False


@dataclass(kw_only=True, slots=True)
class DescribeLogDirsTopic:
    name: str = ''
    partitions: list[DescribeLogDirsPartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeLogDirsResult:
    error_code: int = 0
    log_dir: str = ''
    topics: list[DescribeLogDirsTopic] = field(default_factory=list)
    total_bytes: int = -1
    usable_bytes: int = -1


@dataclass(kw_only=True, slots=True)
class DescribeLogDirsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    results: list[DescribeLogDirsResult] = field(default_factory=list)


_DescribeLogDirsPartition_SCHEMA = StructSchema(
    DescribeLogDirsPartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_size', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('offset_lag', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('is_future_key', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)
_DescribeLogDirsTopic_SCHEMA = StructSchema(
    DescribeLogDirsTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeLogDirsPartition_SCHEMA),
    ),
)
_DescribeLogDirsResult_SCHEMA = StructSchema(
    DescribeLogDirsResult,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('log_dir', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeLogDirsTopic_SCHEMA),
        Field('total_bytes', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('usable_bytes', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_DescribeLogDirsResponse_SCHEMA = StructSchema(
    DescribeLogDirsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeLogDirsResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(35, 'response', 'DescribeLogDirsResponse', Versions(0, 4), Versions(2, 32767), _DescribeLogDirsResponse_SCHEMA)
