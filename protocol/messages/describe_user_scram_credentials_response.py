"""DescribeUserScramCredentialsResponse (API key 50), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CredentialInfo:
    mechanism: int = 0
    iterations: int = 0


@dataclass(kw_only=True, slots=True)
class DescribeUserScramCredentialsResult:
    user: str = ''
    error_code: int = 0
    error_message: str | None = ''
    credential_infos: list[CredentialInfo] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeUserScramCredentialsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    results: list[DescribeUserScramCredentialsResult] = field(default_factory=list)


_CredentialInfo_SCHEMA = StructSchema(
    CredentialInfo,
    (
        Field('mechanism', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('iterations', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DescribeUserScramCredentialsResult_SCHEMA = StructSchema(
    DescribeUserScramCredentialsResult,
    (
        Field('user', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('credential_infos', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CredentialInfo_SCHEMA),
    ),
)
_DescribeUserScramCredentialsResponse_SCHEMA = StructSchema(
    DescribeUserScramCredentialsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeUserScramCredentialsResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(50, 'response', 'DescribeUserScramCredentialsResponse', Versions(0, 0), Versions(0, 32767), _DescribeUserScramCredentialsResponse_SCHEMA)
