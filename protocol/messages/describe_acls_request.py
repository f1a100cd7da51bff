"""DescribeAclsRequest (API key 29), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeAclsRequest:
    resource_type_filter: int = 0
    resource_name_filter: str | None = ''
    pattern_type_filter: int = 3
    principal_filter: str | None = ''
    host_filter: str | None = ''
    operation: int = 0
    permission_type: int = 0


_DescribeAclsRequest_SCHEMA = StructSchema(
    DescribeAclsRequest,
    (
        Field('resource_type_filter', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name_filter', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('pattern_type_filter', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 3, None),
        Field('principal_filter', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('host_filter', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('operation', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('permission_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(29, 'request', 'DescribeAclsRequest', Versions(0, 3), Versions(2, 32767), _DescribeAclsRequest_SCHEMA)
