"""IncrementalAlterConfigsResponse (API key 44), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AlterConfigsResourceResponse:
    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''


@dataclass(kw_only=True, slots=True)
class IncrementalAlterConfigsResponse:
    throttle_time_ms: int = 0
    responses: list[AlterConfigsResourceResponse] = field(default_factory=list)


_AlterConfigsResourceResponse_SCHEMA = StructSchema(
    AlterConfigsResourceResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_IncrementalAlterConfigsResponse_SCHEMA = StructSchema(
    IncrementalAlterConfigsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterConfigsResourceResponse_SCHEMA),
    ),
)

SCHEMA = MessageSchema(44, 'response', 'IncrementalAlterConfigsResponse', Versions(0, 1), Versions(1, 32767), _IncrementalAlterConfigsResponse_SCHEMA)
