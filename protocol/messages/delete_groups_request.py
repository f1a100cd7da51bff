"""DeleteGroupsRequest (API key 42), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeleteGroupsRequest:
    groups_names: list[str] = field(default_factory=list)


_DeleteGroupsRequest_SCHEMA = StructSchema(
    DeleteGroupsRequest,
    (
        Field('groups_names', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(42, 'request', 'DeleteGroupsRequest', Versions(0, 2), Versions(2, 32767), _DeleteGroupsRequest_SCHEMA)
