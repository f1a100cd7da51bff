"""AddRaftVoterRequest (API key 80), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class Listener:
    name: str = ''
    host: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class AddRaftVoterRequest:
    cluster_id: str | None = ''
    timeout_ms: int = 0
    voter_id: int = 0
    voter_directory_id: uuid.UUID = ZERO_UUID
    listeners: list[Listener] = field(default_factory=list)


_Listener_SCHEMA = StructSchema(
    Listener,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'uint16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_AddRaftVoterRequest_SCHEMA = StructSchema(
    AddRaftVoterRequest,
    (
        Field('cluster_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('timeout_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('voter_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('voter_directory_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('listeners', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _Listener_SCHEMA),
    ),
)

SCHEMA = MessageSchema(80, 'request', 'AddRaftVoterRequest', Versions(0, 0), Versions(0, 32767), _AddRaftVoterRequest_SCHEMA)
