"""DescribeClusterResponse (API key 60), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class DescribeClusterBroker:
    broker_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None


@dataclass(kw_only=True, slots=True)
class DescribeClusterResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    endpoint_type: int = 1
    cluster_id: str = ''
    controller_id: int = -1
    brokers: list[DescribeClusterBroker] = field(default_factory=list)
    cluster_authorized_operations: int = -2147483648


_DescribeClusterBroker_SCHEMA = StructSchema(
    DescribeClusterBroker,
    (
        Field('broker_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('host', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('port', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('rack', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
    ),
)
_DescribeClusterResponse_SCHEMA = StructSchema(
    DescribeClusterResponse,
    (
        Field('throttle_time_ms', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_code', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('error_message', 'string', False, Versions(0, 32767), Versions(0, 32767), None, Versions(1, 0), None, None),
        Field('endpoint_type', 'int8', False, Versions(1, 32767), Versions(1, 0), None, Versions(1, 0), 1, None),
        Field('cluster_id', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('controller_id', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -1, None),
        Field('brokers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _DescribeClusterBroker_SCHEMA),
        Field('cluster_authorized_operations', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), -2147483648, None),
    ),
)

SCHEMA = MessageSchema(60, 'response', 'DescribeClusterResponse', Versions(0, 1), Versions(0, 32767), _DescribeClusterResponse_SCHEMA)
