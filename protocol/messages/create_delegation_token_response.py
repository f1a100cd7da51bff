"""CreateDelegationTokenResponse (API key 38), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreateDelegationTokenResponse:
    error_code: int = 0
    principal_type: str = ''
    principal_name: str = ''
    token_requester_principal_type: str = ''
    token_requester_principal_name: str = ''
    issue_timestamp_ms: int = 0
    expiry_timestamp_ms: int = 0
    max_timestamp_ms: int = 0
    token_id: str = ''
    hmac: bytes = b''
    throttle_time_ms: int = 0


_CreateDelegationTokenResponse_SCHEMA = StructSchema(
    CreateDelegationTokenResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('principal_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('principal_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('token_requester_principal_type', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('token_requester_principal_name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('issue_timestamp_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('expiry_timestamp_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_timestamp_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('token_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('hmac', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(38, 'response', 'CreateDelegationTokenResponse', Versions(0, 3), Versions(2, 32767), _CreateDelegationTokenResponse_SCHEMA)
