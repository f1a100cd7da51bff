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

Transactions (KIP-98), Kafka's rules too:
- a transactional batch of a producer with no transaction open on this partition begins one at its first offset;
  the transaction stays open (it is *ongoing*) until a COMMIT or ABORT marker of that producer is appended, written
  by the transaction coordinator (`complete_txn`);
- a non-transactional batch of a producer with an open transaction is refused: INVALID_TXN_STATE;
- a marker with an epoch older than the producer's is refused (INVALID_PRODUCER_EPOCH), and one from a coordinator
  epoch older than the last marker's (TRANSACTION_COORDINATOR_FENCED): a zombie coordinator cannot end anything;
- KIP-890's defence against hanging transactions: with verification required, a batch that would begin a
  transaction is accepted only if the partition leader asked the transaction coordinator first whether this
  partition is part of the producer's transaction, and nothing ended a transaction of that producer here since
  (`begin_verification` hands out a guard; a marker drops it). Otherwise INVALID_TXN_STATE.

The first offset of the oldest transaction that is not yet decided *and replicated* is the first unstable offset:
the last stable offset (LSO, what read_committed consumers may read up to) is the high watermark or that, whichever
is lower. A completed transaction stays unstable until the high watermark passes its marker, so a consumer never
sees a transaction's records before it can also see how it ended.

Batches replicated from a leader or read back during recovery update the state without these checks.
Snapshots (`<offset>.snapshot`, written on roll and close) make reopening cheap: the log only rereads the batch
headers after the newest snapshot. They are a cache: a missing or corrupt one means reading more of the log.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from crc32c import crc32c

from kbroker.common import KafkaError
from kbroker.log.files import replace_file
from protocol.errors import ErrorCode
from protocol.records import INT32_MAX, NO_PRODUCER_EPOCH, NO_SEQUENCE

# How many batches per producer a retry is checked against: the client's max.in.flight.requests.per.connection
# limit for idempotence is 5 for the same reason.
NUM_BATCHES_TO_RETAIN = 5

SNAPSHOT_SUFFIX = ".snapshot"
_SNAPSHOT_VERSION = 2
_SNAPSHOT_HEADER = struct.Struct(">IhqI")  # crc32c of the rest, version, offset, producer count
# producer id, epoch, last timestamp, batch count, coordinator epoch, first offset of its open transaction (-1: none)
_SNAPSHOT_ENTRY = struct.Struct(">qhqBiq")
_SNAPSHOT_BATCH = struct.Struct(">iiqqq")  # first seq, last seq, first offset, last offset, timestamp


