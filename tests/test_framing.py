"""protocol.framing.FrameDecoder: size-prefixed frames in, payloads out, however the bytes are chunked."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import ProtocolError
from protocol.framing import DEFAULT_MAX_FRAME_SIZE, NEED_DATA, FrameDecoder, encode_frame, size_prefix


def drain(dec: FrameDecoder) -> list[bytes]:
    frames: list[bytes] = []
    while True:
        frame = dec.next_frame()
        if frame is NEED_DATA:
            return frames
        assert isinstance(frame, bytearray)
        frames.append(bytes(frame))


def next_payload(dec: FrameDecoder) -> bytearray:
    """The next frame, which the test expects to be whole already."""
    frame = dec.next_frame()
    assert isinstance(frame, bytearray), frame
    return frame


def test_encode_frame_and_size_prefix() -> None:
    assert size_prefix(0) == b"\x00\x00\x00\x00"
    assert size_prefix(258) == b"\x00\x00\x01\x02"
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert encode_frame(bytearray()) == b"\x00\x00\x00\x00"


def test_empty_decoder_needs_data() -> None:
    dec = FrameDecoder()
    assert dec.next_frame() is NEED_DATA
    assert dec.buffered == 0
    assert repr(NEED_DATA) == "NEED_DATA"


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_partial_size_prefix(cut: int) -> None:
    wire = encode_frame(b"hello")
    dec = FrameDecoder()
    dec.feed(wire[:cut])
    assert dec.next_frame() is NEED_DATA
    assert dec.next_frame() is NEED_DATA  # asking again changes nothing
    dec.feed(wire[cut:])
    assert drain(dec) == [b"hello"]
    assert dec.buffered == 0


def test_frame_split_byte_by_byte() -> None:
    payloads = [b"first", b"", b"x" * 300, b"last"]
    wire = b"".join(encode_frame(p) for p in payloads)
    dec = FrameDecoder()
    got = []
    for i in range(len(wire)):
        dec.feed(wire[i : i + 1])
        got += drain(dec)
    assert got == payloads
    assert dec.buffered == 0


def test_several_frames_in_one_feed() -> None:
    payloads = [b"a", b"bb", b"ccc"]
    dec = FrameDecoder()
    dec.feed(b"".join(encode_frame(p) for p in payloads) + b"\x00\x00")
    assert next_payload(dec) == b"a"
    assert next_payload(dec) == b"bb"
    assert next_payload(dec) == b"ccc"
    assert dec.next_frame() is NEED_DATA
    assert dec.buffered == 2  # the start of a fourth size prefix waits
    dec.feed(b"\x00\x01z")
    assert drain(dec) == [b"z"]


def test_zero_length_frame() -> None:
    dec = FrameDecoder()
    dec.feed(b"\x00\x00\x00\x00")
    frame = dec.next_frame()
    assert frame is not NEED_DATA
    assert isinstance(frame, bytearray)
    assert frame == b""
    assert dec.next_frame() is NEED_DATA


@pytest.mark.parametrize("size", [-1, -(2**31), -1000])
def test_negative_size(size: int) -> None:
    dec = FrameDecoder()
    dec.feed(size.to_bytes(4, "big", signed=True))
    with pytest.raises(ProtocolError, match="negative"):
        dec.next_frame()


def test_size_above_max_raises_before_the_body_arrives() -> None:
    dec = FrameDecoder(max_frame_size=1000)
    dec.feed(size_prefix(1001))  # only the prefix: the decoder must not wait to buffer 1001 bytes
    with pytest.raises(ProtocolError, match="exceeds"):
        dec.next_frame()


def test_default_max_is_kafkas_socket_request_max_bytes() -> None:
    assert DEFAULT_MAX_FRAME_SIZE == 100 * 1024 * 1024
    dec = FrameDecoder()
    dec.feed(size_prefix(DEFAULT_MAX_FRAME_SIZE))
    assert dec.next_frame() is NEED_DATA  # at the limit: allowed, waits for the body
    dec = FrameDecoder()
    dec.feed(size_prefix(2**31 - 1))
    with pytest.raises(ProtocolError):
        dec.next_frame()


def test_size_exactly_max_is_accepted() -> None:
    dec = FrameDecoder(max_frame_size=4)
    dec.feed(encode_frame(b"abcd"))
    assert next_payload(dec) == b"abcd"


def test_oversized_frame_after_good_ones() -> None:
    dec = FrameDecoder(max_frame_size=8)
    dec.feed(encode_frame(b"ok") + size_prefix(9))
    assert next_payload(dec) == b"ok"
    with pytest.raises(ProtocolError):
        dec.next_frame()


def test_frames_are_independent_copies() -> None:
    dec = FrameDecoder()
    dec.feed(encode_frame(b"one") + encode_frame(b"two"))
    first = next_payload(dec)
    second = next_payload(dec)
    assert dec.next_frame() is NEED_DATA  # compacts the internal buffer
    dec.feed(encode_frame(b"three"))
    assert first == b"one"
    assert second == b"two"
    assert drain(dec) == [b"three"]


@given(
    payloads=st.lists(st.binary(max_size=40), max_size=8),
    cuts=st.lists(st.integers(0, 400), max_size=12),
)
@settings(max_examples=200)
def test_any_chunking_gives_the_same_frames(payloads: list[bytes], cuts: list[int]) -> None:
    wire = b"".join(encode_frame(p) for p in payloads)
    points = sorted({0, len(wire), *(c for c in cuts if c < len(wire))})
    dec = FrameDecoder(max_frame_size=40)
    got = []
    for a, b in itertools.pairwise(points):
        dec.feed(memoryview(wire)[a:b])
        got += drain(dec)
    assert got == payloads
    assert dec.buffered == 0


@given(
    payloads=st.lists(st.one_of(st.binary(max_size=40), st.integers(70, 300).map(bytes)), max_size=8),
    cuts=st.lists(st.integers(1, 200), max_size=12),
    fed=st.lists(st.booleans(), max_size=12),
)
@settings(max_examples=200)
def test_receiving_in_place_gives_the_same_frames(
    payloads: list[bytes], cuts: list[int], fed: list[bool]
) -> None:
    """recv_into's path (receive_buffer / received), mixed with feed, whatever the sizes the peer's bytes come in:
    large frames are filled in their own buffer, which is the payload returned."""

    class SmallDecoder(FrameDecoder):
        LARGE_FRAME = 64
        RECEIVE_CHUNK = 100

    wire = memoryview(b"".join(encode_frame(p) for p in payloads))
    dec = SmallDecoder(max_frame_size=300)
    got: list[bytes] = []
    steps = itertools.cycle(zip(cuts or [7], fed or [False], strict=False))
    pos = 0
    while pos < len(wire):
        want, by_feed = next(steps)
        if by_feed:
            chunk = wire[pos : pos + want]
            dec.feed(chunk)
        else:
            into = dec.receive_buffer()
            chunk = wire[pos : pos + min(want, len(into))]
            into[: len(chunk)] = chunk
            dec.received(len(chunk))
        pos += len(chunk)
        got += drain(dec)
    assert got == payloads
    assert dec.buffered == 0


def test_a_large_frame_is_received_into_its_own_buffer() -> None:
    payload = bytes(range(256)) * 400
    wire = encode_frame(payload)
    dec = FrameDecoder()
    into = dec.receive_buffer()
    into[:1000] = wire[:1000]
    dec.received(1000)
    assert dec.next_frame() is NEED_DATA
    into = dec.receive_buffer()
    assert len(into) == len(payload) - 996  # the rest of this frame exactly, in place
    into[:] = wire[1000:]
    dec.received(len(into))
    frame = next_payload(dec)
    assert frame == payload
