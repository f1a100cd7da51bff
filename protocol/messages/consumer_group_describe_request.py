"""ConsumerGroupDescribeRequest (API key 69), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ConsumerGroupDescribeRequest:
    group_ids: list[str] = field(default_factory=list)
    include_authorized_operations: bool = False


_ConsumerGroupDescribeRequest_SCHEMA = StructSchema(
    ConsumerGroupDescribeRequest,
    (
        Field('group_ids', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('include_authorized_operations', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(69, 'request', 'ConsumerGroupDescribeRequest', Versions(0, 0), Versions(0, 32767), _ConsumerGroupDescribeRequest_SCHEMA)
