"""DeleteShareGroupStateRequest (API key 86), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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


@dataclass(kw_only=True, slots=True)
class DeleteStateData:
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeleteShareGroupStateRequest:
    group_id: str = ''
    topics: list[DeleteStateData] = field(default_factory=list)


_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_DeleteStateData_SCHEMA = StructSchema(
    DeleteStateData,
    (
        Field('topic_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_DeleteShareGroupStateRequest_SCHEMA = StructSchema(
    DeleteShareGroupStateRequest,
    (
        Field('group_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DeleteStateData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(86, 'request', 'DeleteShareGroupStateRequest', Versions(0, 0), Versions(0, 32767), _DeleteShareGroupStateRequest_SCHEMA)
