"""Kafka's primitive wire types: big-endian integers, varints, (compact) strings, bytes, arrays, uuids.

`Reader` walks a read-only buffer without copying; `Writer` appends to one growing bytearray. Both raise
`ProtocolError` (never IndexError/struct.error) on malformed input so callers handle exactly one error type.
"""

from __future__ import annotations

import builtins
import struct
import uuid

from protocol.errors import ProtocolError

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

ZERO_UUID = uuid.UUID(int=0)


class Reader:
    """A cursor over a bytes-like buffer. Slices (`bytes`, `records`) are zero-copy memoryviews."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = memoryview(buf)
        self.pos = pos
        self.end = len(self.buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.end:
            raise ProtocolError(f"truncated: need {n} bytes at offset {start}, have {self.end - start}")
        self.pos = start + n
        return start

    def _unpack(self, st: struct.Struct) -> int:
        start = self.pos
        end = start + st.size
        if end > self.end:
            raise ProtocolError(f"truncated: need {st.size} bytes at offset {start}, have {self.end - start}")
        self.pos = end
        value: int = st.unpack_from(self.buf, start)[0]
        return value

    def int8(self) -> int:
        return self._unpack(_I8)

    def int16(self) -> int:
        return self._unpack(_I16)

    def uint16(self) -> int:
        return self._unpack(_U16)

    def int32(self) -> int:
        return self._unpack(_I32)

    def uint32(self) -> int:
        return self._unpack(_U32)

    def int64(self) -> int:
        return self._unpack(_I64)

    def float64(self) -> float:
        start = self._take(8)
        value: float = _F64.unpack_from(self.buf, start)[0]
        return value

    def boolean(self) -> bool:
        return self._unpack(_I8) != 0

    def uuid(self) -> uuid.UUID:
        start = self._take(16)
        return uuid.UUID(bytes=bytes(self.buf[start : start + 16]))

    def uvarint(self) -> int:
        buf = self.buf
        pos = self.pos
        if pos < self.end and buf[pos] < 0x80:
            # one byte: every compact length and tag count below 128
            self.pos = pos + 1
            return buf[pos]
        result = 0
        shift = 0
        while True:
            if pos >= self.end:
                raise ProtocolError("truncated varint")
            b = buf[pos]
            pos += 1
            if shift == 63 and b > 1:
                # the 10th byte holds bit 63 only: more is a value beyond 64 bits or an 11th byte
                raise ProtocolError("varint too long")
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        self.pos = pos
        return result

    def varint(self) -> int:
        n = self.uvarint()
        return (n >> 1) ^ -(n & 1)

    def raw(self, n: int) -> memoryview:
        start = self._take(n)
        return self.buf[start : start + n]

    def _length(self, compact: bool) -> int:
        """Length of a string/bytes/array; -1 means null."""
        if compact:
            return self.uvarint() - 1
        return self.int32()

    def string(self, compact: bool) -> str:
        n = self.uvarint() - 1 if compact else self.int16()
        if n < 0:
            raise ProtocolError("null value for a non-nullable string")
        try:
            return str(self.raw(n), "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError("string is not valid UTF-8") from exc

    def nullable_string(self, compact: bool) -> str | None:
        n = self.uvarint() - 1 if compact else self.int16()
        if n < 0:
            return None
        try:
            return str(self.raw(n), "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError("string is not valid UTF-8") from exc

    def bytes(self, compact: bool) -> memoryview:
        n = self._length(compact)
        if n < 0:
            raise ProtocolError("null value for non-nullable bytes")
        return self.raw(n)

    def nullable_bytes(self, compact: bool) -> memoryview | None:
        n = self._length(compact)
        if n < 0:
            return None
        return self.raw(n)

    def array_length(self, compact: bool) -> int:
        n = self._length(compact)
        # every element takes at least one byte, so a count beyond the remaining bytes is garbage; checking
        # here stops a 4-byte frame from asking us to allocate a 2**31-element list
        if n > self.end - self.pos:
            raise ProtocolError(f"array length {n} exceeds the {self.end - self.pos} bytes left")
        return n


class Splice:
    """Record bytes the codec does not copy: a records field holding one gets its length written and leaves a gap
    at that point of the output, which the sender fills itself (kbroker sends a fetch's segment file ranges with
    sendfile, so a consumer's records never pass through Python). Subclasses say how long they are and, for senders
    that must have the bytes (TLS), what they are."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def materialize(self) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        """Release what it holds, once sent (or dropped)."""


class Writer:
    """Appends encoded values to a bytearray. Splices (see `Splice`) are not appended: `splices` lists each one
    with the position in `out` where its bytes belong."""

    __slots__ = ("out", "splices")

    def __init__(self) -> None:
        self.out = bytearray()
        self.splices: list[tuple[int, Splice]] = []

    def int8(self, v: int) -> None:
        self.out += _I8.pack(v)

    def int16(self, v: int) -> None:
        self.out += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self.out += _U16.pack(v)

    def int32(self, v: int) -> None:
        self.out += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self.out += _U32.pack(v)

    def int64(self, v: int) -> None:
        self.out += _I64.pack(v)

    def float64(self, v: float) -> None:
        self.out += _F64.pack(v)

    def boolean(self, v: bool) -> None:
        self.out.append(1 if v else 0)

    def uuid(self, v: uuid.UUID) -> None:
        self.out += v.bytes

    def uvarint(self, v: int) -> None:
        if 0 <= v < 0x80:
            self.out.append(v)
            return
        if v < 0:
            raise ValueError("uvarint cannot be negative")
        out = self.out
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)

    def varint(self, v: int) -> None:
        self.uvarint((v << 1) ^ (v >> 63))

    def raw(self, b: bytes | bytearray | memoryview) -> None:
        self.out += b

    def string(self, v: str | None, compact: bool) -> None:
        if v is None:
            if compact:
                self.out.append(0)
            else:
                self.int16(-1)
            return
        data = v.encode("utf-8")
        if compact:
            self.uvarint(len(data) + 1)
        else:
            self.int16(len(data))
        self.out += data

    def bytes(self, v: bytes | bytearray | memoryview | None, compact: bool) -> None:
        if v is None:
            self.array_length(-1, compact)
            return
        self.array_length(len(v), compact)
        self.out += v

    def records(self, v: builtins.bytes | bytearray | memoryview | Splice | None, compact: bool) -> None:
        if isinstance(v, Splice):
            self.array_length(len(v), compact)
            self.splices.append((len(self.out), v))
            return
        self.bytes(v, compact)

    def parts(self) -> list[memoryview | Splice]:
        """The output in order: views of `out` between the splices, and the splices."""
        view = memoryview(self.out)
        parts: list[memoryview | Splice] = []
        start = 0
        for at, splice in self.splices:
            parts.append(view[start:at])
            parts.append(splice)
            start = at
        parts.append(view[start:])
        return parts

    def materialize(self) -> builtins.bytes:
        """The whole output, splices filled in."""
        if not self.splices:
            return bytes(self.out)
        return b"".join(p if isinstance(p, memoryview) else p.materialize() for p in self.parts())

    def array_length(self, n: int, compact: bool) -> None:
        if compact:
            self.uvarint(n + 1)
        else:
            self.int32(n)


def encode_uvarint(v: int) -> bytes:
    w = Writer()
    w.uvarint(v)
    return bytes(w.out)
