"""ListTransactionsRequest (API key 66), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListTransactionsRequest:
    state_filters: list[str] = field(default_factory=list)
    producer_id_filters: list[int] = field(default_factory=list)
    duration_filter: int = -1


_ListTransactionsRequest_SCHEMA = StructSchema(
    ListTransactionsRequest,
    (
        Field('state_filters', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('producer_id_filters', 'int64', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('duration_filter', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)

SCHEMA = MessageSchema(66, 'request', 'ListTransactionsRequest', Versions(0, 1), Versions(0, 32767), _ListTransactionsRequest_SCHEMA)
