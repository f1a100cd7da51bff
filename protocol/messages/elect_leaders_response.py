"""ElectLeadersResponse (API key 43), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class PartitionResult:
    partition_id: int = 0
    error_code: int = 0
    error_message: str | None = ''


@dataclass(kw_only=True, slots=True)
class ReplicaElectionResult:
    topic: str = ''
    partition_result: list[PartitionResult] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ElectLeadersResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    replica_election_results: list[ReplicaElectionResult] = field(default_factory=list)


_PartitionResult_SCHEMA = StructSchema(
    PartitionResult,
    (
        Field('partition_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
    ),
)
_ReplicaElectionResult_SCHEMA = StructSchema(
    ReplicaElectionResult,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_result', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _PartitionResult_SCHEMA),
    ),
)
_ElectLeadersResponse_SCHEMA = StructSchema(
    ElectLeadersResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('replica_election_results', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _ReplicaElectionResult_SCHEMA),
    ),
)

SCHEMA = MessageSchema(43, 'response', 'ElectLeadersResponse', Versions(0, 2), Versions(2, 32767), _ElectLeadersResponse_SCHEMA)
