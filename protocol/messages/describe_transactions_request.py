"""DescribeTransactionsRequest (API key 65), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeTransactionsRequest:
    transactional_ids: list[str] = field(default_factory=list)


_DescribeTransactionsRequest_SCHEMA = StructSchema(
    DescribeTransactionsRequest,
    (
        Field('transactional_ids', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(65, 'request', 'DescribeTransactionsRequest', Versions(0, 0), Versions(0, 32767), _DescribeTransactionsRequest_SCHEMA)
