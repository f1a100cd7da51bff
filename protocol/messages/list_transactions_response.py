"""ListTransactionsResponse (API key 66), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TransactionState:
    transactional_id: str = ''
    producer_id: int = 0
    transaction_state: str = ''


@dataclass(kw_only=True, slots=True)
class ListTransactionsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    unknown_state_filters: list[str] = field(default_factory=list)
    transaction_states: list[TransactionState] = field(default_factory=list)


_TransactionState_SCHEMA = StructSchema(
    TransactionState,
    (
        Field('transactional_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('transaction_state', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_ListTransactionsResponse_SCHEMA = StructSchema(
    ListTransactionsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('unknown_state_filters', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('transaction_states', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TransactionState_SCHEMA),
    ),
)

SCHEMA = MessageSchema(66, 'response', 'ListTransactionsResponse', Versions(0, 1), Versions(0, 32767), _ListTransactionsResponse_SCHEMA)
