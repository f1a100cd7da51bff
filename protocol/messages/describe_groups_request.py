"""DescribeGroupsRequest (API key 15), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeGroupsRequest:
    groups: list[str] = field(default_factory=list)
    include_authorized_operations: bool = False


_DescribeGroupsRequest_SCHEMA = StructSchema(
    DescribeGroupsRequest,
    (
        Field('groups', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('include_authorized_operations', 'bool', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(15, 'request', 'DescribeGroupsRequest', Versions(0, 5), Versions(5, 32767), _DescribeGroupsRequest_SCHEMA)
