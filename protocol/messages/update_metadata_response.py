"""UpdateMetadataResponse (API key 6), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class UpdateMetadataResponse:
    error_code: int = 0


_UpdateMetadataResponse_SCHEMA = StructSchema(
    UpdateMetadataResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)

SCHEMA = MessageSchema(6, 'response', 'UpdateMetadataResponse', Versions(0, 8), Versions(6, 32767), _UpdateMetadataResponse_SCHEMA)
