"""ControlledShutdownRequest (API key 7), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int = 0
    broker_epoch: int = -1


_ControlledShutdownRequest_SCHEMA = StructSchema(
    ControlledShutdownRequest,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)

SCHEMA = MessageSchema(7, 'request', 'ControlledShutdownRequest', Versions(0, 3), Versions(3, 32767), _ControlledShutdownRequest_SCHEMA)
