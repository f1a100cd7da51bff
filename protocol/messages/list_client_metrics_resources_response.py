"""ListClientMetricsResourcesResponse (API key 74), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ClientMetricsResource:
    name: str = ''


@dataclass(kw_only=True, slots=True)
class ListClientMetricsResourcesResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    client_metrics_resources: list[ClientMetricsResource] = field(default_factory=list)


_ClientMetricsResource_SCHEMA = StructSchema(
    ClientMetricsResource,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)
_ListClientMetricsResourcesResponse_SCHEMA = StructSchema(
    ListClientMetricsResourcesResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('client_metrics_resources', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ClientMetricsResource_SCHEMA),
    ),
)

SCHEMA = MessageSchema(74, 'response', 'ListClientMetricsResourcesResponse', Versions(0, 0), Versions(0, 32767), _ListClientMetricsResourcesResponse_SCHEMA)
