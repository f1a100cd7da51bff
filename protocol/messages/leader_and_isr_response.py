"""LeaderAndIsrResponse (API key 4), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class LeaderAndIsrPartitionError:
    topic_name: str = ''
    partition_index: int = 0
    error_code: int = 0


@dataclass(kw_only=True, slots=True)
class LeaderAndIsrTopicError:
    topic_id: uuid.UUID = ZERO_UUID
    partition_errors: list[LeaderAndIsrPartitionError] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class LeaderAndIsrResponse:
    error_code: int = 0
    partition_errors: list[LeaderAndIsrPartitionError] = field(default_factory=list)
    topics: list[LeaderAndIsrTopicError] = field(default_factory=list)


_LeaderAndIsrPartitionError_SCHEMA = StructSchema(
    LeaderAndIsrPartitionError,
    (
        Field('topic_name', 'string', False, Versions(0, 4), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_index', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_LeaderAndIsrTopicError_SCHEMA = StructSchema(
    LeaderAndIsrTopicError,
    (
        Field('topic_id', 'uuid', False, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('partition_errors', 'struct', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrPartitionError_SCHEMA),
    ),
)
_LeaderAndIsrResponse_SCHEMA = StructSchema(
    LeaderAndIsrResponse,
    (
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('partition_errors', 'struct', True, Versions(0, 4), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrPartitionError_SCHEMA),
        Field('topics', 'struct', True, Versions(5, 32767), Versions(1, 0), None, Versions(1, 0), [], _LeaderAndIsrTopicError_SCHEMA),
    ),
)

SCHEMA = MessageSchema(4, 'response', 'LeaderAndIsrResponse', Versions(0, 7), Versions(4, 32767), _LeaderAndIsrResponse_SCHEMA)
