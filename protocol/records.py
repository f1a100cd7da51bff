"""Record batches, magic v2: a zero-copy view over one batch, batch splitting, validation, record (de)coding.

Layout (PROTOCOL.md §5): a 61-byte header, then the records, compressed together when the codec is not none.
The CRC-32C covers everything from `attributes` (byte 21) to the end of the batch, so the broker can rewrite
`base_offset` and `partition_leader_epoch` without recomputing it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from crc32c import crc32c

from protocol import compression as codecs
from protocol.errors import ErrorCode, ProtocolError
from protocol.primitives import Reader, Writer

BASE_OFFSET_OFFSET = 0
BATCH_LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORD_COUNT_OFFSET = 57
RECORD_BATCH_OVERHEAD = 61
# base_offset and batch_length come before the part batch_length counts
LOG_OVERHEAD = 12

MAGIC = 2
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

CREATE_TIME = 0
LOG_APPEND_TIME = 1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20

INT32_MAX = 2**31 - 1

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
# base_offset and batch_length: all a reader needs to hop from one batch to the next
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == RECORD_BATCH_OVERHEAD

Buffer = bytes | bytearray | memoryview


class BatchHeader(NamedTuple):
    """The header's fields as they were when read, from one unpack: the produce path reads most of them, and one
    read of all costs less than a read per field (each a Python call and an unpack)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def last_sequence(self) -> int:
        return last_sequence(self.base_sequence, self.last_offset_delta)


