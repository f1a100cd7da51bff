"""ApiVersionsRequest (API key 18), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class ApiVersionsRequest:
    client_software_name: str = ''
    client_software_version: str = ''


_ApiVersionsRequest_SCHEMA = StructSchema(
    ApiVersionsRequest,
    (
        Field('client_software_name', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('client_software_version', 'string', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
    ),
)

SCHEMA = MessageSchema(18, 'request', 'ApiVersionsRequest', Versions(0, 4), Versions(3, 32767), _ApiVersionsRequest_SCHEMA)
