"""DescribeConfigsResponse (API key 32), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeConfigsSynonym:
    name: str = ''
    value: str | None = ''
    source: int = 0


@dataclass(kw_only=True, slots=True)
class DescribeConfigsResourceResult:
    name: str = ''
    value: str | None = ''
    read_only: bool = False
    is_default: bool = False
    config_source: int = -1
    is_sensitive: bool = False
    synonyms: list[DescribeConfigsSynonym] = field(default_factory=list)
    config_type: int = 0
    documentation: str | None = ''


@dataclass(kw_only=True, slots=True)
class DescribeConfigsResult:
    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''
    configs: list[DescribeConfigsResourceResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeConfigsResponse:
    throttle_time_ms: int = 0
    results: list[DescribeConfigsResult] = field(default_factory=list)


_DescribeConfigsSynonym_SCHEMA = StructSchema(
    DescribeConfigsSynonym,
    (
        Field('name', 'string', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('value', 'string', False, Versions(1, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('source', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DescribeConfigsResourceResult_SCHEMA = StructSchema(
    DescribeConfigsResourceResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('value', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('read_only', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('is_default', 'bool', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('config_source', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('is_sensitive', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('synonyms', 'struct', True, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeConfigsSynonym_SCHEMA),
        Field('config_type', 'int8', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('documentation', 'string', False, Versions(3, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_DescribeConfigsResult_SCHEMA = StructSchema(
    DescribeConfigsResult,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('configs', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeConfigsResourceResult_SCHEMA),
    ),
)
_DescribeConfigsResponse_SCHEMA = StructSchema(
    DescribeConfigsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeConfigsResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(32, 'response', 'DescribeConfigsResponse', Versions(0, 4), Versions(4, 32767), _DescribeConfigsResponse_SCHEMA)
