"""UpdateFeaturesRequest (API key 57), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class FeatureUpdateKey:
    feature: str = ''
    max_version_level: int = 0
    allow_downgrade: bool = False
    upgrade_type: int = 1


@dataclass(kw_only=True, slots=True)
class UpdateFeaturesRequest:
    timeout_ms: int = 60000
    feature_updates: list[FeatureUpdateKey] = field(default_factory=list)
    validate_only: bool = False


_FeatureUpdateKey_SCHEMA = StructSchema(
    FeatureUpdateKey,
    (
        Field('feature', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('max_version_level', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('allow_downgrade', 'bool', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('upgrade_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 1, None),
    ),
)
_UpdateFeaturesRequest_SCHEMA = StructSchema(
    UpdateFeaturesRequest,
    (
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 60000, None),
        Field('feature_updates', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _FeatureUpdateKey_SCHEMA),
        Field('validate_only', 'bool', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(57, 'request', 'UpdateFeaturesRequest', Versions(0, 1), Versions(0, 32767), _UpdateFeaturesRequest_SCHEMA)
