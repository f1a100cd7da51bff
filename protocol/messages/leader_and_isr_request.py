"""LeaderAndIsrRequest (API key 4), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class LeaderAndIsrPartitionState:
    topic_name: str = ''
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    partition_epoch: int = 0
    replicas: list[int] = field(default_factory=list)
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)
    is_new: bool = False
    leader_recovery_state: int = 0


@dataclass(kw_only=True, slots=True)
class LeaderAndIsrTopicState:
    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_states: list[LeaderAndIsrPartitionState] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class LeaderAndIsrLiveLeader:
    broker_id: int = 0
    host_name: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class LeaderAndIsrRequest:
    controller_id: int = 0
    is_k_raft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    type: int = 0
    ungrouped_partition_states: list[LeaderAndIsrPartitionState] = field(default_factory=list)
    topic_states: list[LeaderAndIsrTopicState] = field(default_factory=list)
    live_leaders: list[LeaderAndIsrLiveLeader] = field(default_factory=list)


_LeaderAndIsrPartitionState_SCHEMA = StructSchema(
    LeaderAndIsrPartitionState,
    (
        Field('topic_name', 'string', False, Versions(0, 1), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('controller_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('isr', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('partition_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('adding_replicas', 'int32', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('removing_replicas', 'int32', True, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('is_new', 'bool', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('leader_recovery_state', 'int8', False, Versions(6, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_LeaderAndIsrTopicState_SCHEMA = StructSchema(
    LeaderAndIsrTopicState,
    (
        Field('topic_name', 'string', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partition_states', 'struct', True, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrPartitionState_SCHEMA),
    ),
)
_LeaderAndIsrLiveLeader_SCHEMA = StructSchema(
    LeaderAndIsrLiveLeader,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_LeaderAndIsrRequest_SCHEMA = StructSchema(
    LeaderAndIsrRequest,
    (
        Field('controller_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('is_k_raft_controller', 'bool', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('controller_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('type', 'int8', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('ungrouped_partition_states', 'struct', True, Versions(0, 1), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrPartitionState_SCHEMA),
        Field('topic_states', 'struct', True, Versions(2, 32767), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrTopicState_SCHEMA),
        Field('live_leaders', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrLiveLeader_SCHEMA),
    ),
)

SCHEMA = MessageSchema(4, 'request', 'LeaderAndIsrRequest', Versions(0, 7), Versions(4, 32767), _LeaderAndIsrRequest_SCHEMA)
