"""ListGroupsRequest (API key 16), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListGroupsRequest:
    states_filter: list[str] = field(default_factory=list)
    types_filter: list[str] = field(default_factory=list)


_ListGroupsRequest_SCHEMA = StructSchema(
    ListGroupsRequest,
    (
        Field('states_filter', 'string', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('types_filter', 'string', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(16, 'request', 'ListGroupsRequest', Versions(0, 5), Versions(3, 32767), _ListGroupsRequest_SCHEMA)
