"""IncrementalAlterConfigsRequest (API key 44), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AlterableConfig:
    name: str = ''
    config_operation: int = 0
    value: str | None = ''


@dataclass(kw_only=True, slots=True)
class AlterConfigsResource:
    resource_type: int = 0
    resource_name: str = ''
    configs: list[AlterableConfig] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class IncrementalAlterConfigsRequest:
    resources: list[AlterConfigsResource] = field(default_factory=list)
    validate_only: bool = False


_AlterableConfig_SCHEMA = StructSchema(
    AlterableConfig,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('config_operation', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('value', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_AlterConfigsResource_SCHEMA = StructSchema(
    AlterConfigsResource,
    (
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('configs', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterableConfig_SCHEMA),
    ),
)
_IncrementalAlterConfigsRequest_SCHEMA = StructSchema(
    IncrementalAlterConfigsRequest,
    (
        Field('resources', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterConfigsResource_SCHEMA),
        Field('validate_only', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(44, 'request', 'IncrementalAlterConfigsRequest', Versions(0, 1), Versions(1, 32767), _IncrementalAlterConfigsRequest_SCHEMA)
