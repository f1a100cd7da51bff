"""ListPartitionReassignmentsRequest (API key 46), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ListPartitionReassignmentsTopics:
    name: str = ''
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ListPartitionReassignmentsRequest:
    timeout_ms: int = 60000
    topics: list[ListPartitionReassignmentsTopics] | None = None


_ListPartitionReassignmentsTopics_SCHEMA = StructSchema(
    ListPartitionReassignmentsTopics,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_ListPartitionReassignmentsRequest_SCHEMA = StructSchema(
    ListPartitionReassignmentsRequest,
    (
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 60000, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, _ListPartitionReassignmentsTopics_SCHEMA),
    ),
)

SCHEMA = MessageSchema(46, 'request', 'ListPartitionReassignmentsRequest', Versions(0, 0), Versions(0, 32767), _ListPartitionReassignmentsRequest_SCHEMA)
