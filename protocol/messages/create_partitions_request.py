"""CreatePartitionsRequest (API key 37), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CreatePartitionsAssignment:
    broker_ids: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CreatePartitionsTopic:
    name: str = ''
    count: int = 0
    assignments: list[CreatePartitionsAssignment] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CreatePartitionsRequest:
    topics: list[CreatePartitionsTopic] = field(default_factory=list)
    timeout_ms: int = 0
    validate_only: bool = False


_CreatePartitionsAssignment_SCHEMA = StructSchema(
    CreatePartitionsAssignment,
    (
        Field('broker_ids', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_CreatePartitionsTopic_SCHEMA = StructSchema(
    CreatePartitionsTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('count', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('assignments', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], _CreatePartitionsAssignment_SCHEMA),
    ),
)
_CreatePartitionsRequest_SCHEMA = StructSchema(
    CreatePartitionsRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _CreatePartitionsTopic_SCHEMA),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('validate_only', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(37, 'request', 'CreatePartitionsRequest', Versions(0, 3), Versions(2, 32767), _CreatePartitionsRequest_SCHEMA)
