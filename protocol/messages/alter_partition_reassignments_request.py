"""AlterPartitionReassignmentsRequest (API key 45), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ReassignablePartition:
    partition_index: int = 0
    replicas: list[int] | None = None


@dataclass(kw_only=True, slots=True)
class ReassignableTopic:
    name: str = ''
    partitions: list[ReassignablePartition] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterPartitionReassignmentsRequest:
    timeout_ms: int = 60000
    topics: list[ReassignableTopic] = field(default_factory=list)


_ReassignablePartition_SCHEMA = StructSchema(
    ReassignablePartition,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replicas', 'int32', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_ReassignableTopic_SCHEMA = StructSchema(
    ReassignableTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReassignablePartition_SCHEMA),
    ),
)
_AlterPartitionReassignmentsRequest_SCHEMA = StructSchema(
    AlterPartitionReassignmentsRequest,
    (
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 60000, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReassignableTopic_SCHEMA),
    ),
)

SCHEMA = MessageSchema(45, 'request', 'AlterPartitionReassignmentsRequest', Versions(0, 0), Versions(0, 32767), _AlterPartitionReassignmentsRequest_SCHEMA)
