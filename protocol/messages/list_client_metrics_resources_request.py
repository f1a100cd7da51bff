"""ListClientMetricsResourcesRequest (API key 74), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListClientMetricsResourcesRequest:
    pass


_ListClientMetricsResourcesRequest_SCHEMA = StructSchema(ListClientMetricsResourcesRequest, ())

SCHEMA = MessageSchema(74, 'request', 'ListClientMetricsResourcesRequest', Versions(0, 0), Versions(0, 32767), _ListClientMetricsResourcesRequest_SCHEMA)
