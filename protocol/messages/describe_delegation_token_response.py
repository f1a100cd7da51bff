"""DescribeDelegationTokenResponse (API key 41), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribedDelegationTokenRenewer:
    principal_type: str = ''
    principal_name: str = ''


@dataclass(kw_only=True, slots=True)
class DescribedDelegationToken:
    principal_type: str = ''
    principal_name: str = ''
    token_requester_principal_type: str = ''
    token_requester_principal_name: str = ''
    issue_timestamp: int = 0
    expiry_timestamp: int = 0
    max_timestamp: int = 0
    token_id: str = ''
    hmac: bytes = b''
    renewers: list[DescribedDelegationTokenRenewer] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeDelegationTokenResponse:
    error_code: int = 0
    tokens: list[DescribedDelegationToken] = field(default_factory=list)
    throttle_time_ms: int = 0


_DescribedDelegationTokenRenewer_SCHEMA = StructSchema(
    DescribedDelegationTokenRenewer,
    (
        Field('principal_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('principal_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_DescribedDelegationToken_SCHEMA = StructSchema(
    DescribedDelegationToken,
    (
        Field('principal_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('principal_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('token_requester_principal_type', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('token_requester_principal_name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('issue_timestamp', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('expiry_timestamp', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_timestamp', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('token_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('hmac', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('renewers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribedDelegationTokenRenewer_SCHEMA),
    ),
)
_DescribeDelegationTokenResponse_SCHEMA = StructSchema(
    DescribeDelegationTokenResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('tokens', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribedDelegationToken_SCHEMA),
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(41, 'response', 'DescribeDelegationTokenResponse', Versions(0, 3), Versions(2, 32767), _DescribeDelegationTokenResponse_SCHEMA)
