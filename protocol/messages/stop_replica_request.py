"""StopReplicaRequest (API key 5), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class StopReplicaPartitionV0:
    topic_name: str = ''
    partition_index: int = 0


@dataclass(kw_only=True, slots=True)
class StopReplicaTopicV1:
    name: str = ''
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class StopReplicaPartitionState:
    partition_index: int = 0
    leader_epoch: int = -1
    delete_partition: bool = False


@dataclass(kw_only=True, slots=True)
class StopReplicaTopicState:
    topic_name: str = ''
    partition_states: list[StopReplicaPartitionState] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class StopReplicaRequest:
    controller_id: int = 0
    is_k_raft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    delete_partitions: bool = False
    ungrouped_partitions: list[StopReplicaPartitionV0] = field(default_factory=list)
    topics: list[StopReplicaTopicV1] = field(default_factory=list)
    topic_states: list[StopReplicaTopicState] = field(default_factory=list)


_StopReplicaPartitionV0_SCHEMA = StructSchema(
    StopReplicaPartitionV0,
    (
        Field('topic_name', 'string', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_StopReplicaTopicV1_SCHEMA = StructSchema(
    StopReplicaTopicV1,
    (
        Field('name', 'string', False, Versions(1, 2), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(1, 2), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_StopReplicaPartitionState_SCHEMA = StructSchema(
    StopReplicaPartitionState,
    (
        Field('partition_index', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('delete_partition', 'bool', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)
_StopReplicaTopicState_SCHEMA = StructSchema(
    StopReplicaTopicState,
    (
        Field('topic_name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_states', 'struct', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], _StopReplicaPartitionState_SCHEMA),
    ),
)
_StopReplicaRequest_SCHEMA = StructSchema(
    StopReplicaRequest,
    (
        Field('controller_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('is_k_raft_controller', 'bool', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('controller_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('delete_partitions', 'bool', False, Versions(0, 2), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('ungrouped_partitions', 'struct', True, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), [], _StopReplicaPartitionV0_SCHEMA),
        Field('topics', 'struct', True, Versions(1, 2), Versions(1, 0), None, Versions(1, 0), [], _StopReplicaTopicV1_SCHEMA),
        Field('topic_states', 'struct', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], _StopReplicaTopicState_SCHEMA),
    ),
)

SCHEMA = MessageSchema(5, 'request', 'StopReplicaRequest', Versions(0, 4), Versions(2, 32767), _StopReplicaRequest_SCHEMA)
