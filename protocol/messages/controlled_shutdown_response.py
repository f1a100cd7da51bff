"""ControlledShutdownResponse (API key 7), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class RemainingPartition:
    topic_name: str = ''
    partition_index: int = 0


@dataclass(kw_only=True, slots=True)
class ControlledShutdownResponse:
    error_code: int = 0
    remaining_partitions: list[RemainingPartition] = field(default_factory=list)


_RemainingPartition_SCHEMA = StructSchema(
    RemainingPartition,
    (
        Field('topic_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_ControlledShutdownResponse_SCHEMA = StructSchema(
    ControlledShutdownResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('remaining_partitions', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _RemainingPartition_SCHEMA),
    ),
)

SCHEMA = MessageSchema(7, 'response', 'ControlledShutdownResponse', Versions(0, 3), Versions(3, 32767), _ControlledShutdownResponse_SCHEMA)
