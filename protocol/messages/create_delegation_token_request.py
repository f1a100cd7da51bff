"""CreateDelegationTokenRequest (API key 38), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreatableRenewers:
    principal_type: str = ''
    principal_name: str = ''


@dataclass(kw_only=True, slots=True)
class CreateDelegationTokenRequest:
    owner_principal_type: str | None = ''
    owner_principal_name: str | None = ''
    renewers: list[CreatableRenewers] = field(default_factory=list)
    max_lifetime_ms: int = 0


_CreatableRenewers_SCHEMA = StructSchema(
    CreatableRenewers,
    (
        Field('principal_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('principal_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_CreateDelegationTokenRequest_SCHEMA = StructSchema(
    CreateDelegationTokenRequest,
    (
        Field('owner_principal_type', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), '', None),
        Field('owner_principal_name', 'string', False, Versions(3, 32767), Versions(3, 32767), None, Versions(1, 0), '', None),
        Field('renewers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatableRenewers_SCHEMA),
        Field('max_lifetime_ms', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(38, 'request', 'CreateDelegationTokenRequest', Versions(0, 3), Versions(2, 32767), _CreateDelegationTokenRequest_SCHEMA)
