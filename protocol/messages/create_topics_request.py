"""CreateTopicsRequest (API key 19), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreatableReplicaAssignment:
    partition_index: int = 0
    broker_ids: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CreatableTopicConfig:
    name: str = ''
    value: str | None = ''


@dataclass(kw_only=True, slots=True)
class CreatableTopic:
    name: str = ''
    num_partitions: int = 0
    replication_factor: int = 0
    assignments: list[CreatableReplicaAssignment] = field(default_factory=list)
    configs: list[CreatableTopicConfig] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CreateTopicsRequest:
    topics: list[CreatableTopic] = field(default_factory=list)
    timeout_ms: int = 60000
    validate_only: bool = False


_CreatableReplicaAssignment_SCHEMA = StructSchema(
    CreatableReplicaAssignment,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_ids', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_CreatableTopicConfig_SCHEMA = StructSchema(
    CreatableTopicConfig,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('value', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_CreatableTopic_SCHEMA = StructSchema(
    CreatableTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('num_partitions', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replication_factor', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('assignments', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatableReplicaAssignment_SCHEMA),
        Field('configs', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatableTopicConfig_SCHEMA),
    ),
)
_CreateTopicsRequest_SCHEMA = StructSchema(
    CreateTopicsRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatableTopic_SCHEMA),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 60000, None),
        Field('validate_only', 'bool', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(19, 'request', 'CreateTopicsRequest', Versions(0, 7), Versions(5, 32767), _CreateTopicsRequest_SCHEMA)
