"""ControllerRegistrationRequest (API key 70), generated from Kafka 3.9's message spec by tools/gen_messages.py.

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
    security_protocol: int = 0


@dataclass(kw_only=True, slots=True)
class Feature:
    name: str = ''
    min_supported_version: int = 0
    max_supported_version: int = 0


@dataclass(kw_only=True, slots=True)
class ControllerRegistrationRequest:
    controller_id: int = 0
    incarnation_id: uuid.UUID = ZERO_UUID
    zk_migration_ready: bool = False
    listeners: list[Listener] = field(default_factory=list)
    features: list[Feature] = field(default_factory=list)


_Listener_SCHEMA = StructSchema(
    Listener,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'uint16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('security_protocol', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_Feature_SCHEMA = StructSchema(
    Feature,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('min_supported_version', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('max_supported_version', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_ControllerRegistrationRequest_SCHEMA = StructSchema(
    ControllerRegistrationRequest,
    (
        Field('controller_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('incarnation_id', 'uuid', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), ZERO_UUID, None),
        Field('zk_migration_ready', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('listeners', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _Listener_SCHEMA),
        Field('features', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _Feature_SCHEMA),
    ),
)

SCHEMA = MessageSchema(70, 'request', 'ControllerRegistrationRequest', Versions(0, 0), Versions(0, 32767), _ControllerRegistrationRequest_SCHEMA)
