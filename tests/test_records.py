"""Record batch v2 view, validation, record codec and compression, checked against kafka-python's own record
builder and parser as an independent implementation.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import codec as kafka_codec
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from protocol import compression
from protocol.errors import ErrorCode
from protocol.records import (
    INT32_MAX,
    LOG_APPEND_TIME,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    CorruptRecordError,
    Record,
    RecordBatch,
    build_batch,
    decode_records,
    increment_sequence,
    iter_batches,
    read_attributes,
    validate_batch,
)

pytestmark = pytest.mark.timeout(120)

CODECS = [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD]

int8 = st.integers(-(2**7), 2**7 - 1)
int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
optional_bytes = st.one_of(st.none(), st.binary(max_size=64))
headers = st.lists(st.tuples(st.text(max_size=10), optional_bytes), max_size=3).map(tuple)


@st.composite
def record_lists(draw: st.DrawFn) -> list[Record]:
    count = draw(st.integers(1, 20))
    base_timestamp = draw(st.integers(0, 2**40))
    offsets = sorted(draw(st.sets(st.integers(0, 1000), min_size=count, max_size=count)))
    return [
        Record(
            offset,
            base_timestamp + draw(st.integers(-1000, 1000)),
            draw(optional_bytes),
            draw(optional_bytes),
            draw(headers),
        )
        for offset in offsets
    ]


def kafka_python_batch(
    records: list[Record],
    codec: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, producer_id, producer_epoch, base_sequence, 1 << 30)
    for r in records:
        assert builder.append(r.offset, r.timestamp, r.key, r.value, list(r.headers)) is not None
    return bytes(builder.build())


def as_tuples(records: list[Record]) -> list[tuple[object, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in records]


# ---- header fields ------------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    base_offset=int64,
    leader_epoch=int32,
    last_offset_delta=int32,
    base_timestamp=int64,
    max_timestamp=int64,
    producer_id=int64,
    producer_epoch=int16,
    base_sequence=int32,
    attributes=int16,
    body=st.binary(max_size=100),
)
def test_header_fields_round_trip(
    base_offset: int,
    leader_epoch: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    attributes: int,
    body: bytes,
) -> None:
    header = struct.pack(
        ">qiibIhiqqqhii",
        base_offset,
        RECORD_BATCH_OVERHEAD - 12 + len(body),
        leader_epoch,
        2,
        0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        7,
    )
    buf = bytearray(header + body)
    batch = RecordBatch(buf)
    batch.write_crc()
    assert batch.base_offset == base_offset
    assert batch.size == len(buf)
    assert batch.partition_leader_epoch == leader_epoch
    assert batch.magic == 2
    assert batch.attributes == attributes
    assert batch.compression == attributes & 7
    assert batch.timestamp_type == (attributes >> 3) & 1
    assert batch.is_transactional == bool(attributes & 0x10)
    assert batch.is_control == bool(attributes & 0x20)
    assert batch.last_offset_delta == last_offset_delta
    assert batch.base_timestamp == base_timestamp
    assert batch.max_timestamp == max_timestamp
    assert batch.producer_id == producer_id
    assert batch.producer_epoch == producer_epoch
    assert batch.base_sequence == base_sequence
    assert batch.record_count == 7
    assert batch.verify_crc()
    # the header read at once (the produce path's) agrees with every field read on its own
    fields = batch.header()
    assert fields == tuple(getattr(batch, name) for name in BatchHeader._fields)
    assert (fields.size, fields.is_transactional, fields.is_control, fields.last_sequence) == (
        batch.size,
        batch.is_transactional,
        batch.is_control,
        batch.last_sequence,
    )
    assert read_attributes(buf) == attributes
    # base offset and leader epoch are outside the CRC: rewriting them keeps it valid
    batch.base_offset = 12345
    batch.partition_leader_epoch = 9
    assert (batch.base_offset, batch.partition_leader_epoch) == (12345, 9)
    assert batch.verify_crc()
    assert batch.last_offset == 12345 + last_offset_delta


@settings(max_examples=100, deadline=None)
@given(records=record_lists(), flip=st.integers(0, 10_000), bit=st.integers(0, 7))
def test_any_flipped_bit_under_the_crc_is_detected(records: list[Record], flip: int, bit: int) -> None:
    buf = build_batch([Record(i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(records)])
    assert validate_batch(RecordBatch(buf)) is None
    position = 21 + flip % (len(buf) - 21)  # CRC covers attributes (byte 21) to the end
    buf[position] ^= 1 << bit
    problem = validate_batch(RecordBatch(buf))
    assert problem is not None
    assert problem.code == ErrorCode.CORRUPT_MESSAGE


def test_set_log_append_time_rewrites_crc_and_timestamps() -> None:
    buf = build_batch([Record(0, 100, b"k", b"a"), Record(1, 200, None, b"b")])
    batch = RecordBatch(buf)
    batch.set_log_append_time(999_999)
    assert batch.verify_crc()
    assert batch.timestamp_type == LOG_APPEND_TIME
    assert batch.max_timestamp == 999_999
    assert [r.timestamp for r in decode_records(batch)] == [999_999, 999_999]
    # kafka-python agrees
    parsed = DefaultRecordBatch(bytes(buf))
    assert parsed.validate_crc()
    assert [r.timestamp for r in parsed] == [999_999, 999_999]


def test_sequence_wraps_like_kafka() -> None:
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(INT32_MAX, 1) == 0
    assert increment_sequence(INT32_MAX - 1, 3) == 1
    buf = build_batch(
        [Record(i, 0, None, b"x") for i in range(3)], producer_id=1, producer_epoch=0, base_sequence=INT32_MAX
    )
    assert RecordBatch(buf).last_sequence == 1


# ---- kafka-python as an oracle, both directions, every codec ------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=40, deadline=None)
@given(records=record_lists())
def test_kafka_python_batches_parse(codec: int, records: list[Record]) -> None:
    # kafka-python's builder numbers records by the offsets given, from base offset 0
    buf = kafka_python_batch(records, codec, producer_id=77, producer_epoch=3, base_sequence=10)
    batch = RecordBatch(buf)
    contiguous = [r.offset for r in records] == list(range(len(records)))
    problem = validate_batch(batch)
    assert (
        (problem is None)
        if contiguous
        else (problem is not None and problem.code == ErrorCode.INVALID_RECORD)
    )
    assert batch.verify_crc()
    assert batch.size == len(buf)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (77, 3, 10)
    assert batch.record_count == len(records)
    assert batch.last_offset_delta == records[-1].offset
    assert batch.base_timestamp == records[0].timestamp
    assert batch.max_timestamp == max(r.timestamp for r in records)
    assert as_tuples(decode_records(batch)) == as_tuples(records)


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=40, deadline=None)
@given(records=record_lists(), base_offset=st.integers(0, 2**40))
def test_our_batches_parse_in_kafka_python(codec: int, records: list[Record], base_offset: int) -> None:
    shifted = [Record(r.offset + base_offset, r.timestamp, r.key, r.value, r.headers) for r in records]
    buf = build_batch(
        shifted, base_offset=base_offset, compression=codec, producer_id=5, producer_epoch=1, base_sequence=0
    )
    parsed = DefaultRecordBatch(bytes(buf))
    assert parsed.validate_crc()
    assert parsed.base_offset == base_offset
    assert parsed.compression_type == codec
    assert (parsed.producer_id, parsed.producer_epoch, parsed.base_sequence) == (5, 1, 0)
    assert [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in parsed] == as_tuples(shifted)


def test_uncompressed_batches_are_byte_identical_to_kafka_python() -> None:
    records = [
        Record(i, 1_700_000_000_000 + i, b"key-%d" % i, b"value" * i, (("h", b"v"),)) for i in range(50)
    ]
    ours = build_batch(records, producer_id=9, producer_epoch=2, base_sequence=100, partition_leader_epoch=0)
    assert bytes(ours) == kafka_python_batch(records, 0, 9, 2, 100)


# ---- iteration and validation -------------------------------------------------------------------------------------


def test_iter_batches_stops_at_a_partial_tail() -> None:
    batches = [build_batch([Record(i, 0, None, b"v" * i)], base_offset=i) for i in range(5)]
    whole = b"".join(batches)
    assert [b.base_offset for b in iter_batches(whole)] == [0, 1, 2, 3, 4]
    for cut in range(len(whole)):
        found = list(iter_batches(whole[:cut]))
        assert sum(b.size for b in found) <= cut
        assert len(found) == sum(1 for end in _ends(batches) if end <= cut)
    # zero-filled tail: a zero length is not a batch
    assert len(list(iter_batches(whole + bytes(100)))) == 5


def _ends(batches: list[bytearray]) -> list[int]:
    ends, total = [], 0
    for b in batches:
        total += len(b)
        ends.append(total)
    return ends


def refusal(batch: RecordBatch) -> ErrorCode:
    """The error code validate_batch refuses `batch` with."""
    error = validate_batch(batch)
    assert error is not None
    return error.code


def test_validate_batch_errors() -> None:
    good = build_batch([Record(0, 0, None, b"a"), Record(1, 0, None, b"b")])
    assert validate_batch(RecordBatch(good)) is None

    short = RecordBatch(good[:40])
    assert validate_batch(short) == validate_batch(short)  # deterministic
    assert refusal(short) == ErrorCode.INVALID_RECORD

    bad_magic = bytearray(good)
    bad_magic[16] = 1
    assert refusal(RecordBatch(bad_magic)) == ErrorCode.INVALID_RECORD

    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    assert refusal(RecordBatch(bad_crc)) == ErrorCode.CORRUPT_MESSAGE

    bad_count = bytearray(good)
    struct.pack_into(">i", bad_count, 57, 3)
    RecordBatch(bad_count).write_crc()
    assert refusal(RecordBatch(bad_count)) == ErrorCode.INVALID_RECORD

    too_long = bytearray(good)
    struct.pack_into(">i", too_long, 8, len(good))
    assert refusal(RecordBatch(too_long)) == ErrorCode.INVALID_RECORD

    no_sequence = build_batch([Record(0, 0, None, b"a")], producer_id=4, producer_epoch=0, base_sequence=-1)
    assert refusal(RecordBatch(no_sequence)) == ErrorCode.INVALID_RECORD


def test_decode_rejects_malformed_records() -> None:
    buf = build_batch([Record(0, 0, b"k", b"value")])
    struct.pack_into(">i", buf, 57, 2)  # claims two records, holds one
    with pytest.raises(CorruptRecordError):
        decode_records(RecordBatch(buf))
    buf = build_batch([Record(0, 0, b"k", b"value")])
    buf += b"\x00"  # trailing byte after the last record
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    with pytest.raises(CorruptRecordError):
        decode_records(RecordBatch(buf))
    buf = build_batch([Record(0, 0, b"k", b"value" * 20)], compression=compression.GZIP)
    buf[RECORD_BATCH_OVERHEAD] ^= 0xFF  # the gzip magic
    with pytest.raises(CorruptRecordError):
        decode_records(RecordBatch(buf))


def test_build_batch_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one"):
        build_batch([])
    with pytest.raises(ValueError, match="does not follow"):
        build_batch([Record(1, 0, None, None), Record(1, 0, None, None)])


# ---- compression ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=200_000))
def test_compression_round_trip(codec: int, data: bytes) -> None:
    assert compression.decompress(codec, compression.compress(codec, data)) == data
    assert compression.decompress(codec, memoryview(compression.compress(codec, bytearray(data)))) == data


@pytest.mark.parametrize(
    ("codec", "encode", "decode"),
    [
        (compression.GZIP, kafka_codec.gzip_encode, kafka_codec.gzip_decode),
        (compression.SNAPPY, kafka_codec.snappy_encode, kafka_codec.snappy_decode),
        (compression.LZ4, kafka_codec.lz4_encode, kafka_codec.lz4_decode),
        (compression.ZSTD, kafka_codec.zstd_encode, kafka_codec.zstd_decode),
    ],
)
def test_compression_interoperates_with_kafka_python(
    codec: int, encode: Callable[[bytes], bytes], decode: Callable[[bytes], bytes]
) -> None:
    data = b"".join(b"record %d " % i for i in range(20_000))  # several xerial blocks
    assert compression.decompress(codec, encode(data)) == data
    assert decode(compression.compress(codec, data)) == data


def test_snappy_accepts_xerial_and_raw() -> None:
    data = bytes(range(256)) * 1000
    xerial = compression.compress(compression.SNAPPY, data)
    assert xerial.startswith(b"\x82SNAPPY\x00")
    assert compression.decompress(compression.SNAPPY, xerial) == data
    raw = kafka_codec.snappy_encode(data, xerial_compatible=False)
    assert not raw.startswith(b"\x82SNAPPY")
    assert compression.decompress(compression.SNAPPY, raw) == data
    # xerial with odd block sizes, as snappy-java may write
    assert (
        compression.decompress(compression.SNAPPY, kafka_codec.snappy_encode(data, xerial_blocksize=1000))
        == data
    )


def test_lz4_frames_use_independent_blocks() -> None:
    frame = compression.compress(compression.LZ4, b"x" * 300_000)
    flags = frame[4]
    assert flags & 0x20, "block independence bit (Kafka cannot read linked blocks)"
    assert not flags & 0x04, "no content checksum, as Kafka's own writer"


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
def test_corrupt_compressed_data_raises_compression_error(codec: int) -> None:
    with pytest.raises(compression.CompressionError):
        compression.decompress(
            codec, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x09garbage"
        )
    with pytest.raises(compression.CompressionError):
        compression.decompress(codec, b"not compressed at all")


def test_unknown_codec() -> None:
    with pytest.raises(compression.CompressionError):
        compression.decompress(5, b"")
    with pytest.raises(compression.CompressionError):
        compression.compress(7, b"")


# ---- decompression bombs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
def test_decompression_is_capped(codec: int) -> None:
    """Whatever the codec, output beyond the limit is refused, output up to it comes back whole."""
    zeros = bytes(2 << 20)
    packed = compression.compress(codec, zeros)
    assert compression.decompress(codec, packed, limit=len(zeros)) == zeros
    with pytest.raises(compression.CompressionError, match="decompress to more than"):
        compression.decompress(codec, packed, limit=len(zeros) - 1)


def test_a_zstd_bomb_in_a_batch_is_corrupt_not_allocated() -> None:
    """300 MB of zeros as a zstd batch of a few kilobytes: decode_records refuses it at the 128 MiB cap."""
    bomb = compression.compress(compression.ZSTD, bytes(300 << 20))
    assert len(bomb) < 100_000
    batch = build_batch([Record(0, 0, b"k", b"v")], compression=compression.ZSTD)
    records = bytearray(batch[:RECORD_BATCH_OVERHEAD]) + bomb
    struct.pack_into(">i", records, 8, len(records) - 12)  # batch length
    with pytest.raises(CorruptRecordError, match="decompress to more than"):
        decode_records(RecordBatch(records))
