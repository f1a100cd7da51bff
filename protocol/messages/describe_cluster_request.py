"""DescribeClusterRequest (API key 60), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeClusterRequest:
    include_cluster_authorized_operations: bool = False
    endpoint_type: int = 1


_DescribeClusterRequest_SCHEMA = StructSchema(
    DescribeClusterRequest,
    (
        Field('include_cluster_authorized_operations', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('endpoint_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 1, None),
    ),
)

SCHEMA = MessageSchema(60, 'request', 'DescribeClusterRequest', Versions(0, 1), Versions(0, 32767), _DescribeClusterRequest_SCHEMA)
