"""UnregisterBrokerRequest (API key 64), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class UnregisterBrokerRequest:
    broker_id: int = 0


_UnregisterBrokerRequest_SCHEMA = StructSchema(
    UnregisterBrokerRequest,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(64, 'request', 'UnregisterBrokerRequest', Versions(0, 0), Versions(0, 32767), _UnregisterBrokerRequest_SCHEMA)
