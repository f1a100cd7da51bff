"""UpdateRaftVoterResponse (API key 82), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class CurrentLeader:
    leader_id: int = -1
    leader_epoch: int = -1
    host: str = ''
    port: int = 0


@dataclass(kw_only=True, slots=True)
class UpdateRaftVoterResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    current_leader: CurrentLeader = field(default_factory=CurrentLeader)


_CurrentLeader_SCHEMA = StructSchema(
    CurrentLeader,
    (
        Field('leader_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('leader_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_UpdateRaftVoterResponse_SCHEMA = StructSchema(
    UpdateRaftVoterResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('current_leader', 'struct', False, Versions(0, 32767), Versions(1, 0), 0, Versions(0, 32767), None, _CurrentLeader_SCHEMA),
    ),
)

SCHEMA = MessageSchema(82, 'response', 'UpdateRaftVoterResponse', Versions(0, 0), Versions(0, 32767), _UpdateRaftVoterResponse_SCHEMA)
