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
    """Two ways in: `feed(data)` (bytes already received, e.g. from a TLS stream), or `receive_buffer()` then
    `received(n)`: receive straight into the buffer it gives (`socket.recv_into`). A frame larger than
    `LARGE_FRAME` is given its own buffer of exactly its size as soon as its size prefix is known, and the rest of
    it is received (or fed) into that buffer in place: the payload `next_frame` returns is that buffer, never copied
    in user space. Smaller frames are cut out of a shared staging buffer (one copy of a few KiB).
    """

    LARGE_FRAME = 16 * 1024
    RECEIVE_CHUNK = 64 * 1024

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._pos = 0
        self._scratch: bytearray | None = None
        # A large frame being filled in place, and how much of it is filled.
        self._frame: bytearray | None = None
        self._filled = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        frame = self._frame
        if frame is not None:
            n = min(len(data), len(frame) - self._filled)
            frame[self._filled : self._filled + n] = memoryview(data)[:n]
            self._filled += n
            if n == len(data):
                return
            data = memoryview(data)[n:]
        self._buf += data

    def receive_buffer(self) -> memoryview:
        """Where the next bytes from the peer should go (then call `received`): the unfilled rest of a large
        frame, or a staging chunk."""
        frame = self._frame
        if frame is not None and self._filled < len(frame):
            return memoryview(frame)[self._filled :]
        if self._scratch is None:
            self._scratch = bytearray(self.RECEIVE_CHUNK)
        return memoryview(self._scratch)

    def received(self, n: int) -> None:
        """`n` bytes were written at the start of the last `receive_buffer()`."""
        frame = self._frame
        if frame is not None and self._filled < len(frame):
            self._filled += n
            return
        assert self._scratch is not None
        self._buf += memoryview(self._scratch)[:n]

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos + (self._filled if self._frame is not None else 0)

    def next_frame(self) -> bytearray | _NeedData:
        """The next whole frame's payload (without its size prefix), or NEED_DATA."""
        frame = self._frame
        if frame is not None:
            if self._filled < len(frame):
                return NEED_DATA
            self._frame = None
            self._filled = 0
            return frame
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
            if size >= self.LARGE_FRAME:
                # Its own buffer from now on: what is here already is copied once, the rest lands in place.
                frame = bytearray(size)
                have = len(buf) - pos - 4
                frame[:have] = memoryview(buf)[pos + 4 :]
                self._frame, self._filled = frame, have
                del buf[:]
                self._pos = 0
                return NEED_DATA
            self._compact()
            return NEED_DATA
        frame = buf[pos + 4 : end]
        self._pos = end
        if end == len(buf):
            del buf[:]
            self._pos = 0
        return frame

    def _compact(self) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0


def size_prefix(n: int) -> bytes:
    return _SIZE.pack(n)


def encode_frame(payload: bytes | bytearray) -> bytes:
    return _SIZE.pack(len(payload)) + bytes(payload)
