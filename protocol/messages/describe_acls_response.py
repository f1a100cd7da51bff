"""DescribeAclsResponse (API key 29), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AclDescription:
    principal: str = ''
    host: str = ''
    operation: int = 0
    permission_type: int = 0


@dataclass(kw_only=True, slots=True)
class DescribeAclsResource:
    resource_type: int = 0
    resource_name: str = ''
    pattern_type: int = 3
    acls: list[AclDescription] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeAclsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    resources: list[DescribeAclsResource] = field(default_factory=list)


_AclDescription_SCHEMA = StructSchema(
    AclDescription,
    (
        Field('principal', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('operation', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('permission_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DescribeAclsResource_SCHEMA = StructSchema(
    DescribeAclsResource,
    (
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('pattern_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 3, None),
        Field('acls', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AclDescription_SCHEMA),
    ),
)
_DescribeAclsResponse_SCHEMA = StructSchema(
    DescribeAclsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('resources', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeAclsResource_SCHEMA),
    ),
)

SCHEMA = MessageSchema(29, 'response', 'DescribeAclsResponse', Versions(0, 3), Versions(2, 32767), _DescribeAclsResponse_SCHEMA)
