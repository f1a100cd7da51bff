"""FindCoordinatorResponse (API key 10), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class Coordinator:
    key: str = ''
    node_id: int = 0
    host: str = ''
    port: int = 0
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class FindCoordinatorResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    node_id: int = 0
    host: str = ''
    port: int = 0
    coordinators: list[Coordinator] = field(default_factory=list)


_Coordinator_SCHEMA = StructSchema(
    Coordinator,
    (
        Field('key', 'string', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('node_id', 'int32', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(4, 32767), Versions(4, 32767), None, Versions(1, 0), '', None),
    ),
)
_FindCoordinatorResponse_SCHEMA = StructSchema(
    FindCoordinatorResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(1, 3), Versions(1, 3), None, Versions(1, 0), '', None),
        Field('node_id', 'int32', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 3), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('coordinators', 'struct', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], _Coordinator_SCHEMA),
    ),
)

SCHEMA = MessageSchema(10, 'response', 'FindCoordinatorResponse', Versions(0, 6), Versions(3, 32767), _FindCoordinatorResponse_SCHEMA)