class BatchFields(Protocol):
    """What the producer rules read of a batch: a RecordBatch (a view), or its BatchHeader (read at once)."""

    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def last_sequence(self) -> int: ...
    @property
    def last_offset_delta(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...


class BatchMetadata(NamedTuple):
    """One of a producer's last batches (a NamedTuple: one per batch appended, cheaper to make than a frozen
    dataclass)."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker ended: its producer, its first offset and the marker's offset."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class VerificationGuard:
    """Proof that a partition leader asked the transaction coordinator before a batch begins a transaction here
    (KIP-890). Compared by identity."""

    __slots__ = ()


class ProducerStateEntry:
    __slots__ = (
        "batches",
        "coordinator_epoch",
        "current_txn_first_offset",
        "last_timestamp",
        "producer_epoch",
        "producer_id",
        "verification_guard",
    )

    def __init__(self, producer_id: int, producer_epoch: int, last_timestamp: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.last_timestamp = last_timestamp
        self.batches: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)
        self.coordinator_epoch = -1
        self.current_txn_first_offset = -1
        """First offset of this producer's open transaction on the partition; -1 when none is open."""
        self.verification_guard: VerificationGuard | None = None

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}
        # Open transactions, first offset -> producer id, in first-offset order (appends only ever add larger ones).
        self.ongoing_txns: dict[int, int] = {}
        # Transactions a marker ended whose marker the high watermark has not passed yet, by first offset.
        self.unreplicated_txns: dict[int, CompletedTxn] = {}

    def has_ongoing_txn(self, producer_id: int, producer_epoch: int) -> bool:
        entry = self.producers.get(producer_id)
        return (
            entry is not None
            and entry.current_txn_first_offset >= 0
            and entry.producer_epoch == producer_epoch
        )

    def begin_verification(self, producer_id: int, now_ms: int) -> VerificationGuard:
        """The guard a leader holds while it asks the coordinator whether this partition is in the producer's
        transaction; the producer's first transactional batch is accepted only with it (see `check_append`)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = ProducerStateEntry(producer_id, NO_PRODUCER_EPOCH, now_ms)
            self.producers[producer_id] = entry
        if entry.verification_guard is None:
            entry.verification_guard = VerificationGuard()
        return entry.verification_guard

    def check_append(
        self,
        batch: BatchFields,
        *,
        check_sequence: bool = True,
        verification_required: bool = False,
        verification_guard: VerificationGuard | None = None,
    ) -> BatchMetadata | None:
        """Leader-side checks of a batch with producer_id >= 0. Returns the original batch's metadata if this one
        is a retry of it (write nothing), None if it may be appended; raises KafkaError if it is refused.
        `check_sequence` is False for batches the broker writes itself (the group coordinator's transactional
        offset commits), which carry no meaningful sequence.
        """
        entry = self.producers.get(batch.producer_id)
        epoch = batch.producer_epoch
        first_seq = batch.base_sequence
        follows = False
        if entry is not None and epoch == entry.producer_epoch:
            # The next batch in sequence (nearly every one) cannot be a retry of one already here: those all begin
            # at or before the last sequence (five batches cannot wrap the sequence round).
            follows = in_sequence(entry.last_seq, first_seq)
            if check_sequence and not follows:
                last_seq = batch.last_sequence
                for metadata in entry.batches:
                    if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                        return metadata
        transactional = batch.is_transactional
        if (
            transactional
            and verification_required
            and not self.has_ongoing_txn(batch.producer_id, epoch)
            and (
                verification_guard is None
                or entry is None
                or entry.verification_guard is not verification_guard
            )
        ):
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {batch.producer_id}'s batch is not part of an ongoing transaction (the partition was "
                "not verified with the transaction coordinator)",
            )
        if entry is None:
            return None
        if epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {batch.producer_id} epoch {epoch} is older than the current epoch {entry.producer_epoch}",
            )
        if check_sequence:
            if epoch == entry.producer_epoch:
                if not follows:
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
        if not transactional and entry.current_txn_first_offset >= 0:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {batch.producer_id} sent a non-transactional batch while its transaction is open",
            )
        return None

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int) -> None:
        """Leader-side checks of a COMMIT/ABORT marker the coordinator asks us to write."""
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        if producer_epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"marker for producer {producer_id} at epoch {producer_epoch}, older than its epoch "
                f"{entry.producer_epoch}",
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"marker for producer {producer_id} from coordinator epoch {coordinator_epoch}, older than "
                f"{entry.coordinator_epoch}",
            )

    def _entry_at_epoch(self, producer_id: int, epoch: int, timestamp: int) -> ProducerStateEntry:
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = ProducerStateEntry(producer_id, epoch, timestamp)
            self.producers[producer_id] = entry
        elif epoch != entry.producer_epoch:
            entry.producer_epoch = epoch
            entry.batches.clear()
        entry.last_timestamp = timestamp
        return entry

    def update(self, batch: BatchFields, first_offset: int, timestamp: int) -> None:
        """Record an appended data batch (from a client, a leader, or the log at recovery). `batch` may be a header
        view; `timestamp` is its max timestamp as stored. Markers go to `complete_txn`.
        """
        entry = self._entry_at_epoch(batch.producer_id, batch.producer_epoch, timestamp)
        if batch.is_control:
            return
        entry.batches.append(
            BatchMetadata(
                batch.base_sequence,
                batch.last_sequence,
                first_offset,
                first_offset + batch.last_offset_delta,
                timestamp,
            )
        )
        if batch.is_transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = first_offset
            entry.verification_guard = None
            self.ongoing_txns[first_offset] = entry.producer_id

    def complete_txn(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        offset: int,
        timestamp: int,
    ) -> CompletedTxn | None:
        """A COMMIT or ABORT marker was appended at `offset`: the producer's open transaction, if any, ends. A
        marker may bump the epoch (the coordinator fencing a producer), which restarts its sequences."""
        entry = self._entry_at_epoch(producer_id, producer_epoch, timestamp)
        entry.coordinator_epoch = coordinator_epoch
        entry.verification_guard = None
        first = entry.current_txn_first_offset
        if first < 0:
            return None
        entry.current_txn_first_offset = -1
        self.ongoing_txns.pop(first, None)
        completed = CompletedTxn(producer_id, first, offset, not commit)
        self.unreplicated_txns[first] = completed
        return completed

    def last_stable_offset_after(self, completed: CompletedTxn) -> int:
        """The LSO once `completed` ended, as the aborted transaction index records it: the first offset of the
        oldest transaction of another producer still open, else just past the marker."""
        for first, producer_id in self.ongoing_txns.items():
            if producer_id != completed.producer_id:
                return first
        return completed.last_offset + 1

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """The first offset of the oldest transaction that is open, or ended by a marker the high watermark has not
        passed; None if there is none. Forgets ended transactions the high watermark has passed."""
        done = [first for first, txn in self.unreplicated_txns.items() if txn.last_offset < high_watermark]
        for first in done:
            del self.unreplicated_txns[first]
        candidates = [first for first in self.unreplicated_txns]
        if self.ongoing_txns:
            candidates.append(next(iter(self.ongoing_txns)))
        return min(candidates, default=None)

    def remove_expired(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle for expiration_ms (Kafka's producer.id.expiration.ms); returns how many."""
        # A producer with an open transaction stays: its transaction still has to end (Kafka's rule too).
        expired = [
            pid
            for pid, e in self.producers.items()
            if now_ms - e.last_timestamp >= expiration_ms and e.current_txn_first_offset < 0
        ]
        for pid in expired:
            del self.producers[pid]
        return len(expired)

    # ---- snapshots ------------------------------------------------------------------------------------------------

    def to_snapshot(self, offset: int) -> bytes:
        """The state as of `offset` (the log end offset it describes)."""
        body = bytearray()
        for entry in self.producers.values():
            body += _SNAPSHOT_ENTRY.pack(
                entry.producer_id,
                entry.producer_epoch,
                entry.last_timestamp,
                len(entry.batches),
                entry.coordinator_epoch,
                entry.current_txn_first_offset,
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
                producer_id, epoch, last_timestamp, batch_count, coordinator_epoch, txn_first_offset = (
                    _SNAPSHOT_ENTRY.unpack_from(data, pos)
                )
                pos += _SNAPSHOT_ENTRY.size
                entry = ProducerStateEntry(producer_id, epoch, last_timestamp)
                entry.coordinator_epoch = coordinator_epoch
                entry.current_txn_first_offset = txn_first_offset
                for _ in range(batch_count):
                    entry.batches.append(BatchMetadata(*_SNAPSHOT_BATCH.unpack_from(data, pos)))
                    pos += _SNAPSHOT_BATCH.size
                state.producers[producer_id] = entry
        except struct.error as e:
            raise ValueError(f"truncated snapshot: {e}") from e
        open_txns = sorted((e.current_txn_first_offset, e.producer_id) for e in state.producers.values())
        state.ongoing_txns = {first: producer_id for first, producer_id in open_txns if first >= 0}
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


def load_latest_snapshot(
    directory: Path, max_offset: int, *, delete_above: bool = True
) -> tuple[int, ProducerStateManager] | None:
    """The newest intact snapshot at or below max_offset. With `delete_above`, snapshots above it describe offsets
    the log no longer has (lost in a crash, or truncated) and are deleted.
    """
    for offset in reversed(snapshot_offsets(directory)):
        path = snapshot_path(directory, offset)
        if offset > max_offset:
            if delete_above:
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
