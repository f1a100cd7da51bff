"""Round trips through our own codec for every request and response message at every valid version.

For each (message, version) hypothesis draws messages from the schema (see test_codec_strategies.py) and checks that

* decode(encode(x)) equals x on every field the version carries (fields outside the version stay at their defaults);
* encoding is canonical: encode(decode(encode(x))) == encode(x);
* decoding is exact: one trailing byte is a ProtocolError unless exact=False, and a memoryview decodes like bytes;
* every truncation of a valid body raises ProtocolError and nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode, encode
from protocol.errors import ProtocolError
from protocol.messages import SCHEMAS
from tests.test_codec_strategies import (
    ALL_MESSAGE_VERSIONS,
    assert_same_message,
    message_id,
    message_strategy,
)

ROUND_TRIP = settings(
    max_examples=6,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _cut_points(n: int) -> list[int]:
    """Proper prefix lengths worth trying: all of them for short bodies, a spread for long ones."""
    if n <= 48:
        return list(range(n))
    return sorted({*range(16), *range(n - 16, n), *range(0, n, max(1, n // 16))})


@pytest.mark.parametrize("cls_version", ALL_MESSAGE_VERSIONS, ids=message_id)
@ROUND_TRIP
@given(data=st.data())
def test_round_trip(cls_version: tuple[type, int], data: st.DataObject) -> None:
    cls, version = cls_version
    schema = SCHEMAS[cls]
    msg: Any = data.draw(message_strategy(cls, version), label="msg")

    body = encode(msg, version)
    assert isinstance(body, bytes)

    back: object = decode(cls, version, body)
    assert type(back) is cls
    assert_same_message(schema, version, msg, back)
    assert encode(back, version) == body

    # zero-copy input decodes the same
    assert encode(decode(cls, version, memoryview(bytearray(body))), version) == body

    # exact=True refuses trailing bytes; exact=False ignores them
    with pytest.raises(ProtocolError):
        decode(cls, version, body + b"\x00")
    assert encode(decode(cls, version, body + b"\x00", exact=False), version) == body

    # a body cut anywhere short is a ProtocolError, never IndexError / struct.error / a silent partial message
    for n in _cut_points(len(body)):
        with pytest.raises(ProtocolError):
            decode(cls, version, body[:n])
        with pytest.raises(ProtocolError):
            decode(cls, version, body[:n], exact=False)


def test_default_messages_round_trip_at_every_version() -> None:
    """The plain default instance of every message encodes and decodes back to itself at every version."""
    for cls, version in ALL_MESSAGE_VERSIONS:
        msg = cls()
        body = encode(msg, version)
        assert decode(cls, version, body) == msg, f"{cls.__name__} v{version}"


def test_versions_outside_the_range_are_refused() -> None:
    for cls, schema in SCHEMAS.items():
        with pytest.raises(ValueError, match="no version"):
            encode(cls(), schema.valid.hi + 1)
        with pytest.raises(ProtocolError):
            decode(cls, schema.valid.hi + 1, b"")
        with pytest.raises(ProtocolError):
            decode(cls, -1, b"")


def test_not_a_message_is_refused() -> None:
    with pytest.raises(TypeError):
        encode(object(), 0)


def test_nullable_struct_marker_follows_kafka() -> None:
    """A nullable struct is preceded by an int8: we write 1 / -1; like Kafka, any negative byte reads as null and any
    other byte (0 included) as present."""
    from protocol.messages.consumer_group_heartbeat_response import Assignment, ConsumerGroupHeartbeatResponse

    body = encode(ConsumerGroupHeartbeatResponse(assignment=Assignment()), 0)
    marker = len(body) - 4  # marker, empty compact array, struct tags, message tags
    assert body[marker:] == b"\x01\x01\x00\x00"
    for byte, present in ((0x00, True), (0x7F, True), (0xFF, False), (0x80, False)):
        if present:
            data = body[:marker] + bytes([byte]) + body[marker + 1 :]
        else:
            data = body[:marker] + bytes([byte]) + body[-1:]
        msg = decode(ConsumerGroupHeartbeatResponse, 0, data)
        assert (msg.assignment is not None) is present
