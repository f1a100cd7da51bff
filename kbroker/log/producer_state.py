"""Idempotent producer state of one partition: per producer id, its epoch and its last five batches.

Kafka's rules (ProducerStateManager / ProducerAppendInfo), applied to batches from clients:
- an epoch lower than the producer's current one is fenced: INVALID_PRODUCER_EPOCH (47);
- a batch with the current epoch and the same first and last sequence as one of the last five is a retry: the
  caller answers with the original offsets and writes nothing;
- with the current epoch, the first sequence must follow the last one (INT32_MAX wraps to 0), else
  OUT_OF_ORDER_SEQUENCE_NUMBER (45);
- a new epoch must start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER;
- a producer id with no state at all is accepted at any sequence. Kafka stopped answering UNKNOWN_PRODUCER_ID here
  (KIP-360): the state of a producer whose batches were all removed by retention or DeleteRecords is gone, and its
  next batch legitimately continues an old sequence.

Batches replicated from a leader or read back during recovery update the state without these checks.
Snapshots (`<offset>.snapshot`, written on roll and close) make reopening cheap: the log only rereads the batch
headers after the newest snapshot. They are a cache: a missing or corrupt one means reading more of the log.
Transactions (ongoing transactions, last stable offset, aborted transaction index) are not implemented.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

from kbroker.common import KafkaError
from kbroker.log.files import replace_file
from protocol.errors import ErrorCode
from protocol.records import INT32_MAX, NO_PRODUCER_EPOCH, NO_SEQUENCE, RecordBatch

# How many batches per producer a retry is checked against: the client's max.in.flight.requests.per.connection
# limit for idempotence is 5 for the same reason.
NUM_BATCHES_TO_RETAIN = 5

SNAPSHOT_SUFFIX = ".snapshot"
_SNAPSHOT_VERSION = 1
_SNAPSHOT_HEADER = struct.Struct(">IhqI")  # crc32c of the rest, version, offset, producer count
_SNAPSHOT_ENTRY = struct.Struct(">qhqB")  # producer id, epoch, last timestamp, batch count
_SNAPSHOT_BATCH = struct.Struct(">iiqqq")  # first seq, last seq, first offset, last offset, timestamp


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


class ProducerStateEntry:
    __slots__ = ("batches", "last_timestamp", "producer_epoch", "producer_id")

    def __init__(self, producer_id: int, producer_epoch: int, last_timestamp: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.last_timestamp = last_timestamp
        self.batches: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}

    def check_append(self, batch: RecordBatch) -> BatchMetadata | None:
        """Leader-side checks of a batch with producer_id >= 0. Returns the original batch's metadata if this one
        is a retry of it (write nothing), None if it may be appended; raises KafkaError if it is refused.
        """
        entry = self.producers.get(batch.producer_id)
        if entry is None:
            return None
        epoch = batch.producer_epoch
        first_seq = batch.base_sequence
        if epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {batch.producer_id} epoch {epoch} is older than the current epoch {entry.producer_epoch}",
            )
        if epoch == entry.producer_epoch:
            last_seq = batch.last_sequence
            for metadata in entry.batches:
                if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                    return metadata
            if not in_sequence(entry.last_seq, first_seq):
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"out of order sequence number for producer {batch.producer_id}: {first_seq} (incoming), "
                    f"{entry.last_seq} (current end sequence)",
                )
        elif first_seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"producer {batch.producer_id} began epoch {epoch} at sequence {first_seq}, not 0",
            )
        return None

    def update(self, batch: RecordBatch, first_offset: int, timestamp: int) -> None:
        """Record an appended batch (from a client, a leader, or the log at recovery). `batch` may be a header
        view; `timestamp` is its max timestamp as stored.
        """
        producer_id = batch.producer_id
        epoch = batch.producer_epoch
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = ProducerStateEntry(producer_id, epoch, timestamp)
            self.producers[producer_id] = entry
        elif epoch != entry.producer_epoch:
            entry.producer_epoch = epoch
            entry.batches.clear()
        entry.last_timestamp = timestamp
        # Control batches (transaction markers) carry the epoch but no sequence.
        if not batch.is_control:
            entry.batches.append(
                BatchMetadata(
                    batch.base_sequence,
                    batch.last_sequence,
                    first_offset,
                    first_offset + batch.last_offset_delta,
                    timestamp,
                )
            )

    def remove_expired(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle for expiration_ms (Kafka's producer.id.expiration.ms); returns how many."""
        expired = [pid for pid, e in self.producers.items() if now_ms - e.last_timestamp >= expiration_ms]
        for pid in expired:
            del self.producers[pid]
        return len(expired)

    # ---- snapshots ------------------------------------------------------------------------------------------------

    def to_snapshot(self, offset: int) -> bytes:
        """The state as of `offset` (the log end offset it describes)."""
        body = bytearray()
        for entry in self.producers.values():
            body += _SNAPSHOT_ENTRY.pack(
                entry.producer_id, entry.producer_epoch, entry.last_timestamp, len(entry.batches)
            )
            for b in entry.batches:
                body += _SNAPSHOT_BATCH.pack(
                    b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp
                )
        header = bytearray(_SNAPSHOT_HEADER.pack(0, _SNAPSHOT_VERSION, offset, len(self.producers)))
        checksum = crc32c(body, crc32c(header[4:]))
        struct.pack_into(">I", header, 0, checksum)
        return bytes(header + body)

    @classmethod
    def from_snapshot(cls, data: bytes) -> tuple[int, ProducerStateManager]:
        """(offset, state) from snapshot bytes; ValueError if they are not a whole, intact snapshot."""
        if len(data) < _SNAPSHOT_HEADER.size:
            raise ValueError("snapshot shorter than its header")
        checksum, version, offset, count = _SNAPSHOT_HEADER.unpack_from(data)
        if checksum != crc32c(memoryview(data)[4:]):
            raise ValueError("snapshot checksum mismatch")
        if version != _SNAPSHOT_VERSION:
            raise ValueError(f"snapshot version {version} is not {_SNAPSHOT_VERSION}")
        state = cls()
        pos = _SNAPSHOT_HEADER.size
        try:
            for _ in range(count):
                producer_id, epoch, last_timestamp, batch_count = _SNAPSHOT_ENTRY.unpack_from(data, pos)
                pos += _SNAPSHOT_ENTRY.size
                entry = ProducerStateEntry(producer_id, epoch, last_timestamp)
                for _ in range(batch_count):
                    entry.batches.append(BatchMetadata(*_SNAPSHOT_BATCH.unpack_from(data, pos)))
                    pos += _SNAPSHOT_BATCH.size
                state.producers[producer_id] = entry
        except struct.error as e:
            raise ValueError(f"truncated snapshot: {e}") from e
        return offset, state


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def snapshot_offsets(directory: Path) -> list[int]:
    """Offsets of the snapshot files in the directory, ascending."""
    offsets = []
    for name in os.listdir(directory):
        stem, dot, suffix = name.partition(".")
        if dot and "." + suffix == SNAPSHOT_SUFFIX and stem.isdigit():
            offsets.append(int(stem))
    return sorted(offsets)


