"""CreateAclsResponse (API key 30), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AclCreationResult:
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class CreateAclsResponse:
    throttle_time_ms: int = 0
    results: list[AclCreationResult] = field(default_factory=list)


_AclCreationResult_SCHEMA = StructSchema(
    AclCreationResult,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_CreateAclsResponse_SCHEMA = StructSchema(
    CreateAclsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AclCreationResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(30, 'response', 'CreateAclsResponse', Versions(0, 3), Versions(2, 32767), _CreateAclsResponse_SCHEMA)
