"""AddPartitionsToTxnRequest (API key 24), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnTopic:
    name: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnTransaction:
    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    verify_only: bool = False
    topics: list[AddPartitionsToTxnTopic] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AddPartitionsToTxnRequest:
    transactions: list[AddPartitionsToTxnTransaction] = field(default_factory=list)
    v3_and_below_transactional_id: str = ''
    v3_and_below_producer_id: int = 0
    v3_and_below_producer_epoch: int = 0
    v3_and_below_topics: list[AddPartitionsToTxnTopic] = field(default_factory=list)


_AddPartitionsToTxnTopic_SCHEMA = StructSchema(
    AddPartitionsToTxnTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_AddPartitionsToTxnTransaction_SCHEMA = StructSchema(
    AddPartitionsToTxnTransaction,
    (
        Field('transactional_id', 'string', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('producer_id', 'int64', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('verify_only', 'bool', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('topics', 'struct', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnTopic_SCHEMA),
    ),
)
_AddPartitionsToTxnRequest_SCHEMA = StructSchema(
    AddPartitionsToTxnRequest,
    (
        Field('transactions', 'struct', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnTransaction_SCHEMA),
        Field('v3_and_below_transactional_id', 'string', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('v3_and_below_producer_id', 'int64', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('v3_and_below_producer_epoch', 'int16', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('v3_and_below_topics', 'struct', True, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), [], _AddPartitionsToTxnTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(24, 'request', 'AddPartitionsToTxnRequest', Versions(0, 5), Versions(3, 32767), _AddPartitionsToTxnRequest_SCHEMA)
