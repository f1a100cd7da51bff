"""AlterReplicaLogDirsRequest (API key 34), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDirTopic:
    name: str = ''
    partitions: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDir:
    path: str = ''
    topics: list[AlterReplicaLogDirTopic] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AlterReplicaLogDirsRequest:
    dirs: list[AlterReplicaLogDir] = field(default_factory=list)


_AlterReplicaLogDirTopic_SCHEMA = StructSchema(
    AlterReplicaLogDirTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partitions', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_AlterReplicaLogDir_SCHEMA = StructSchema(
    AlterReplicaLogDir,
    (
        Field('path', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterReplicaLogDirTopic_SCHEMA),
    ),
)
_AlterReplicaLogDirsRequest_SCHEMA = StructSchema(
    AlterReplicaLogDirsRequest,
    (
        Field('dirs', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _AlterReplicaLogDir_SCHEMA),
    ),
)

SCHEMA = MessageSchema(34, 'request', 'AlterReplicaLogDirsRequest', Versions(0, 2), Versions(2, 32767), _AlterReplicaLogDirsRequest_SCHEMA)
