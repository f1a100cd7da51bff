"""Size-prefixed framing, sans-IO: feed bytes in, take whole frames out.

Modelled on h11's receive_data/next_event: `feed` only appends to a buffer, `next_frame` returns one frame or
`NEED_DATA`. A frame whose declared size is negative or above `max_frame_size` raises `ProtocolError` at once, before
any of it is buffered, so a peer cannot make us allocate what it announces.
"""

from __future__ import annotations

import struct
from typing import Final

from protocol.errors import ProtocolError

_SIZE = struct.Struct(">i")


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()

# Kafka's socket.request.max.bytes default (100 MiB).
DEFAULT_MAX_FRAME_SIZE = 104_857_600


class FrameDecoder:
    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._pos = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self._buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def next_frame(self) -> bytearray | _NeedData:
        """The next whole frame's payload (without its size prefix), or NEED_DATA."""
        buf = self._buf
        pos = self._pos
        if len(buf) - pos < 4:
            self._compact()
            return NEED_DATA
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            raise ProtocolError(f"negative frame size {size}")
        if size > self.max_frame_size:
            raise ProtocolError(f"frame size {size} exceeds the maximum {self.max_frame_size}")
        end = pos + 4 + size
        if len(buf) < end:
            self._compact()
            return NEED_DATA
        frame = buf[pos + 4 : end]
        self._pos = end
        return frame

    def _compact(self) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0


def size_prefix(n: int) -> bytes:
    return _SIZE.pack(n)


def encode_frame(payload: bytes | bytearray) -> bytes:
    return _SIZE.pack(len(payload)) + bytes(payload)
