"""ApiVersionsResponse (API key 18), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ApiVersion:
    api_key: int = 0
    min_version: int = 0
    max_version: int = 0


@dataclass(kw_only=True, slots=True)
class SupportedFeatureKey:
    name: str = ''
    min_version: int = 0
    max_version: int = 0


@dataclass(kw_only=True, slots=True)
class FinalizedFeatureKey:
    name: str = ''
    max_version_level: int = 0
    min_version_level: int = 0


@dataclass(kw_only=True, slots=True)
class ApiVersionsResponse:
    error_code: int = 0
    api_keys: list[ApiVersion] = field(default_factory=list)
    throttle_time_ms: int = 0
    supported_features: list[SupportedFeatureKey] = field(default_factory=list)
    finalized_features_epoch: int = -1
    finalized_features: list[FinalizedFeatureKey] = field(default_factory=list)
    zk_migration_ready: bool = False


_ApiVersion_SCHEMA = StructSchema(
    ApiVersion,
    (
        Field('api_key', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('min_version', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_version', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_SupportedFeatureKey_SCHEMA = StructSchema(
    SupportedFeatureKey,
    (
        Field('name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('min_version', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_version', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_FinalizedFeatureKey_SCHEMA = StructSchema(
    FinalizedFeatureKey,
    (
        Field('name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('max_version_level', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('min_version_level', 'int16', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_ApiVersionsResponse_SCHEMA = StructSchema(
    ApiVersionsResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('api_keys', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ApiVersion_SCHEMA),
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('supported_features', 'struct', True, Versions(3, 32767), Versions(1, 0), 0, Versions(3, 32767), [], _SupportedFeatureKey_SCHEMA),
        Field('finalized_features_epoch', 'int64', False, Versions(3, 32767), Versions(1, 0), 1, Versions(3, 32767), -1, None),
        Field('finalized_features', 'struct', True, Versions(3, 32767), Versions(1, 0), 2, Versions(3, 32767), [], _FinalizedFeatureKey_SCHEMA),
        Field('zk_migration_ready', 'bool', False, Versions(3, 32767), Versions(1, 0), 3, Versions(3, 32767), False, None),
    ),
)

SCHEMA = MessageSchema(18, 'response', 'ApiVersionsResponse', Versions(0, 4), Versions(3, 32767), _ApiVersionsResponse_SCHEMA)
