"""AllocateProducerIdsResponse (API key 67), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AllocateProducerIdsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    producer_id_start: int = 0
    producer_id_len: int = 0


_AllocateProducerIdsResponse_SCHEMA = StructSchema(
    AllocateProducerIdsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_id_start', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_id_len', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(67, 'response', 'AllocateProducerIdsResponse', Versions(0, 0), Versions(0, 32767), _AllocateProducerIdsResponse_SCHEMA)
