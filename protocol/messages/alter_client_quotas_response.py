"""AlterClientQuotasResponse (API key 49), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class EntityData:
    entity_type: str = ''
    entity_name: str | None = ''


@dataclass(kw_only=True, slots=True)
class EntryData:
    error_code: int = 0
    error_message: str | None = ''
    entity: list[EntityData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterClientQuotasResponse:
    throttle_time_ms: int = 0
    entries: list[EntryData] = field(default_factory=list)


_EntityData_SCHEMA = StructSchema(
    EntityData,
    (
        Field('entity_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('entity_name', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_EntryData_SCHEMA = StructSchema(
    EntryData,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('entity', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _EntityData_SCHEMA),
    ),
)
_AlterClientQuotasResponse_SCHEMA = StructSchema(
    AlterClientQuotasResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('entries', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _EntryData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(49, 'response', 'AlterClientQuotasResponse', Versions(0, 1), Versions(1, 32767), _AlterClientQuotasResponse_SCHEMA)