class RecordBatch:
    """A view over exactly one batch (`buf` may be longer; only the first `size` bytes belong to the batch).

    Field reads never copy. The setters need a writable buffer (a bytearray or a memoryview of one).
    """

    __slots__ = ("buf",)

    def __init__(self, buf: Buffer) -> None:
        self.buf = memoryview(buf)

    def header(self) -> BatchHeader:
        """Every header field at once (needs the whole 61-byte header)."""
        return BatchHeader._make(_HEADER.unpack_from(self.buf))

    @property
    def base_offset(self) -> int:
        value: int = _I64.unpack_from(self.buf, BASE_OFFSET_OFFSET)[0]
        return value

    @base_offset.setter
    def base_offset(self, value: int) -> None:
        _I64.pack_into(self.buf, BASE_OFFSET_OFFSET, value)

    @property
    def batch_length(self) -> int:
        value: int = _I32.unpack_from(self.buf, BATCH_LENGTH_OFFSET)[0]
        return value

    @property
    def size(self) -> int:
        """Bytes of the whole batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def partition_leader_epoch(self) -> int:
        value: int = _I32.unpack_from(self.buf, PARTITION_LEADER_EPOCH_OFFSET)[0]
        return value

    @partition_leader_epoch.setter
    def partition_leader_epoch(self, value: int) -> None:
        _I32.pack_into(self.buf, PARTITION_LEADER_EPOCH_OFFSET, value)

    @property
    def magic(self) -> int:
        value: int = _I8.unpack_from(self.buf, MAGIC_OFFSET)[0]
        return value

    @property
    def crc(self) -> int:
        value: int = _U32.unpack_from(self.buf, CRC_OFFSET)[0]
        return value

    @property
    def attributes(self) -> int:
        value: int = _I16.unpack_from(self.buf, ATTRIBUTES_OFFSET)[0]
        return value

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        """CREATE_TIME or LOG_APPEND_TIME."""
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def last_offset_delta(self) -> int:
        value: int = _I32.unpack_from(self.buf, LAST_OFFSET_DELTA_OFFSET)[0]
        return value

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def base_timestamp(self) -> int:
        value: int = _I64.unpack_from(self.buf, BASE_TIMESTAMP_OFFSET)[0]
        return value

    @property
    def max_timestamp(self) -> int:
        value: int = _I64.unpack_from(self.buf, MAX_TIMESTAMP_OFFSET)[0]
        return value

    @property
    def producer_id(self) -> int:
        value: int = _I64.unpack_from(self.buf, PRODUCER_ID_OFFSET)[0]
        return value

    @property
    def producer_epoch(self) -> int:
        value: int = _I16.unpack_from(self.buf, PRODUCER_EPOCH_OFFSET)[0]
        return value

    @property
    def base_sequence(self) -> int:
        value: int = _I32.unpack_from(self.buf, BASE_SEQUENCE_OFFSET)[0]
        return value

    @property
    def last_sequence(self) -> int:
        return last_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def record_count(self) -> int:
        value: int = _I32.unpack_from(self.buf, RECORD_COUNT_OFFSET)[0]
        return value

    def compute_crc(self) -> int:
        """CRC-32C of the bytes the stored CRC covers."""
        result: int = crc32c(self.buf[ATTRIBUTES_OFFSET : self.size])
        return result

    def verify_crc(self) -> bool:
        return self.compute_crc() == self.crc

    def write_crc(self) -> None:
        _U32.pack_into(self.buf, CRC_OFFSET, self.compute_crc())

    def set_log_append_time(self, timestamp: int) -> None:
        """Stamp the broker's clock on the batch (message.timestamp.type=LogAppendTime).

        Readers then take every record's timestamp from max_timestamp. Both fields are under the CRC, so it is
        rewritten: the only broker-side change to a batch that costs a CRC pass.
        """
        _I16.pack_into(self.buf, ATTRIBUTES_OFFSET, self.attributes | TIMESTAMP_TYPE_MASK)
        _I64.pack_into(self.buf, MAX_TIMESTAMP_OFFSET, timestamp)
        self.write_crc()

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, size={self.size}, "
            f"record_count={self.record_count}, compression={self.compression}, producer_id={self.producer_id})"
        )


def read_attributes(buf: Buffer) -> int:
    """The attributes of the batch `buf` begins with (at least its first 23 bytes), without a view of it."""
    value: int = _I16.unpack_from(buf, ATTRIBUTES_OFFSET)[0]
    return value


def last_sequence(base_sequence: int, last_offset_delta: int) -> int:
    """The sequence of a batch's last record; sequences wrap from INT32_MAX to 0 (Kafka's rule)."""
    if base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return increment_sequence(base_sequence, last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def iter_batches(buf: Buffer) -> Iterator[RecordBatch]:
    """Views over the concatenated batches in `buf`, in order.

    Stops, without raising, at a tail that does not hold a whole batch: a truncated batch, or a length field too
    small to be a batch (zero-filled tails look like that). Callers that must reject such a tail compare the bytes
    consumed with len(buf).
    """
    view = memoryview(buf)
    end = len(view)
    pos = 0
    while pos + LOG_OVERHEAD <= end:
        batch_length = _I32.unpack_from(view, pos + BATCH_LENGTH_OFFSET)[0]
        size = batch_length + LOG_OVERHEAD
        if size < RECORD_BATCH_OVERHEAD or pos + size > end:
            return
        yield RecordBatch(view[pos : pos + size])
        pos += size


@dataclass(frozen=True, slots=True)
class BatchError:
    """Why a batch is refused; `code` is what the Produce response carries."""

    code: ErrorCode
    message: str


def validate_batch(batch: RecordBatch, header: BatchHeader | None = None) -> BatchError | None:
    """Checks a batch from a producer: framing, magic, CRC, and that its record count matches its offsets.
    `header` is the batch's, if the caller has read it already.

    CRC mismatches are CORRUPT_MESSAGE; everything else is INVALID_RECORD, as Kafka answers.
    """
    buf = batch.buf
    available = len(buf)
    if available < RECORD_BATCH_OVERHEAD:
        return BatchError(ErrorCode.INVALID_RECORD, f"batch of {available} bytes is shorter than its header")
    if header is None:
        header = batch.header()
    size = header.batch_length + LOG_OVERHEAD
    if size < RECORD_BATCH_OVERHEAD or size > available:
        return BatchError(
            ErrorCode.INVALID_RECORD,
            f"batch length {header.batch_length} does not fit the {available} bytes given",
        )
    if header.magic != MAGIC:
        return BatchError(
            ErrorCode.INVALID_RECORD, f"record batch magic {header.magic} is not supported, only 2"
        )
    computed = crc32c(buf[ATTRIBUTES_OFFSET:size])
    if computed != header.crc:
        return BatchError(
            ErrorCode.CORRUPT_MESSAGE, f"record batch CRC {header.crc} does not match computed {computed}"
        )
    count = header.record_count
    if count <= 0 or count != header.last_offset_delta + 1:
        return BatchError(
            ErrorCode.INVALID_RECORD,
            f"record count {count} does not match last offset delta {header.last_offset_delta}",
        )
    if header.producer_id >= 0 and header.base_sequence < 0:
        return BatchError(
            ErrorCode.INVALID_RECORD,
            f"producer id {header.producer_id} with invalid sequence {header.base_sequence}",
        )
    return None


@dataclass(frozen=True, slots=True)
class Record:
    """One record. `offset` is absolute; header keys are UTF-8 strings, values may be null."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


class CorruptRecordError(ValueError):
    """A batch's records section does not decode."""


