"""ReadShareGroupStateSummaryRequest (API key 87), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition: int = 0
    leader_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class ReadStateSummaryData:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ReadShareGroupStateSummaryRequest:
    group_id: str = ''
    topics: list[ReadStateSummaryData] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_ReadStateSummaryData_SCHEMA = StructSchema(
    ReadStateSummaryData,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_ReadShareGroupStateSummaryRequest_SCHEMA = StructSchema(
    ReadShareGroupStateSummaryRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReadStateSummaryData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(87, 'request', 'ReadShareGroupStateSummaryRequest', Versions(0, 0), Versions(0, 32767), _ReadShareGroupStateSummaryRequest_SCHEMA)
