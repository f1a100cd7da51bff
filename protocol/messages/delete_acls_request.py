"""DeleteAclsRequest (API key 31), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeleteAclsFilter:
    resource_type_filter: int = 0
    resource_name_filter: str | None = ''
    pattern_type_filter: int = 3
    principal_filter: str | None = ''
    host_filter: str | None = ''
    operation: int = 0
    permission_type: int = 0


@dataclass(kw_only=True, slots=True)
class DeleteAclsRequest:
    filters: list[DeleteAclsFilter] = field(default_factory=list)


_DeleteAclsFilter_SCHEMA = StructSchema(
    DeleteAclsFilter,
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
_DeleteAclsRequest_SCHEMA = StructSchema(
    DeleteAclsRequest,
    (
        Field('filters', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteAclsFilter_SCHEMA),
    ),
)

SCHEMA = MessageSchema(31, 'request', 'DeleteAclsRequest', Versions(0, 3), Versions(2, 32767), _DeleteAclsRequest_SCHEMA)
