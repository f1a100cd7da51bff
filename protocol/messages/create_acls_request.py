"""CreateAclsRequest (API key 30), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AclCreation:
    resource_type: int = 0
    resource_name: str = ''
    resource_pattern_type: int = 3
    principal: str = ''
    host: str = ''
    operation: int = 0
    permission_type: int = 0


@dataclass(kw_only=True, slots=True)
class CreateAclsRequest:
    creations: list[AclCreation] = field(default_factory=list)


_AclCreation_SCHEMA = StructSchema(
    AclCreation,
    (
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('resource_pattern_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 3, None),
        Field('principal', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('operation', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('permission_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_CreateAclsRequest_SCHEMA = StructSchema(
    CreateAclsRequest,
    (
        Field('creations', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AclCreation_SCHEMA),
    ),
)

SCHEMA = MessageSchema(30, 'request', 'CreateAclsRequest', Versions(0, 3), Versions(2, 32767), _CreateAclsRequest_SCHEMA)
