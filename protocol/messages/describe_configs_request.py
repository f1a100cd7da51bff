"""DescribeConfigsRequest (API key 32), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeConfigsResource:
    resource_type: int = 0
    resource_name: str = ''
    configuration_keys: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DescribeConfigsRequest:
    resources: list[DescribeConfigsResource] = field(default_factory=list)
    include_synonyms: bool = False
    include_documentation: bool = False


_DescribeConfigsResource_SCHEMA = StructSchema(
    DescribeConfigsResource,
    (
        Field('resource_type', 'int8', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('resource_name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('configuration_keys', 'string', True, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), [], None),
    ),
)
_DescribeConfigsRequest_SCHEMA = StructSchema(
    DescribeConfigsRequest,
    (
        Field('resources', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeConfigsResource_SCHEMA),
        Field('include_synonyms', 'bool', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('include_documentation', 'bool', False, Versions(3, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
    ),
)

SCHEMA = MessageSchema(32, 'request', 'DescribeConfigsRequest', Versions(0, 4), Versions(4, 32767), _DescribeConfigsRequest_SCHEMA)
