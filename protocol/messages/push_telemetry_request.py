"""PushTelemetryRequest (API key 72), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PushTelemetryRequest:
    client_instance_id: uuid.UUID = ZERO_UUID
    subscription_id: int = 0
    terminating: bool = False
    compression_type: int = 0
    metrics: bytes = b''


_PushTelemetryRequest_SCHEMA = StructSchema(
    PushTelemetryRequest,
    (
        Field('client_instance_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('subscription_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('terminating', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('compression_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('metrics', 'bytes', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), b'', None),
    ),
)

SCHEMA = MessageSchema(72, 'request', 'PushTelemetryRequest', Versions(0, 0), Versions(0, 32767), _PushTelemetryRequest_SCHEMA)
