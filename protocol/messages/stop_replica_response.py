"""StopReplicaResponse (API key 5), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class StopReplicaPartitionError:
    topic_name: str = ''
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class StopReplicaResponse:
    error_code: int = 0
    partition_errors: list[StopReplicaPartitionError] = field(default_factory=list)


_StopReplicaPartitionError_SCHEMA = StructSchema(
    StopReplicaPartitionError,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_StopReplicaResponse_SCHEMA = StructSchema(
    StopReplicaResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_errors', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _StopReplicaPartitionError_SCHEMA),
    ),
)

SCHEMA = MessageSchema(5, 'response', 'StopReplicaResponse', Versions(0, 4), Versions(2, 32767), _StopReplicaResponse_SCHEMA)
