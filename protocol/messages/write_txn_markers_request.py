"""WriteTxnMarkersRequest (API key 27), generated from Kafka 3.9's message spec by tools/gen_messages.py.

Do not edit by hand: run the generator again.
"""

# ruff: noqa
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema, Versions

@dataclass(kw_only=True, slots=True)
class WritableTxnMarkerTopic:
    name: str = ''
    partition_indexes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WritableTxnMarker:
    producer_id: int = 0
    producer_epoch: int = 0
    transaction_result: bool = False
    topics: list[WritableTxnMarkerTopic] = field(default_factory=list)
    coordinator_epoch: int = 0


@dataclass(kw_only=True, slots=True)
class WriteTxnMarkersRequest:
    markers: list[WritableTxnMarker] = field(default_factory=list)


_WritableTxnMarkerTopic_SCHEMA = StructSchema(
    WritableTxnMarkerTopic,
    (
        Field('name', 'string', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), '', None),
        Field('partition_indexes', 'int32', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], None),
    ),
)
_WritableTxnMarker_SCHEMA = StructSchema(
    WritableTxnMarker,
    (
        Field('producer_id', 'int64', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('producer_epoch', 'int16', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
        Field('transaction_result', 'bool', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), False, None),
        Field('topics', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WritableTxnMarkerTopic_SCHEMA),
        Field('coordinator_epoch', 'int32', False, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), 0, None),
    ),
)
_WriteTxnMarkersRequest_SCHEMA = StructSchema(
    WriteTxnMarkersRequest,
    (
        Field('markers', 'struct', True, Versions(0, 32767), Versions(1, 0), None, Versions(1, 0), [], _WritableTxnMarker_SCHEMA),
    ),
)

SCHEMA = MessageSchema(27, 'request', 'WriteTxnMarkersRequest', Versions(0, 1), Versions(1, 32767), _WriteTxnMarkersRequest_SCHEMA)
