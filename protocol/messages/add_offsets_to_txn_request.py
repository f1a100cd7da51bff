"""AddOffsetsToTxnRequest (API key 25), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AddOffsetsToTxnRequest:
    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    group_id: str = ''


_AddOffsetsToTxnRequest_SCHEMA = StructSchema(
    AddOffsetsToTxnRequest,
    (
        Field('transactional_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)

SCHEMA = MessageSchema(25, 'request', 'AddOffsetsToTxnRequest', Versions(0, 4), Versions(3, 32767), _AddOffsetsToTxnRequest_SCHEMA)
