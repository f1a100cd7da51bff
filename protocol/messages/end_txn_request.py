"""EndTxnRequest (API key 26), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EndTxnRequest:
    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    committed: bool = False


_EndTxnRequest_SCHEMA = StructSchema(
    EndTxnRequest,
    (
        Field('transactional_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('committed', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(26, 'request', 'EndTxnRequest', Versions(0, 4), Versions(3, 32767), _EndTxnRequest_SCHEMA)
