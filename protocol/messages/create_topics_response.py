"""CreateTopicsResponse (API key 19), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreatableTopicConfigs:
    name: str = ''
    value: str | None = ''
    read_only: bool = False
    config_source: int = -1
    is_sensitive: bool = False


@dataclass(kw_only=True, slots=True)
class CreatableTopicResult:
    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    error_code: int = 0
    error_message: str | None = ''
    topic_config_error_code: int = 0
    num_partitions: int = -1
    replication_factor: int = -1
    configs: list[CreatableTopicConfigs] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CreateTopicsResponse:
    throttle_time_ms: int = 0
    topics: list[CreatableTopicResult] = field(default_factory=list)


_CreatableTopicConfigs_SCHEMA = StructSchema(
    CreatableTopicConfigs,
    (
        Field('name', 'string', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('value', 'string', False, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), '', None),
        Field('read_only', 'bool', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('config_source', 'int8', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('is_sensitive', 'bool', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)
_CreatableTopicResult_SCHEMA = StructSchema(
    CreatableTopicResult,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(1, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('topic_config_error_code', 'int16', False, Versions(5, 32767), Versions(1, 0), 0, Versions(5, 32767), 0, None),
        Field('num_partitions', 'int32', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('replication_factor', 'int16', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('configs', 'struct', True, Versions(5, 32767), Versions(5, 32767), None, Versions(1, 0), [], _CreatableTopicConfigs_SCHEMA),
    ),
)
_CreateTopicsResponse_SCHEMA = StructSchema(
    CreateTopicsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatableTopicResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(19, 'response', 'CreateTopicsResponse', Versions(0, 7), Versions(5, 32767), _CreateTopicsResponse_SCHEMA)
