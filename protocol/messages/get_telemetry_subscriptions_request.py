"""GetTelemetrySubscriptionsRequest (API key 71), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class GetTelemetrySubscriptionsRequest:
    client_instance_id: uuid.UUID = ZERO_UUID


_GetTelemetrySubscriptionsRequest_SCHEMA = StructSchema(
    GetTelemetrySubscriptionsRequest,
    (
        Field('client_instance_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
    ),
)

SCHEMA = MessageSchema(71, 'request', 'GetTelemetrySubscriptionsRequest', Versions(0, 0), Versions(0, 32767), _GetTelemetrySubscriptionsRequest_SCHEMA)
