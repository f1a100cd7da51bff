"""GetTelemetrySubscriptionsResponse (API key 71), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class GetTelemetrySubscriptionsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    client_instance_id: uuid.UUID = ZERO_UUID
    subscription_id: int = 0
    accepted_compression_types: list[int] = field(default_factory=list)
    push_interval_ms: int = 0
    telemetry_max_bytes: int = 0
    delta_temporality: bool = False
    requested_metrics: list[str] = field(default_factory=list)


_GetTelemetrySubscriptionsResponse_SCHEMA = StructSchema(
    GetTelemetrySubscriptionsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('client_instance_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('subscription_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('accepted_compression_types', 'int8', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('push_interval_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('telemetry_max_bytes', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('delta_temporality', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('requested_metrics', 'string', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)

SCHEMA = MessageSchema(71, 'response', 'GetTelemetrySubscriptionsResponse', Versions(0, 0), Versions(0, 32767), _GetTelemetrySubscriptionsResponse_SCHEMA)
