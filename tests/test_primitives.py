"""protocol.primitives: wire widths, varint/zigzag edge values, strings/bytes/arrays, and malformed input.

The rule under test everywhere: a Reader given bad or short input raises ProtocolError, never IndexError, struct.error,
UnicodeDecodeError or ValueError, and never allocates what a length prefix merely announces.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import ProtocolError
from protocol.primitives import ZERO_UUID, Reader, Writer, encode_uvarint

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# --- fixed-width integers ---------------------------------------------------------------------------------------------

WIDTHS = [
    ("int8", 1, -(2**7), 2**7 - 1),
    ("int16", 2, -(2**15), 2**15 - 1),
    ("uint16", 2, 0, 2**16 - 1),
    ("int32", 4, INT32_MIN, INT32_MAX),
    ("uint32", 4, 0, 2**32 - 1),
    ("int64", 8, INT64_MIN, INT64_MAX),
]


@pytest.mark.parametrize(("name", "size", "lo", "hi"), WIDTHS, ids=[w[0] for w in WIDTHS])
def test_fixed_width_extremes_big_endian(name: str, size: int, lo: int, hi: int) -> None:
    for value in (lo, hi, 0, 1, lo + 1, hi - 1):
        w = Writer()
        getattr(w, name)(value)
        assert bytes(w.out) == value.to_bytes(size, "big", signed=lo < 0)
        r = Reader(bytes(w.out))
        assert getattr(r, name)() == value
        assert r.remaining() == 0


@pytest.mark.parametrize(("name", "size", "lo", "hi"), WIDTHS, ids=[w[0] for w in WIDTHS])
def test_fixed_width_truncated(name: str, size: int, lo: int, hi: int) -> None:
    for n in range(size):
        r = Reader(b"\x01" * n)
        with pytest.raises(ProtocolError):
            getattr(r, name)()
        assert r.pos == 0  # a failed read consumes nothing


def test_float64_bool_uuid() -> None:
    w = Writer()
    w.float64(-1.5)
    w.boolean(True)
    w.boolean(False)
    u = uuid.UUID("01234567-89ab-cdef-0123-456789abcdef")
    w.uuid(u)
    w.uuid(ZERO_UUID)
    data = bytes(w.out)
    assert data == struct.pack(">d", -1.5) + b"\x01\x00" + u.bytes + bytes(16)
    r = Reader(data)
    assert r.float64() == -1.5
    assert r.boolean() is True
    assert r.boolean() is False
    assert r.uuid() == u
    assert r.uuid() == ZERO_UUID
    # any non-zero byte reads as true, as in Kafka
    assert Reader(b"\x02").boolean() is True
    assert Reader(b"\xff").boolean() is True
    for read in (Reader.float64, Reader.uuid, Reader.boolean):
        with pytest.raises(ProtocolError):
            read(Reader(b"\x00" * 3 if read is not Reader.boolean else b""))


# --- varints ----------------------------------------------------------------------------------------------------------

UVARINTS = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "80 01"),
    (300, "ac 02"),
    (16383, "ff 7f"),
    (16384, "80 80 01"),
    (2**31 - 1, "ff ff ff ff 07"),
    (2**32 - 1, "ff ff ff ff 0f"),
    (2**63, "80 80 80 80 80 80 80 80 80 01"),
    (2**64 - 1, "ff ff ff ff ff ff ff ff ff 01"),
]


@pytest.mark.parametrize(("value", "hex_"), UVARINTS, ids=[str(v) for v, _ in UVARINTS])
def test_uvarint_table(value: int, hex_: str) -> None:
    data = bytes.fromhex(hex_)
    assert encode_uvarint(value) == data
    r = Reader(data)
    assert r.uvarint() == value
    assert r.remaining() == 0


# zigzag: 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3 ...; int32/int64 extremes
VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "80 01"),
    (INT32_MAX, "fe ff ff ff 0f"),
    (INT32_MIN, "ff ff ff ff 0f"),
    (INT64_MAX, "fe ff ff ff ff ff ff ff ff 01"),
    (INT64_MIN, "ff ff ff ff ff ff ff ff ff 01"),
]


@pytest.mark.parametrize(("value", "hex_"), VARINTS, ids=[str(v) for v, _ in VARINTS])
def test_varint_zigzag_table(value: int, hex_: str) -> None:
    data = bytes.fromhex(hex_)
    w = Writer()
    w.varint(value)
    assert bytes(w.out) == data
    r = Reader(data)
    assert r.varint() == value
    assert r.remaining() == 0


@given(st.integers(INT64_MIN, INT64_MAX))
@settings(max_examples=200)
def test_varint_round_trip(value: int) -> None:
    w = Writer()
    w.varint(value)
    assert len(w.out) <= 10
    assert Reader(bytes(w.out)).varint() == value


@given(st.integers(0, 2**64 - 1))
@settings(max_examples=200)
def test_uvarint_round_trip(value: int) -> None:
    data = encode_uvarint(value)
    assert len(data) <= 10
    r = Reader(data + b"\xaa")
    assert r.uvarint() == value
    assert r.remaining() == 1


@pytest.mark.parametrize(
    "hex_",
    [
        # 11 bytes: the continuation bit is still set on the 10th byte
        "ff ff ff ff ff ff ff ff ff ff 01",
        "80 80 80 80 80 80 80 80 80 80 00",
        # 10 bytes whose last byte carries bits beyond 64: 2**64 and up do not fit a (zigzag) int64
        "80 80 80 80 80 80 80 80 80 02",
        "ff ff ff ff ff ff ff ff ff 7f",
    ],
)
def test_overlong_varint_rejected(hex_: str) -> None:
    data = bytes.fromhex(hex_)
    with pytest.raises(ProtocolError):
        Reader(data).uvarint()
    with pytest.raises(ProtocolError):
        Reader(data).varint()


@pytest.mark.parametrize("hex_", ["", "80", "ff ff", "80 80 80 80 80 80 80 80 80"])
def test_truncated_varint(hex_: str) -> None:
    with pytest.raises(ProtocolError):
        Reader(bytes.fromhex(hex_)).uvarint()
    with pytest.raises(ProtocolError):
        Reader(bytes.fromhex(hex_)).varint()


def test_negative_uvarint_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="negative"):
        Writer().uvarint(-1)


# --- strings, bytes, arrays -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "compact", "hex_"),
    [
        ("", False, "0000"),
        ("abc", False, "0003 616263"),
        (None, False, "ffff"),
        ("", True, "01"),
        ("abc", True, "04 616263"),
        (None, True, "00"),
        ("é", True, "03 c3a9"),  # the length counts UTF-8 bytes, not characters
        ("é", False, "0002 c3a9"),
    ],
)
def test_string_table(value: str | None, compact: bool, hex_: str) -> None:
    data = bytes.fromhex(hex_)
    w = Writer()
    w.string(value, compact)
    assert bytes(w.out) == data
    assert Reader(data).nullable_string(compact) == value
    if value is None:
        with pytest.raises(ProtocolError):
            Reader(data).string(compact)
    else:
        assert Reader(data).string(compact) == value


def test_long_compact_string_length_is_a_multibyte_uvarint() -> None:
    w = Writer()
    w.string("x" * 200, compact=True)
    assert bytes(w.out[:2]) == bytes.fromhex("c9 01")  # 201
    assert Reader(bytes(w.out)).string(compact=True) == "x" * 200


@pytest.mark.parametrize("compact", [False, True])
def test_string_errors(compact: bool) -> None:
    prefix = (lambda n: encode_uvarint(n + 1)) if compact else (lambda n: n.to_bytes(2, "big"))
    with pytest.raises(ProtocolError):
        Reader(prefix(5) + b"abc").string(compact)  # truncated
    with pytest.raises(ProtocolError):
        Reader(prefix(2) + b"\xc3\x28").string(compact)  # invalid UTF-8
    with pytest.raises(ProtocolError):
        Reader(prefix(2) + b"\xc3\x28").nullable_string(compact)
    with pytest.raises(ProtocolError):
        Reader(prefix(1)[:-1]).string(compact)  # no length at all


def test_non_compact_string_length_is_signed_int16() -> None:
    # any negative int16 length is null; 0x8000 is not a 32 KiB string
    assert Reader(b"\x80\x00").nullable_string(compact=False) is None
    with pytest.raises(ProtocolError):
        Reader(b"\x80\x00").string(compact=False)


@pytest.mark.parametrize("compact", [False, True])
def test_bytes_are_zero_copy_views(compact: bool) -> None:
    w = Writer()
    w.bytes(b"\x00\x01\x02", compact)
    w.bytes(None, compact)
    w.bytes(b"", compact)
    buf = bytearray(w.out)
    r = Reader(buf)
    view = r.bytes(compact)
    assert isinstance(view, memoryview)
    assert view.obj is buf
    assert bytes(view) == b"\x00\x01\x02"
    assert r.nullable_bytes(compact) is None
    assert bytes(r.bytes(compact)) == b""
    assert r.remaining() == 0
    with pytest.raises(ProtocolError):
        Reader(bytes(w.out)[:3]).bytes(compact)  # truncated content
    null = b"\x00" if compact else b"\xff\xff\xff\xff"
    with pytest.raises(ProtocolError):
        Reader(null).bytes(compact)


@pytest.mark.parametrize("compact", [False, True])
def test_array_length(compact: bool) -> None:
    for n in (0, 1, 5):
        w = Writer()
        w.array_length(n, compact)
        r = Reader(bytes(w.out) + bytes(n))
        assert r.array_length(compact) == n
    w = Writer()
    w.array_length(-1, compact)
    assert bytes(w.out) == (b"\x00" if compact else b"\xff\xff\xff\xff")
    assert Reader(bytes(w.out)).array_length(compact) == -1


@pytest.mark.parametrize(
    ("compact", "prefix"),
    [
        (False, b"\x7f\xff\xff\xff"),
        (False, b"\x00\x00\x00\x05"),
        (True, encode_uvarint(2**31)),
        (True, encode_uvarint(2**64 - 1)),
        (True, encode_uvarint(6)),
    ],
)
def test_array_length_beyond_remaining_bytes_rejected(compact: bool, prefix: bytes) -> None:
    # each element takes at least one byte, so a count above what is left is refused before any list exists
    with pytest.raises(ProtocolError, match="exceeds"):
        Reader(prefix + b"\x00\x00\x00\x00").array_length(compact)


def test_reader_window() -> None:
    r = Reader(b"\x00\x01\x00\x02\x00\x03", pos=2, end=4)
    assert r.remaining() == 2
    assert r.int16() == 2
    with pytest.raises(ProtocolError):
        r.int16()  # the bytes after `end` are not ours


def test_raw() -> None:
    r = Reader(b"abcdef")
    assert bytes(r.raw(2)) == b"ab"
    assert bytes(r.raw(0)) == b""
    with pytest.raises(ProtocolError):
        r.raw(5)
    with pytest.raises(ProtocolError):
        r.raw(-1)
    assert bytes(r.raw(4)) == b"cdef"


# --- random input -----------------------------------------------------------------------------------------------------

READS: list[tuple[str, Callable[[Reader], Any]]] = [
    ("int8", Reader.int8),
    ("int16", Reader.int16),
    ("uint16", Reader.uint16),
    ("int32", Reader.int32),
    ("uint32", Reader.uint32),
    ("int64", Reader.int64),
    ("float64", Reader.float64),
    ("boolean", Reader.boolean),
    ("uuid", Reader.uuid),
    ("uvarint", Reader.uvarint),
    ("varint", Reader.varint),
    ("string", lambda r: r.string(False)),
    ("compact string", lambda r: r.string(True)),
    ("nullable string", lambda r: r.nullable_string(False)),
    ("compact nullable string", lambda r: r.nullable_string(True)),
    ("bytes", lambda r: r.bytes(False)),
    ("compact bytes", lambda r: r.bytes(True)),
    ("nullable bytes", lambda r: r.nullable_bytes(False)),
    ("compact nullable bytes", lambda r: r.nullable_bytes(True)),
    ("array length", lambda r: r.array_length(False)),
    ("compact array length", lambda r: r.array_length(True)),
]


@given(data=st.binary(max_size=24), reads=st.lists(st.sampled_from(READS), min_size=1, max_size=6))
@settings(max_examples=300)
def test_random_bytes_only_ever_raise_protocol_error(data: bytes, reads: list[tuple[str, Any]]) -> None:
    r = Reader(data)
    for _name, read in reads:
        before = r.pos
        try:
            read(r)
        except ProtocolError:
            return
        assert before <= r.pos <= len(data)


@given(st.integers(INT64_MIN, INT64_MAX))
@settings(max_examples=50)
def test_varint_truncations(value: int) -> None:
    w = Writer()
    w.varint(value)
    data = bytes(w.out)
    for n in range(len(data)):
        with pytest.raises(ProtocolError):
            Reader(data[:n]).varint()
