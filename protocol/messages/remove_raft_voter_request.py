"""RemoveRaftVoterRequest (API key 81), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class RemoveRaftVoterRequest:
    cluster_id: str | None = ''
    voter_id: int = 0
    voter_directory_id: uuid.UUID = ZERO_UUID


_RemoveRaftVoterRequest_SCHEMA = StructSchema(
    RemoveRaftVoterRequest,
    (
        Field('cluster_id', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), '', None),
        Field('voter_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('voter_directory_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
    ),
)

SCHEMA = MessageSchema(81, 'request', 'RemoveRaftVoterRequest', Versions(0, 0), Versions(0, 32767), _RemoveRaftVoterRequest_SCHEMA)
