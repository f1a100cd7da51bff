"""UpdateFeaturesResponse (API key 57), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class UpdatableFeatureResult:
    feature: str = ''
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class UpdateFeaturesResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    results: list[UpdatableFeatureResult] = field(default_factory=list)


_UpdatableFeatureResult_SCHEMA = StructSchema(
    UpdatableFeatureResult,
    (
        Field('feature', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_UpdateFeaturesResponse_SCHEMA = StructSchema(
    UpdateFeaturesResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _UpdatableFeatureResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(57, 'response', 'UpdateFeaturesResponse', Versions(0, 1), Versions(0, 32767), _UpdateFeaturesResponse_SCHEMA)
