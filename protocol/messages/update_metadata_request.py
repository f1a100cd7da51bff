"""UpdateMetadataRequest (API key 6), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class UpdateMetadataPartitionState:
    topic_name: str = ''
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    zk_version: int = 0
    replicas: list[int] = field(default_factory=list)
    offline_replicas: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class UpdateMetadataTopicState:
    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_states: list[UpdateMetadataPartitionState] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class UpdateMetadataEndpoint:
    port: int = 0
    host: str = ''
    listener: str = ''
    security_protocol: int = 0


@dataclass(kw_only=True, slots=True)
class UpdateMetadataBroker:
    id: int = 0
    v0_host: str = ''
    v0_port: int = 0
    endpoints: list[UpdateMetadataEndpoint] = field(default_factory=list)
    rack: str | None = ''


@dataclass(kw_only=True, slots=True)
class UpdateMetadataRequest:
    controller_id: int = 0
    is_k_raft_controller: bool = False
    type: int = 0
    controller_epoch: int = 0
    broker_epoch: int = -1
    ungrouped_partition_states: list[UpdateMetadataPartitionState] = field(default_factory=list)
    topic_states: list[UpdateMetadataTopicState] = field(default_factory=list)
    live_brokers: list[UpdateMetadataBroker] = field(default_factory=list)


_UpdateMetadataPartitionState_SCHEMA = StructSchema(
    UpdateMetadataPartitionState,
    (
        Field('topic_name', 'string', False, Versions(0, 4), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('controller_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('isr', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('zk_version', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replicas', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
        Field('offline_replicas', 'int32', True, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_UpdateMetadataTopicState_SCHEMA = StructSchema(
    UpdateMetadataTopicState,
    (
        Field('topic_name', 'string', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topic_id', 'uuid', False, Versions(7, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partition_states', 'struct', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], _UpdateMetadataPartitionState_SCHEMA),
    ),
)
_UpdateMetadataEndpoint_SCHEMA = StructSchema(
    UpdateMetadataEndpoint,
    (
        Field('port', 'int32', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('listener', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('security_protocol', 'int16', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_UpdateMetadataBroker_SCHEMA = StructSchema(
    UpdateMetadataBroker,
    (
        Field('id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('v0_host', 'string', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('v0_port', 'int32', False, Versions(0, 0), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('endpoints', 'struct', True, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), [], _UpdateMetadataEndpoint_SCHEMA),
        Field('rack', 'string', False, Versions(2, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_UpdateMetadataRequest_SCHEMA = StructSchema(
    UpdateMetadataRequest,
    (
        Field('controller_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('is_k_raft_controller', 'bool', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('type', 'int8', False, Versions(8, 32767), Versions(1, 0), 0, Versions(8, 32767), 0, None),
        Field('controller_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('broker_epoch', 'int64', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('ungrouped_partition_states', 'struct', True, Versions(0, 4), Versions(1, 0), None, Versions(1, 0), [], _UpdateMetadataPartitionState_SCHEMA),
        Field('topic_states', 'struct', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], _UpdateMetadataTopicState_SCHEMA),
        Field('live_brokers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _UpdateMetadataBroker_SCHEMA),
    ),
)

SCHEMA = MessageSchema(6, 'request', 'UpdateMetadataRequest', Versions(0, 8), Versions(6, 32767), _UpdateMetadataRequest_SCHEMA)
