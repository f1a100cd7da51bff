"""AlterUserScramCredentialsResponse (API key 51), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AlterUserScramCredentialsResult:
    user: str = ''
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class AlterUserScramCredentialsResponse:
    throttle_time_ms: int = 0
    results: list[AlterUserScramCredentialsResult] = field(default_factory=list)


_AlterUserScramCredentialsResult_SCHEMA = StructSchema(
    AlterUserScramCredentialsResult,
    (
        Field('user', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_AlterUserScramCredentialsResponse_SCHEMA = StructSchema(
    AlterUserScramCredentialsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterUserScramCredentialsResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(51, 'response', 'AlterUserScramCredentialsResponse', Versions(0, 0), Versions(0, 32767), _AlterUserScramCredentialsResponse_SCHEMA)
