"""ListPartitionReassignmentsResponse (API key 46), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class OngoingPartitionReassignment:
    partition_index: int = 0
    replicas: list[int] = field(default_factory=list)
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OngoingTopicReassignment:
    name: str = ''
    partitions: list[OngoingPartitionReassignment] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ListPartitionReassignmentsResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    topics: list[OngoingTopicReassignment] = field(default_factory=list)


_OngoingPartitionReassignment_SCHEMA = StructSchema(
    OngoingPartitionReassignment,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('adding_replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('removing_replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_OngoingTopicReassignment_SCHEMA = StructSchema(
    OngoingTopicReassignment,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OngoingPartitionReassignment_SCHEMA),
    ),
)
_ListPartitionReassignmentsResponse_SCHEMA = StructSchema(
    ListPartitionReassignmentsResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _OngoingTopicReassignment_SCHEMA),
    ),
)

SCHEMA = MessageSchema(46, 'response', 'ListPartitionReassignmentsResponse', Versions(0, 0), Versions(0, 32767), _ListPartitionReassignmentsResponse_SCHEMA)
