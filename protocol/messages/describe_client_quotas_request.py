"""DescribeClientQuotasRequest (API key 48), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ComponentData:
    entity_type: str = ''
    match_type: int = 0
    match: str | None = ''


@dataclass(kw_only=True, slots=True)
class DescribeClientQuotasRequest:
    components: list[ComponentData] = field(default_factory=list)
    strict: bool = False


_ComponentData_SCHEMA = StructSchema(
    ComponentData,
    (
        Field('entity_type', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('match_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('match', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_DescribeClientQuotasRequest_SCHEMA = StructSchema(
    DescribeClientQuotasRequest,
    (
        Field('components', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ComponentData_SCHEMA),
        Field('strict', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(48, 'request', 'DescribeClientQuotasRequest', Versions(0, 1), Versions(1, 32767), _DescribeClientQuotasRequest_SCHEMA)
