"""ElectLeadersRequest (API key 43), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class TopicPartitions:
    topic: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ElectLeadersRequest:
    election_type: int = 0
    topic_partitions: list[TopicPartitions] = field(default_factory=list)
    timeout_ms: int = 60000


_TopicPartitions_SCHEMA = StructSchema(
    TopicPartitions,
    (
        Field('topic', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_ElectLeadersRequest_SCHEMA = StructSchema(
    ElectLeadersRequest,
    (
        Field('election_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('topic_partitions', 'struct', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], _TopicPartitions_SCHEMA),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 60000, None),
    ),
)

SCHEMA = MessageSchema(43, 'request', 'ElectLeadersRequest', Versions(0, 2), Versions(2, 32767), _ElectLeadersRequest_SCHEMA)
