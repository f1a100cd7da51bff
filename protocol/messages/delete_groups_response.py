"""DeleteGroupsResponse (API key 42), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DeletableGroupResult:
    group_id: str = ''
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class DeleteGroupsResponse:
    throttle_time_ms: int = 0
    results: list[DeletableGroupResult] = field(default_factory=list)


_DeletableGroupResult_SCHEMA = StructSchema(
    DeletableGroupResult,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DeleteGroupsResponse_SCHEMA = StructSchema(
    DeleteGroupsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeletableGroupResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(42, 'response', 'DeleteGroupsResponse', Versions(0, 2), Versions(2, 32767), _DeleteGroupsResponse_SCHEMA)
