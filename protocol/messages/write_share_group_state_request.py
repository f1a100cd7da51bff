"""WriteShareGroupStateRequest (API key 85), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class StateBatch:
    first_offset: int = 0
    last_offset: int = 0
    delivery_state: int = 0
    delivery_count: int = 0


@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition: int = 0
    state_epoch: int = 0
    leader_epoch: int = 0
    start_offset: int = 0
    state_batches: list[StateBatch] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WriteStateData:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WriteShareGroupStateRequest:
    group_id: str = ''
    topics: list[WriteStateData] = field(default_factory=list)


_StateBatch_SCHEMA = StructSchema(
    StateBatch,
    (
        Field('first_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('last_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('delivery_state', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('delivery_count', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('state_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('start_offset', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('state_batches', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _StateBatch_SCHEMA),
    ),
)
_WriteStateData_SCHEMA = StructSchema(
    WriteStateData,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_WriteShareGroupStateRequest_SCHEMA = StructSchema(
    WriteShareGroupStateRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WriteStateData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(85, 'request', 'WriteShareGroupStateRequest', Versions(0, 0), Versions(0, 32767), _WriteShareGroupStateRequest_SCHEMA)
