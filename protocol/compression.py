"""Compression codecs of record batches, by Kafka's codec id (attributes bits 0-2).

The broker stores batches as the producer sent them, so these functions are only needed where the broker looks
inside a batch (the log cleaner, the offsets topic, offset-for-timestamp) or writes its own batches.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable

import cramjam

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

# The Java client (xerial snappy-java's SnappyOutputStream) and librdkafka frame snappy data as: this 8-byte magic,
# two int32 (version, minimum compatible version), then blocks of big-endian int32 length + raw snappy block.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")
_XERIAL_BLOCK_LENGTH = struct.Struct(">i")
# snappy-java's default block size; the Java reader copes with any size, this just matches what it writes.
_XERIAL_BLOCK_SIZE = 32 * 1024

Buffer = bytes | bytearray | memoryview

MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024
"""The most a batch's records section may decompress to. zstd turns 327 bytes into 10 MB of zeros (and a 1 MB batch
into tens of GB): without a cap one small produce request to a compacted topic could exhaust the broker's memory.
Kafka decompresses record by record as it reads; we decompress a batch at once, so we bound it instead."""
# The first output buffer holds this many times the compressed size (at least _FIRST_OUTPUT), then grows 8x.
_FIRST_RATIO = 16
_FIRST_OUTPUT = 64 * 1024


class CompressionError(ValueError):
    """The codec id is unknown, or the compressed data is malformed."""


def decompress(codec: int, data: Buffer, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """The records section of a batch, uncompressed; CompressionError if it is malformed or would exceed `limit`
    bytes (a decompression bomb)."""
    try:
        if codec == NONE:
            return bytes(data)
        if codec == GZIP:
            return _gunzip(data, limit)
        if codec == SNAPPY:
            return _snappy_decompress(data, limit)
        if codec == LZ4:
            return _bounded(cramjam.lz4.decompress_into, data, limit)
        if codec == ZSTD:
            return _bounded(cramjam.zstd.decompress_into, data, limit)
    except (OSError, EOFError, zlib.error, cramjam.DecompressionError, struct.error) as e:
        raise CompressionError(f"cannot decompress {CODEC_NAMES[codec]} data: {e}") from e
    raise CompressionError(f"unknown compression codec {codec}")


def _too_big(limit: int) -> CompressionError:
    return CompressionError(f"the records decompress to more than {limit} bytes")


def _gunzip(data: Buffer, limit: int) -> bytes:
    """Every concatenated gzip member (Java's GZIPInputStream reads them all), at most `limit` bytes in all."""
    out = bytearray()
    rest = bytes(data)
    while True:
        inflater = zlib.decompressobj(wbits=31)
        out += inflater.decompress(rest, limit + 1 - len(out))
        if len(out) > limit or inflater.unconsumed_tail:
            raise _too_big(limit)
        if not inflater.eof:
            raise CompressionError("cannot decompress gzip data: truncated")
        rest = inflater.unused_data
        if not rest:
            return bytes(out)


def _bounded(decompress_into: Callable[[Buffer, bytearray], int], data: Buffer, limit: int) -> bytes:
    """cramjam's lz4 / zstd into a buffer that grows up to `limit` (they fail rather than write past its end)."""
    size = min(limit, max(_FIRST_OUTPUT, _FIRST_RATIO * len(data)))
    while True:
        out = bytearray(size)
        try:
            written = decompress_into(data, out)
        except cramjam.DecompressionError as e:
            if "whole buffer" not in str(e):
                raise
            if size >= limit:
                raise _too_big(limit) from None
            size = min(limit, size * 8)
            continue
        del out[written:]
        return bytes(out)


def compress(codec: int, data: Buffer) -> bytes:
    """Compressed records section, in the framing every stock client can read."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        # mtime=0 makes the output deterministic; level 6 is Java's Deflater default, which Kafka uses.
        return gzip.compress(data, compresslevel=6, mtime=0)
    if codec == SNAPPY:
        return _snappy_compress_xerial(data)
    if codec == LZ4:
        # Independent blocks and no content checksum: the frame options Kafka's own LZ4 writer uses, which every
        # reader (including old Java clients) accepts.
        compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        compressor.compress(data if isinstance(data, bytes) else bytes(data))
        return bytes(compressor.finish())
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise CompressionError(f"unknown compression codec {codec}")


def _snappy_decompress(data: Buffer, limit: int) -> bytes:
    view = memoryview(data)
    if bytes(view[: len(_XERIAL_MAGIC)]) != _XERIAL_MAGIC:
        # No xerial header: a single raw snappy block (what some clients, e.g. older librdkafka, send). Its header
        # states its length, which cramjam checks against the data before allocating.
        if cramjam.snappy.decompress_raw_len(view) > limit:
            raise _too_big(limit)
        return bytes(cramjam.snappy.decompress_raw(view))
    if len(view) < _XERIAL_HEADER.size:
        raise CompressionError("truncated xerial snappy header")
    out = bytearray()
    pos = _XERIAL_HEADER.size
    while pos < len(view):
        if pos + 4 > len(view):
            raise CompressionError("truncated xerial snappy block length")
        (block_length,) = _XERIAL_BLOCK_LENGTH.unpack_from(view, pos)
        pos += 4
        if block_length < 0 or pos + block_length > len(view):
            raise CompressionError("truncated xerial snappy block")
        out += cramjam.snappy.decompress_raw(view[pos : pos + block_length])
        if len(out) > limit:
            raise _too_big(limit)
        pos += block_length
    return bytes(out)


def _snappy_compress_xerial(data: Buffer) -> bytes:
    view = memoryview(data)
    # version 1, minimum compatible version 1: what snappy-java writes.
    out = bytearray(_XERIAL_HEADER.pack(_XERIAL_MAGIC, 1, 1))
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE])
        out += _XERIAL_BLOCK_LENGTH.pack(len(block))
        out += block
    return bytes(out)
