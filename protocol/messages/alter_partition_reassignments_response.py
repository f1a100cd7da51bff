"""AlterPartitionReassignmentsResponse (API key 45), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ReassignablePartitionResponse:
    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class ReassignableTopicResponse:
    name: str = ''
    partitions: list[ReassignablePartitionResponse] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterPartitionReassignmentsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    responses: list[ReassignableTopicResponse] = field(default_factory=list)


_ReassignablePartitionResponse_SCHEMA = StructSchema(
    ReassignablePartitionResponse,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_ReassignableTopicResponse_SCHEMA = StructSchema(
    ReassignableTopicResponse,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReassignablePartitionResponse_SCHEMA),
    ),
)
_AlterPartitionReassignmentsResponse_SCHEMA = StructSchema(
    AlterPartitionReassignmentsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('responses', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReassignableTopicResponse_SCHEMA),
    ),
)

SCHEMA = MessageSchema(45, 'response', 'AlterPartitionReassignmentsResponse', Versions(0, 0), Versions(0, 32767), _AlterPartitionReassignmentsResponse_SCHEMA)
