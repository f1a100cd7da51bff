"""Compression codecs of record batches, by Kafka's codec id (attributes bits 0-2).

The broker stores batches as the producer sent them, so these functions are only needed where the broker looks
inside a batch (the log cleaner, the offsets topic, offset-for-timestamp) or writes its own batches.
"""

from __future__ import annotations

import gzip
import struct
import zlib

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


class CompressionError(ValueError):
    """The codec id is unknown, or the compressed data is malformed."""


def decompress(codec: int, data: Buffer) -> bytes:
    """The records section of a batch, uncompressed."""
    try:
        if codec == NONE:
            return bytes(data)
        if codec == GZIP:
            # gzip.decompress, unlike zlib with wbits=31, accepts several concatenated gzip members as Java's
            # GZIPInputStream does.
            return gzip.decompress(data)
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (OSError, EOFError, zlib.error, cramjam.DecompressionError, struct.error) as e:
        raise CompressionError(f"cannot decompress {CODEC_NAMES[codec]} data: {e}") from e
    raise CompressionError(f"unknown compression codec {codec}")


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


def _snappy_decompress(data: Buffer) -> bytes:
    view = memoryview(data)
    if bytes(view[: len(_XERIAL_MAGIC)]) != _XERIAL_MAGIC:
        # No xerial header: a single raw snappy block (what some clients, e.g. older librdkafka, send).
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
