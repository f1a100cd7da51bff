"""DescribeUserScramCredentialsRequest (API key 50), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class UserName:
    name: str = ''


@dataclass(kw_only=True, slots=True)
class DescribeUserScramCredentialsRequest:
    users: list[UserName] = field(default_factory=list)


_UserName_SCHEMA = StructSchema(
    UserName,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_DescribeUserScramCredentialsRequest_SCHEMA = StructSchema(
    DescribeUserScramCredentialsRequest,
    (
        Field('users', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], _UserName_SCHEMA),
    ),
)

SCHEMA = MessageSchema(50, 'request', 'DescribeUserScramCredentialsRequest', Versions(0, 0), Versions(0, 32767), _DescribeUserScramCredentialsRequest_SCHEMA)