def decode_records(batch: RecordBatch) -> list[Record]:
    """Every record of the batch, decompressing if needed. Per-record Python work: not for the produce path."""
    body = batch.buf[RECORD_BATCH_OVERHEAD : batch.size]
    codec = batch.compression
    if codec != codecs.NONE:
        try:
            body = memoryview(codecs.decompress(codec, body))
        except codecs.CompressionError as e:
            raise CorruptRecordError(str(e)) from e
    base_offset = batch.base_offset
    log_append_time = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
    base_timestamp = batch.base_timestamp
    reader = Reader(body)
    records = []
    try:
        for _ in range(batch.record_count):
            length = reader.varint()
            record_end = reader.pos + length
            reader.int8()  # record attributes: unused by Kafka so far
            timestamp_delta = reader.varint()
            offset_delta = reader.varint()
            key = _read_varint_bytes(reader)
            value = _read_varint_bytes(reader)
            headers = []
            for _ in range(reader.varint()):
                header_key = _read_varint_bytes(reader)
                if header_key is None:
                    raise CorruptRecordError("null record header key")
                headers.append((str(header_key, "utf-8"), _read_varint_bytes(reader)))
            if reader.pos != record_end:
                raise CorruptRecordError(f"record length {length} does not match its content")
            timestamp = log_append_time if log_append_time is not None else base_timestamp + timestamp_delta
            records.append(Record(base_offset + offset_delta, timestamp, key, value, tuple(headers)))
    except (ProtocolError, UnicodeDecodeError) as e:
        raise CorruptRecordError(f"malformed record in batch at offset {base_offset}: {e}") from e
    if reader.remaining():
        raise CorruptRecordError(f"{reader.remaining()} bytes left after the last record")
    return records


def _read_varint_bytes(reader: Reader) -> bytes | None:
    length = reader.varint()
    if length < 0:
        return None
    return bytes(reader.raw(length))


def _write_varint_bytes(writer: Writer, value: bytes | None) -> None:
    if value is None:
        writer.varint(-1)
    else:
        writer.varint(len(value))
        writer.raw(value)


def build_batch(
    records: Sequence[Record],
    base_offset: int = 0,
    compression: int = codecs.NONE,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    timestamp_type: int = CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytearray:
    """Encode one batch. Each record's offset must be >= base_offset and increasing (gaps are allowed, as in a
    compacted log); record timestamps are stored as deltas from the first one.
    """
    if not records:
        raise ValueError("a batch needs at least one record")
    base_timestamp = records[0].timestamp
    max_timestamp = base_timestamp
    body = Writer()
    previous_offset = base_offset - 1
    for record in records:
        if record.offset <= previous_offset:
            raise ValueError(f"record offset {record.offset} does not follow {previous_offset}")
        previous_offset = record.offset
        max_timestamp = max(max_timestamp, record.timestamp)
        one = Writer()
        one.int8(0)
        one.varint(record.timestamp - base_timestamp)
        one.varint(record.offset - base_offset)
        _write_varint_bytes(one, record.key)
        _write_varint_bytes(one, record.value)
        one.varint(len(record.headers))
        for header_key, header_value in record.headers:
            _write_varint_bytes(one, header_key.encode("utf-8"))
            _write_varint_bytes(one, header_value)
        body.varint(len(one.out))
        body.raw(one.out)
    records_section = codecs.compress(compression, body.out)
    attributes = compression & COMPRESSION_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    out = bytearray(RECORD_BATCH_OVERHEAD)
    _HEADER.pack_into(
        out,
        0,
        base_offset,
        RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(records_section),
        partition_leader_epoch,
        MAGIC,
        0,
        attributes,
        records[-1].offset - base_offset,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    out += records_section
    RecordBatch(out).write_crc()
    return out


# ---- control records (transaction markers) ---------------------------------------------------------------------

CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")  # version 0, type
_END_TXN_MARKER_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """The one record of a control batch that ends a transaction (Kafka's EndTransactionMarker)."""

    commit: bool
    coordinator_epoch: int


def build_end_txn_marker(
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    commit: bool,
    timestamp: int,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytearray:
    """A control batch of one COMMIT or ABORT marker, as a transaction coordinator has a partition leader write."""
    key = _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    value = _END_TXN_MARKER_VALUE.pack(0, coordinator_epoch)
    return build_batch(
        [Record(offset=0, timestamp=timestamp, key=key, value=value)],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def read_end_txn_marker(batch: RecordBatch) -> EndTxnMarker | None:
    """The marker of a whole control batch; None if it is not a COMMIT or ABORT marker (an unknown control type,
    which Kafka ignores too) or does not decode."""
    try:
        records = decode_records(batch)
    except CorruptRecordError:
        return None
    if len(records) != 1:
        return None
    key, value = records[0].key, records[0].value
    if key is None or len(key) < _CONTROL_KEY.size:
        return None
    _, kind = _CONTROL_KEY.unpack_from(key)
    if kind not in (CONTROL_ABORT, CONTROL_COMMIT):
        return None
    coordinator_epoch = -1
    if value is not None and len(value) >= _END_TXN_MARKER_VALUE.size:
        coordinator_epoch = _END_TXN_MARKER_VALUE.unpack_from(value)[1]
    return EndTxnMarker(kind == CONTROL_COMMIT, coordinator_epoch)
