"""DescribeDelegationTokenRequest (API key 41), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeDelegationTokenOwner:
    principal_type: str = ''
    principal_name: str = ''


@dataclass(kw_only=True, slots=True)
class DescribeDelegationTokenRequest:
    owners: list[DescribeDelegationTokenOwner] = field(default_factory=list)


_DescribeDelegationTokenOwner_SCHEMA = StructSchema(
    DescribeDelegationTokenOwner,
    (
        Field('principal_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('principal_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_DescribeDelegationTokenRequest_SCHEMA = StructSchema(
    DescribeDelegationTokenRequest,
    (
        Field('owners', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], _DescribeDelegationTokenOwner_SCHEMA),
    ),
)

SCHEMA = MessageSchema(41, 'request', 'DescribeDelegationTokenRequest', Versions(0, 3), Versions(2, 32767), _DescribeDelegationTokenRequest_SCHEMA)
