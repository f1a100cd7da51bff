"""MetadataRequest (API key 3), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class MetadataRequestTopic:
    topic_id: uuid.UUID = ZERO_UUID
    name: str | None = ''


@dataclass(kw_only=True, slots=True)
class MetadataRequest:
    topics: list[MetadataRequestTopic] = field(default_factory=list)
    allow_auto_topic_creation: bool = True
    include_cluster_authorized_operations: bool = False
    include_topic_authorized_operations: bool = False


_MetadataRequestTopic_SCHEMA = StructSchema(
    MetadataRequestTopic,
    (
        Field('topic_id', 'uuid', False, Versions(10, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('name', 'string', False, Versions(0, 32767), Versions(10, 32767), None, Versions(1, 0), '', None),
    ),
)
_MetadataRequest_SCHEMA = StructSchema(
    MetadataRequest,
    (
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 32767), None, Versions(1, 0), [], _MetadataRequestTopic_SCHEMA),
        Field('allow_auto_topic_creation', 'bool', False, Versions(4, 32767), Versions(1, 0), None, Versions(1, 0), True, None),
        Field('include_cluster_authorized_operations', 'bool', False, Versions(8, 10), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('include_topic_authorized_operations', 'bool', False, Versions(8, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(3, 'request', 'MetadataRequest', Versions(0, 12), Versions(9, 32767), _MetadataRequest_SCHEMA)