def write_snapshot(
    directory: Path, offset: int, state: ProducerStateManager, fsync: bool, keep: int = 2
) -> None:
    """Write the snapshot for `offset` and delete all but the newest `keep`. Without fsync a crash may leave it
    torn, which its checksum reveals.
    """
    replace_file(snapshot_path(directory, offset), state.to_snapshot(offset), fsync=fsync)
    for old in snapshot_offsets(directory)[:-keep]:
        snapshot_path(directory, old).unlink(missing_ok=True)


def load_latest_snapshot(directory: Path, max_offset: int) -> tuple[int, ProducerStateManager] | None:
    """The newest intact snapshot at or below max_offset. Snapshots above it describe offsets the log no longer
    has (lost in a crash, or truncated) and are deleted.
    """
    for offset in reversed(snapshot_offsets(directory)):
        path = snapshot_path(directory, offset)
        if offset > max_offset:
            path.unlink(missing_ok=True)
            continue
        try:
            loaded_offset, state = ProducerStateManager.from_snapshot(path.read_bytes())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if loaded_offset == offset:
            return offset, state
    return None


def delete_snapshots_above(directory: Path, offset: int) -> None:
    for old in snapshot_offsets(directory):
        if old > offset:
            snapshot_path(directory, old).unlink(missing_ok=True)
