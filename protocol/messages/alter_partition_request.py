"""AlterPartitionRequest (API key 56), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class BrokerState:
    broker_id: int = 0
    broker_epoch: int = -1


@dataclass(kw_only=True, slots=True)
class PartitionData:
    partition_index: int = 0
    leader_epoch: int = 0
    new_isr: list[int] = field(default_factory=list)
    new_isr_with_epochs: list[BrokerState] = field(default_factory=list)
    leader_recovery_state: int = 0
    partition_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class TopicData:
    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterPartitionRequest:
    broker_id: int = 0
    broker_epoch: int = -1
    topics: list[TopicData] = field(default_factory=list)


_BrokerState_SCHEMA = StructSchema(
    BrokerState,
    (
        Field('broker_id', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
    ),
)
_PartitionData_SCHEMA = StructSchema(
    PartitionData,
    (
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('new_isr', 'int32', True, Versions(0, 2), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('new_isr_with_epochs', 'struct', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], _BrokerState_SCHEMA),
        Field('leader_recovery_state', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_TopicData_SCHEMA = StructSchema(
    TopicData,
    (
        Field('topic_name', 'string', False, Versions(0, 1), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionData_SCHEMA),
    ),
)
_AlterPartitionRequest_SCHEMA = StructSchema(
    AlterPartitionRequest,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _TopicData_SCHEMA),
    ),
)

SCHEMA = MessageSchema(56, 'request', 'AlterPartitionRequest', Versions(0, 3), Versions(0, 32767), _AlterPartitionRequest_SCHEMA)
