"""AlterClientQuotasRequest (API key 49), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
class OpData:
    key: str = ''
    value: float = 0.0
    remove: bool = False


@dataclass(kw_only=True, slots=True)
class EntryData:
    entity: list[EntityData] = field(default_factory=list)
    ops: list[OpData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterClientQuotasRequest:
    entries: list[EntryData] = field(default_factory=list)
    validate_only: bool = False


_EntityData_SCHEMA = StructSchema(
    EntityData,
    (
        Field('entity_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('entity_name', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_OpData_SCHEMA = StructSchema(
    OpData,
    (
        Field('key', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('value', 'float64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0.0, None),
        Field('remove', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)
_EntryData_SCHEMA = StructSchema(
    EntryData,
    (
        Field('entity', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _EntityData_SCHEMA),
        Field('ops', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OpData_SCHEMA),
    ),
)
_AlterClientQuotasRequest_SCHEMA = StructSchema(
    AlterClientQuotasRequest,
    (
        Field('entries', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _EntryData_SCHEMA),
        Field('validate_only', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(49, 'request', 'AlterClientQuotasRequest', Versions(0, 1), Versions(1, 32767), _AlterClientQuotasRequest_SCHEMA)
