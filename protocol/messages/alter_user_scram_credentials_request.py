"""AlterUserScramCredentialsRequest (API key 51), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ScramCredentialDeletion:
    name: str = ''
    mechanism: int = 0


@dataclass(kw_only=True, slots=True)
class ScramCredentialUpsertion:
    name: str = ''
    mechanism: int = 0
    iterations: int = 0
    salt: bytes = b''
    salted_password: bytes = b''


@dataclass(kw_only=True, slots=True)
class AlterUserScramCredentialsRequest:
    deletions: list[ScramCredentialDeletion] = field(default_factory=list)
    upsertions: list[ScramCredentialUpsertion] = field(default_factory=list)


_ScramCredentialDeletion_SCHEMA = StructSchema(
    ScramCredentialDeletion,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('mechanism', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_ScramCredentialUpsertion_SCHEMA = StructSchema(
    ScramCredentialUpsertion,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('mechanism', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('iterations', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('salt', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
        Field('salted_password', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)
_AlterUserScramCredentialsRequest_SCHEMA = StructSchema(
    AlterUserScramCredentialsRequest,
    (
        Field('deletions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ScramCredentialDeletion_SCHEMA),
        Field('upsertions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ScramCredentialUpsertion_SCHEMA),
    ),
)

SCHEMA = MessageSchema(51, 'request', 'AlterUserScramCredentialsRequest', Versions(0, 0), Versions(0, 32767), _AlterUserScramCredentialsRequest_SCHEMA)
