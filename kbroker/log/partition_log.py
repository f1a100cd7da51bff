"""The log of one partition: a directory `<topic>-<partition>` of segments.

Plain synchronous code, called from the trio thread: every method runs to completion without another task
interleaving, so no locks are needed around log state. The one exception is the fsync work of a flush, which the
group committer runs in a worker thread on a `FlushPlan` (duplicated file descriptors and sealed segments); see
`begin_flush`. Opening and recovery are kbroker/log/loader.py; the log cleaner's segment swap protocol is
kbroker/log/segment_swap.py.

Offsets: `log_start_offset` is the first offset a consumer may read, `log_end_offset` the next offset to assign,
`high_watermark` the end of what consumers may see (set by the partition: kbroker/replication/partition.py),
`last_stable_offset` the end of what read_committed consumers may see (the high watermark, or the first offset of the
oldest undecided transaction: kbroker/log/producer_state.py), `recovery_point` the end of what is fsynced.

Transactions: data batches go through the producer state on every path (leader, follower, recovery); a COMMIT or
ABORT marker (a control batch the transaction coordinator has the leader write, `append_end_txn_marker`) ends its
producer's open transaction, and an aborted one is added to the transaction index of the segment the marker went
to (kbroker/log/txn_index.py), which `aborted_transactions` searches for read_committed fetches.

Reads return bytes read with os.pread (not sendfile): simple, and fetch responses are built in memory anyway.
Reads run on the calling thread, so a page-cache miss blocks it for one disk read.
"""

from __future__ import annotations

import bisect
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kbroker.common import CodedError, KafkaError, TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.deleter import remove_now
from kbroker.log.files import fsync_directory, out_of_space, replace_file
from kbroker.log.leader_epoch import UNDEFINED_EPOCH, LeaderEpochCache
from kbroker.log.loader import CLEANER_CHECKPOINT_FILE, LOG_START_OFFSET_FILE, load_segments
from kbroker.log.producer_state import (
    ProducerStateManager,
    VerificationGuard,
    delete_snapshots_above,
    load_latest_snapshot,
    write_snapshot,
)
from kbroker.log.segment import FileRecords, LogSegment, TornAppend, scan_batches
from kbroker.log.segment_swap import CleanedGroup, SegmentSwap
from kbroker.log.txn_index import AbortedTxn, collect_aborted
from protocol.errors import ErrorCode
from protocol.records import (
    CONTROL_MASK,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_MASK,
    CorruptRecordError,
    EndTxnMarker,
    RecordBatch,
    build_end_txn_marker,
    decode_records,
    iter_batches,
    read_end_txn_marker,
    validate_batch,
)

logger = logging.getLogger(__name__)

Buffer = bytes | bytearray | memoryview


class AppendInfo(NamedTuple):
    """The result of an append, as the Produce response needs it. (A NamedTuple: one per batch appended, and a
    frozen dataclass costs three times as much to make.)

    `duplicate` means the batch was an idempotent producer's retry of one already in the log: nothing was written
    and the offsets are the original ones.
    """

    base_offset: int
    last_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    duplicate: bool = False


@dataclass(slots=True)
class FlushPlan:
    """What one flush must make durable, captured on the trio thread by `PartitionLog.begin_flush`.

    `execute` may run in a worker thread: it touches only duplicated descriptors (closing the originals meanwhile
    is safe) and the sealed segments' index files, under each segment's lock.

    A plan begun with `borrow=True` holds the segments' own descriptors instead, valid only until the trio thread
    next awaits: for an AIO fsync submitted at once (io_submit takes its own reference to each file), which spares
    a dup and a close per log per flush. Anything else first makes them its own with `own`.
    """

    directory: Path
    log_end_offset: int
    truncations: int
    directory_changes: int
    sync_directory: bool
    data_fds: list[int] = field(default_factory=list)
    sealed: list[tuple[LogSegment, int]] = field(default_factory=list)
    borrowed: bool = False

    def execute(self) -> None:
        """fsync the data, then write the sealed segments' indexes, then fsync the directory. Raises OSError."""
        try:
            for fd in self.data_fds:
                os.fsync(fd)
            self.finish()
        finally:
            self.close()

    @property
    def needs_finish(self) -> bool:
        """Whether there is more to do than the data's fsyncs (a segment was rolled: its indexes, the directory)."""
        return bool(self.sealed) or self.sync_directory

    def finish(self) -> None:
        """After the data's fsyncs (`data_fds`, done by the caller): the sealed segments' indexes, then the
        directory's fsync. Raises OSError."""
        wrote_indexes = False
        for segment, generation in self.sealed:
            wrote_indexes |= segment.persist_indexes(generation)
        if self.sync_directory or wrote_indexes:
            fsync_directory(self.directory)

    def own(self) -> None:
        """Replace borrowed descriptors by duplicates of them (OSError if that fails: then nothing changed)."""
        if not self.borrowed:
            return
        copies: list[int] = []
        try:
            for fd in self.data_fds:
                copies.append(os.dup(fd))
        except OSError:
            for fd in copies:
                os.close(fd)
            raise
        self.data_fds, self.borrowed = copies, False

    def close(self) -> None:
        """Close the duplicated descriptors (once their fsyncs are over); borrowed ones stay the segments'."""
        if not self.borrowed:
            for fd in self.data_fds:
                os.close(fd)
        self.data_fds = []


class MoveCount:
    """How many times the values it counts moved (shared by many logs: a periodic writer skips its pass when
    nothing moved since the last one)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class PartitionLog:
    """Use `PartitionLog.open(directory, config, now_ms)`."""

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        segments: list[LogSegment],
        log_start_offset: int,
        leader_epoch_cache: LeaderEpochCache,
    ) -> None:
        self.directory = directory
        self.config = config
        self.topic_partition: TopicPartition | None = None
        """Set by the LogManager for the logs it manages."""
        self.topic_id: uuid.UUID | None = None
        """The topic id its partition.metadata names (kbroker/log/partition_metadata.py); None if it has none yet.
        Set by the LogManager and the replica manager."""
        self.configured = True
        """False while `config` is only a stand-in (a log recovered before its topic's configs are known): retention
        and the cleaner leave the log alone until they are."""
        self._segments = segments
        self._log_start_offset = log_start_offset
        self._log_end_offset = segments[-1].next_offset
        self._high_watermark = self._log_end_offset
        self.delete_later: Callable[[Path], None] = remove_now
        """Removes the files of the segments this log lets go (renamed first); the LogManager gives its logs its
        FileDeleter's, which unlinks them off the event loop."""
        self.high_watermark_moves = MoveCount()
        """Counts this log's high watermark moves; the LogManager gives all its logs one shared count (the high
        watermark checkpoint skips a pass when nothing moved)."""
        self.recovery_point = self._log_end_offset
        self.offline = False
        self._out_of_space = False  # the last append found the disk full (said once in the log)
        self.closed = False
        self.producer_state = ProducerStateManager()
        self.leader_epoch_cache = leader_epoch_cache
        # Sealed segments whose data or index files are not yet durable; the next flush takes care of them.
        self._unflushed_sealed: list[LogSegment] = []
        # Counters that let a flush that ran concurrently with a truncation or a roll know what it covered.
        self._truncations = 0
        self._directory_changes = 0
        self._directory_changes_flushed = 0
        self._cleaner_checkpoint = 0
        # Cleaned segments being swapped in (see begin_segment_swap): their old segments must stay put meanwhile.
        self._pending_swap: SegmentSwap | None = None

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        if offset != self._high_watermark:
            self._high_watermark = offset
            self.high_watermark_moves.value += 1

    # ---- opening and recovery -------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls, directory: Path, config: LogConfig, now_ms: int, *, sync_directory: bool = True
    ) -> PartitionLog:
        """Open (creating if needed) and recover the log in `directory` (see kbroker/log/loader.py; with
        `sync_directory` False the caller fsyncs the directory before the first append, see `load_segments`)."""
        loaded = load_segments(directory, config, now_ms, sync_directory=sync_directory)
        log = cls(directory, config, loaded.segments, loaded.log_start_offset, loaded.leader_epoch_cache)
        log._cleaner_checkpoint = loaded.cleaner_checkpoint
        cache = loaded.leader_epoch_cache
        if loaded.rebuild_leader_epochs or log._last_epoch() > cache.latest_epoch:
            # An unreadable checkpoint, or one that lacks the epoch of the last batch: a power cut took an entry that
            # was written without fsync (an empty log's, see Partition.make_leader) while records appended at that
            # epoch and fsynced later survived. Without it a follower could not find where it diverges from its
            # leader (OffsetForLeaderEpoch) and would keep records the leader never had.
            for _, _, header in log._headers_from(log.log_start_offset):
                cache.assign(header.partition_leader_epoch, header.base_offset)
        cache.truncate_from_end(log.log_end_offset)
        cache.truncate_from_start(log.log_start_offset)
        log._load_producer_state(rebuild_txn_indexes=loaded.recovered)
        return log

    def _last_epoch(self) -> int:
        """The leader epoch of the log's last batch (UNDEFINED_EPOCH for an empty log)."""
        for segment in reversed(self._segments):
            if segment.next_offset > max(segment.base_offset, self._log_start_offset):
                found = segment.find_batch(segment.next_offset - 1)
                return found[1].partition_leader_epoch if found is not None else UNDEFINED_EPOCH
        return UNDEFINED_EPOCH

    def _load_producer_state(self, rebuild_txn_indexes: list[LogSegment] | None = None) -> None:
        """Producer state from the newest snapshot and the batches after it. Segments in `rebuild_txn_indexes`
        (scanned by recovery) get their aborted transactions back from the markers replayed, so the replay starts
        no later than the first of them: from an older snapshot, or from the log's start."""
        loaded = load_latest_snapshot(self.directory, self._log_end_offset)
        rebuild = {id(segment) for segment in rebuild_txn_indexes or ()}
        if rebuild:
            first_rebuilt = min(s.base_offset for s in self._segments if id(s) in rebuild)
            if loaded is not None and loaded[0] > first_rebuilt:
                loaded = load_latest_snapshot(self.directory, first_rebuilt, delete_above=False)
        if loaded is None:
            start, state = self._segments[0].base_offset, ProducerStateManager()
        else:
            start, state = loaded
        self.producer_state = state
        for segment, position, header in self._headers_from(start):
            if header.producer_id < 0:
                continue
            marker = None
            if header.is_control:
                marker = read_end_txn_marker(segment.read_batch(position, header.size))
            self._update_producer_state(
                header,
                header.base_offset,
                header.max_timestamp,
                marker,
                segment if id(segment) in rebuild else None,
            )

    def _update_producer_state(
        self,
        header: RecordBatch,
        base_offset: int,
        max_timestamp: int,
        marker: EndTxnMarker | None,
        index_segment: LogSegment | None,
    ) -> None:
        """Record an appended batch of a producer; a marker that aborts a transaction goes into the transaction
        index of `index_segment` (the segment it was written to), if given."""
        state = self.producer_state
        if not header.is_control:
            state.update(header, base_offset, max_timestamp)
            return
        if marker is None:
            return  # a control batch of another kind: Kafka ignores those too
        completed = state.complete_txn(
            header.producer_id,
            header.producer_epoch,
            marker.coordinator_epoch,
            marker.commit,
            base_offset,
            max_timestamp,
        )
        if completed is not None and completed.is_aborted and index_segment is not None:
            index_segment.aborted_txns.append(
                AbortedTxn(
                    completed.producer_id,
                    completed.first_offset,
                    completed.last_offset,
                    state.last_stable_offset_after(completed),
                )
            )

    def _headers_from(self, offset: int) -> Iterator[tuple[LogSegment, int, RecordBatch]]:
        """(segment, position, header) of every batch whose last offset is >= offset, in log order."""
        for segment in self._segments:
            if segment.next_offset <= offset:
                continue
            start = 0
            if segment.base_offset < offset:
                found = segment.find_batch(offset)
                if found is None:
                    continue
                start = found[0]
            for position, header in scan_batches(segment.fd, start, segment.size, whole=False):
                yield segment, position, header

    # ---- offsets --------------------------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def segments(self) -> list[LogSegment]:
        """For inspection (tests, the log cleaner); do not modify."""
        return self._segments

    @property
    def cleaner_checkpoint(self) -> int:
        """The log cleaner's first dirty offset (see CLEANER_CHECKPOINT_FILE); may lie below the log start."""
        return self._cleaner_checkpoint

    @property
    def truncations(self) -> int:
        """How many times the log was truncated since it was opened."""
        return self._truncations

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def last_stable_offset(self) -> int:
        """The end of what read_committed consumers may read: the high watermark, or the first offset of the oldest
        transaction that is undecided or whose marker is not below the high watermark yet."""
        hw = self.high_watermark
        first_unstable = self.producer_state.first_unstable_offset(hw)
        return hw if first_unstable is None else min(first_unstable, hw)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions with records in [fetch_offset, upper_bound), for a read_committed fetch."""
        start = self._segment_index(fetch_offset)
        return collect_aborted((s.aborted_txns for s in self._segments[start:]), fetch_offset, upper_bound)

    def advance_high_watermark(self, offset: int) -> bool:
        """Move the high watermark forward (never past the log end, never back); returns whether it moved."""
        offset = min(offset, self._log_end_offset)
        if offset <= self.high_watermark:
            return False
        self.high_watermark = offset
        return True

    # ---- appending ------------------------------------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self.offline:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {self.name} is offline after a disk error"
            )
        if self.closed:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"the log of {self.name} is closed")

    def _go_offline(self, error: BaseException) -> KafkaError:
        """A write or fsync failed: whatever the kernel did with the data is unknown, so stop using this log (a
        later fsync could succeed without the lost pages; never retry and acknowledge).
        """
        if not self.offline:
            logger.error("%s: disk error, taking the log offline: %s", self.name, error)
        self.offline = True
        return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"disk error on {self.name}: {error}")

    def append_as_leader(
        self,
        records: Buffer,
        leader_epoch: int,
        now_ms: int,
        *,
        from_client: bool = True,
        verification_required: bool = False,
        verification_guard: VerificationGuard | None = None,
    ) -> AppendInfo:
        """Append the `records` of one partition of a Produce request: exactly one batch.

        Validates it (CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE), applies the
        idempotent producer rules (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, or a duplicate answered with
        its original offsets) and the transactional ones (INVALID_TXN_STATE, see producer_state.py), assigns
        offsets, stamps `leader_epoch` and, for LogAppendTime topics, `now_ms`, and writes the batch (no fsync).
        Raises KafkaError. A bytearray (or a writable view, e.g. of the request's buffer) is modified in place and
        written without a copy; anything else is copied. Work is per batch, never per
        record (except for compacted topics, which need every record's key). `from_client` is False for batches the
        broker writes itself (coordinators): their sequence numbers are not checked.
        """
        self._check_usable()
        buf = records if _writable(records) else bytearray(records)
        size = len(buf)
        if size < RECORD_BATCH_OVERHEAD:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                "a produce request must carry exactly one record batch per partition",
            )
        batch = RecordBatch(buf)
        # (Its base_offset and partition_leader_epoch are the producer's, and set below: not read from it.)
        header = batch.header()
        if header.size != size:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                "a produce request must carry exactly one record batch per partition",
            )
        problem = validate_batch(batch, header)
        if problem is not None:
            raise KafkaError(problem.code, problem.message)
        config = self.config
        if size > config.max_message_bytes:
            raise KafkaError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"record batch of {size} bytes exceeds max.message.bytes {config.max_message_bytes}",
            )
        if size > config.segment_bytes:
            raise KafkaError(
                ErrorCode.RECORD_LIST_TOO_LARGE,
                f"record batch of {size} bytes exceeds segment.bytes {config.segment_bytes}",
            )
        attributes = header.attributes
        if attributes & CONTROL_MASK:
            raise KafkaError(ErrorCode.INVALID_RECORD, "clients may not write control batches")
        if config.compact_enabled:
            _check_keys(batch)
        producer_id = header.producer_id
        if attributes & TRANSACTIONAL_MASK and producer_id < 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, "a transactional batch needs a producer id")
        if producer_id >= 0:
            original = self.producer_state.check_append(
                header,
                check_sequence=from_client,
                verification_required=verification_required,
                verification_guard=verification_guard,
            )
            if original is not None:
                return AppendInfo(
                    original.first_offset, original.last_offset, -1, self._log_start_offset, True
                )
        base_offset = self._log_end_offset
        batch.base_offset = base_offset
        batch.partition_leader_epoch = leader_epoch
        if config.log_append_time:
            batch.set_log_append_time(now_ms)
            log_append_time = max_timestamp = now_ms
        else:
            log_append_time = -1
            max_timestamp = header.max_timestamp
        last_offset = base_offset + header.last_offset_delta
        self._append(buf, base_offset, last_offset, max_timestamp, leader_epoch, now_ms)
        if producer_id >= 0:
            self.producer_state.update(header, base_offset, max_timestamp)
        return AppendInfo(base_offset, last_offset, log_append_time, self._log_start_offset)

    def append_end_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        leader_epoch: int,
        now_ms: int,
    ) -> AppendInfo:
        """Write a COMMIT or ABORT marker for the producer (WriteTxnMarkers, as the partition's leader). Refused with
        INVALID_PRODUCER_EPOCH for an epoch older than the producer's, TRANSACTION_COORDINATOR_FENCED for an older
        coordinator epoch than the last marker's. Written even if the producer has no open transaction here (a
        partition added to a transaction that sent it nothing, or a retry), as Kafka does."""
        self._check_usable()
        self.producer_state.check_marker(producer_id, producer_epoch, coordinator_epoch)
        buf = build_end_txn_marker(
            producer_id, producer_epoch, coordinator_epoch, commit, now_ms, leader_epoch
        )
        batch = RecordBatch(buf)
        base_offset = self._log_end_offset
        batch.base_offset = base_offset
        if self.config.log_append_time:
            batch.set_log_append_time(now_ms)
        self._append(buf, base_offset, base_offset, now_ms, leader_epoch, now_ms)
        self._update_producer_state(
            batch, base_offset, now_ms, EndTxnMarker(commit, coordinator_epoch), self._segments[-1]
        )
        return AppendInfo(base_offset, base_offset, -1, self._log_start_offset)

    def append_as_follower(self, records: Buffer, now_ms: int) -> AppendInfo | None:
        """Append batches fetched from the leader, keeping their offsets and leader epochs. A partial batch at the
        end (Kafka's fetch responses may end with one) is ignored. Returns None if there was no whole batch.
        """
        self._check_usable()
        first_offset = last_offset = -1
        for batch in iter_batches(records):
            if batch.magic != 2 or not batch.verify_crc():
                raise KafkaError(
                    ErrorCode.CORRUPT_MESSAGE, f"corrupt batch at offset {batch.base_offset} from the leader"
                )
            if batch.base_offset < self._log_end_offset:
                raise KafkaError(
                    ErrorCode.UNKNOWN_SERVER_ERROR,
                    f"batch at offset {batch.base_offset} is below the log end offset {self._log_end_offset}",
                )
            self._append(
                batch.buf,
                batch.base_offset,
                batch.last_offset,
                batch.max_timestamp,
                batch.partition_leader_epoch,
                now_ms,
            )
            if batch.producer_id >= 0:
                marker = read_end_txn_marker(batch) if batch.is_control else None
                self._update_producer_state(
                    batch, batch.base_offset, batch.max_timestamp, marker, self._segments[-1]
                )
            if first_offset < 0:
                first_offset = batch.base_offset
            last_offset = batch.last_offset
        if first_offset < 0:
            return None
        return AppendInfo(first_offset, last_offset, -1, self._log_start_offset)

    def _append(
        self,
        data: Buffer,
        base_offset: int,
        last_offset: int,
        max_timestamp: int,
        leader_epoch: int,
        now_ms: int,
    ) -> None:
        try:
            self._maybe_roll(len(data), last_offset, now_ms)
            if leader_epoch > self.leader_epoch_cache.latest_epoch:
                self.leader_epoch_cache.assign(leader_epoch, base_offset)
            self._segments[-1].append(data, last_offset, max_timestamp, now_ms)
        except OSError as e:
            if out_of_space(e) and not isinstance(e, TornAppend):
                # Each step above undoes itself on failure: the log is as before, and serves again (appends
                # included) as soon as there is space. Kafka takes the log directory offline until a restart.
                if not self._out_of_space:
                    logger.error("%s: no space left on the disk: refusing appends until there is", self.name)
                    self._out_of_space = True
                raise KafkaError(
                    ErrorCode.KAFKA_STORAGE_ERROR,
                    f"no space left on the disk of {self.name}: nothing written",
                ) from e
            raise self._go_offline(e) from e
        if self._out_of_space:
            logger.info("%s: space on the disk again: appends accepted", self.name)
            self._out_of_space = False
        self._log_end_offset = last_offset + 1

    def _maybe_roll(self, size: int, last_offset: int, now_ms: int) -> None:
        active = self._segments[-1]
        if active.size == 0:
            return
        roll_base = active.roll_base_ms
        if (
            active.size + size > self.config.segment_bytes
            or (roll_base is not None and now_ms - roll_base >= self.config.segment_ms)
            or not active.fits(last_offset)
        ):
            self.roll(now_ms)

    def roll(self, now_ms: int) -> None:
        """Seal the active segment and start a new one at the log end offset (no-op if the active one is empty).

        Nothing here waits for the disk: the sealed segment's fsync and index files, and the directory fsync, are
        done by the next flush.
        """
        active = self._segments[-1]
        if active.size == 0:
            return
        try:
            # A snapshot per segment bounds how much of the log a reopen rereads; without fsync: it is a cache,
            # skipped when the disk is full.
            write_snapshot(self.directory, self._log_end_offset, self.producer_state, fsync=False)
        except OSError as e:
            if not out_of_space(e):
                raise self._go_offline(e) from e
            logger.warning(
                "%s: no space for a producer state snapshot at %d", self.name, self._log_end_offset
            )
        try:
            segment = LogSegment.create(
                self.directory, self._log_end_offset, self.config.index_interval_bytes, now_ms
            )
        except OSError as e:
            if out_of_space(e):
                raise KafkaError(
                    ErrorCode.KAFKA_STORAGE_ERROR,
                    f"no space left on the disk of {self.name} for a new segment",
                ) from e
            raise self._go_offline(e) from e
        active.seal()
        self._unflushed_sealed.append(active)
        self._segments.append(segment)
        self._directory_changes += 1

    # ---- reading --------------------------------------------------------------------------------------------------

    def _segment_index(self, offset: int) -> int:
        return max(bisect.bisect_right(self._segments, offset, key=lambda s: s.base_offset) - 1, 0)

    def read(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None = None, *, min_one_batch: bool = True
    ) -> bytes:
        """`read_records`, always as bytes (the broker's own readers: coordinators, transactions)."""
        records = self.read_records(
            fetch_offset, max_bytes, max_offset, min_one_batch=min_one_batch, sendfile=False
        )
        assert isinstance(records, bytes)
        return records

    def read_records(
        self,
        fetch_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        *,
        min_one_batch: bool = True,
        sendfile: bool = True,
    ) -> bytes | FileRecords:
        """Whole batches starting with the one that contains fetch_offset, as many as fit in max_bytes, none with
        offsets at or above max_offset (default: the high watermark). With `min_one_batch` the first batch comes
        even if it is larger than max_bytes (KIP-74: the first partition of a fetch response, so a consumer can
        always make progress). Reads one segment at most. With `sendfile`, a large read is a FileRecords (a range of the
        segment file the connection sends with sendfile: see LogSegment.read).

        OFFSET_OUT_OF_RANGE below the log start offset or above the log end offset; empty bytes at/above max_offset.
        """
        self._check_usable()
        if max_offset is None:
            max_offset = self.high_watermark
        if fetch_offset < self._log_start_offset or fetch_offset > self._log_end_offset:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"offset {fetch_offset} is outside [{self._log_start_offset}, {self._log_end_offset}] of {self.name}",
            )
        if fetch_offset >= max_offset:
            return b""
        with self._reading():
            for segment in self._segments[self._segment_index(fetch_offset) :]:
                if segment.base_offset >= max_offset:
                    break
                found = segment.find_batch(fetch_offset)
                if found is not None:
                    position, header = found
                    return segment.read(
                        position,
                        header.size,
                        max_bytes,
                        max_offset,
                        min_one_batch=min_one_batch,
                        sendfile=sendfile,
                    )
        return b""

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A read that fails (EIO) takes the log offline, as a failed write does: the request gets
        KAFKA_STORAGE_ERROR (Kafka's KafkaStorageException), never a dropped connection."""
        try:
            yield
        except OSError as e:
            raise self._go_offline(e) from e

    def bytes_available(self, fetch_offset: int, max_offset: int) -> int:
        """How many bytes of whole batches lie between fetch_offset and max_offset (exclusive), from the segments'
        sizes and indexes, without reading data: what a parked fetch compares with its min_bytes."""
        if self.offline or self.closed or fetch_offset >= max_offset or fetch_offset < self._log_start_offset:
            return 0
        total = 0
        for segment in self._segments[self._segment_index(fetch_offset) :]:
            if segment.base_offset >= max_offset:
                break
            begin = 0
            if segment.base_offset < fetch_offset:
                start = segment.find_batch(fetch_offset)
                begin = start[0] if start is not None else segment.size
            if segment.next_offset <= max_offset:
                end = segment.size
            else:
                stop = segment.find_batch(max_offset)
                end = stop[0] if stop is not None else segment.size
            total += max(end - begin, 0)
        return total

    def offset_for_timestamp(self, timestamp: int, max_offset: int | None = None) -> tuple[int, int] | None:
        """ListOffsets by time: (offset, timestamp) of the first record at or after log start whose timestamp is
        >= `timestamp`, or None if there is none below max_offset (default: the high watermark).
        """
        self._check_usable()
        with self._reading():
            return self._offset_for_timestamp(
                timestamp, self.high_watermark if max_offset is None else max_offset
            )

    def _offset_for_timestamp(self, timestamp: int, max_offset: int) -> tuple[int, int] | None:
        for segment in self._segments:
            if segment.max_timestamp < timestamp or segment.next_offset <= self._log_start_offset:
                continue
            found = segment.find_timestamp(timestamp)
            if found is None:
                continue
            for batch_segment, position, header in self._headers_from(
                max(found[1].base_offset, self._log_start_offset)
            ):
                if header.base_offset >= max_offset:
                    return None
                if header.max_timestamp < timestamp:
                    continue
                batch = batch_segment.read_batch(position, header.size)
                match = self._first_record_at_or_after(batch, timestamp, max_offset)
                if match is not None:
                    return match
            return None
        return None

    def _first_record_at_or_after(
        self, batch: RecordBatch, timestamp: int, max_offset: int
    ) -> tuple[int, int] | None:
        try:
            records = decode_records(batch)
        except CorruptRecordError:
            # A batch that passed its CRC but does not decompress: answer at batch granularity.
            offset = max(batch.base_offset, self._log_start_offset)
            return (offset, batch.max_timestamp) if offset < max_offset else None
        for record in records:
            if record.offset >= max_offset:
                return None
            if record.offset >= self._log_start_offset and record.timestamp >= timestamp:
                return record.offset, record.timestamp
        return None

    def max_timestamp_offset(self, max_offset: int | None = None) -> tuple[int, int] | None:
        """ListOffsets -3 (MAX_TIMESTAMP): (offset, timestamp) of the record with the largest timestamp (the first
        one, if several share it), or None if the log has no timestamps or that record is at/above max_offset.
        """
        self._check_usable()
        if max_offset is None:
            max_offset = self.high_watermark
        best: LogSegment | None = None
        for segment in self._segments:
            if segment.max_timestamp >= 0 and (best is None or segment.max_timestamp > best.max_timestamp):
                best = segment
        if best is None:
            return None
        with self._reading():
            found = best.find_batch(best.offset_of_max_timestamp)
            if found is None:
                return None
            position, header = found
            return self._first_record_at_or_after(
                best.read_batch(position, header.size), best.max_timestamp, max_offset
            )

    # ---- truncation and retention ---------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Remove every batch at or above `offset` (a batch containing it goes whole: pass a batch boundary). For a
        follower whose log diverged from the new leader's. Durable before it returns (later appends reuse offsets).
        """
        if offset >= self._log_end_offset:
            return
        self._finish_pending_swap()
        if offset <= self._segments[0].base_offset:
            self.truncate_fully_and_start_at(offset)
            return
        try:
            self._truncations += 1
            self._lower_cleaner_checkpoint(offset)
            while self._segments[-1].base_offset >= offset:
                self._forget_segment(self._segments.pop())
            active = self._segments[-1]
            active.truncate_to(offset)
            if active in self._unflushed_sealed:
                self._unflushed_sealed.remove(active)
            os.fsync(active.fd)
            fsync_directory(self.directory)
        except OSError as e:
            raise self._go_offline(e) from e
        self._log_end_offset = active.next_offset
        self._log_start_offset = min(self._log_start_offset, self._log_end_offset)
        self.high_watermark = min(self.high_watermark, self._log_end_offset)
        self.recovery_point = min(self.recovery_point, self._log_end_offset)
        self.leader_epoch_cache.truncate_from_end(self._log_end_offset)
        delete_snapshots_above(self.directory, self._log_end_offset)
        self._load_producer_state()

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete everything and restart the log, empty, at `offset` (a follower far behind the leader's log start)."""
        self._finish_pending_swap()
        try:
            self._truncations += 1
            self._lower_cleaner_checkpoint(offset)
            # An empty segment's creation time matters to nothing (its first append sets its times); the last known
            # modification time spares this method a clock.
            last_modified_ms = self._segments[-1].last_modified_ms if self._segments else 0
            while self._segments:
                self._forget_segment(self._segments.pop())
            self._segments.append(
                LogSegment.create(self.directory, offset, self.config.index_interval_bytes, last_modified_ms)
            )
            delete_snapshots_above(self.directory, -1)
            self._write_log_start_offset(offset)
            fsync_directory(self.directory)
        except OSError as e:
            raise self._go_offline(e) from e
        self._log_start_offset = self._log_end_offset = offset
        self.high_watermark = self.recovery_point = offset
        self.leader_epoch_cache.clear()
        self.producer_state = ProducerStateManager()

    def _lower_cleaner_checkpoint(self, offset: int) -> None:
        """Data at and above `offset` is about to be replaced, so it no longer counts as cleaned. The file goes
        (the caller's directory fsync makes that durable): a missing checkpoint only means a full cleaning next.
        """
        if self._cleaner_checkpoint > offset:
            self._cleaner_checkpoint = offset
            (self.directory / CLEANER_CHECKPOINT_FILE).unlink(missing_ok=True)

    def _forget_segment(self, segment: LogSegment) -> None:
        if segment in self._unflushed_sealed:
            self._unflushed_sealed.remove(segment)
        doomed = segment.delete()
        if doomed is not None:
            self.delete_later(doomed)

    def apply_retention(self, now_ms: int) -> int:
        """Delete old segments: by retention.ms (a segment's largest timestamp), by retention.bytes, and those wholly
        below the log start offset. Never data at or above the high watermark. The active segment goes too when it
        qualifies and every record in it is below the high watermark, as in Kafka: a new, empty one is rolled at the
        log end first, so a topic whose records are all expired ends up empty with its offsets kept.
        Returns how many segments were deleted.
        """
        if self.offline or self.closed or self._pending_swap is not None:
            # (segments being replaced by the cleaner stay until the swap is installed; the next pass deletes them)
            return 0
        config = self.config
        by_time = config.delete_enabled and config.retention_ms >= 0
        by_size = config.delete_enabled and config.retention_bytes >= 0
        total = self.size_in_bytes
        deleted = 0
        while True:
            oldest, is_active = self._segments[0], len(self._segments) == 1
            next_base = self._log_end_offset if is_active else self._segments[1].base_offset
            if (is_active and oldest.size == 0) or next_base > self.high_watermark:
                break
            if not (
                next_base <= self._log_start_offset
                or (by_time and now_ms - oldest.largest_timestamp() > config.retention_ms)
                or (by_size and total - oldest.size >= config.retention_bytes)
            ):
                break
            if is_active:
                # The log always keeps a segment: its offsets go on from the log end, even after a crash, so the
                # new segment is durable before the old one goes. On a full disk, the next pass tries again.
                try:
                    self.roll(now_ms)
                except KafkaError:
                    if self.offline:
                        raise
                    break
                try:
                    fsync_directory(self.directory)
                except OSError as e:
                    raise self._go_offline(e) from e
            total -= oldest.size
            self._forget_segment(self._segments.pop(0))
            deleted += 1
        if deleted:
            self._log_start_offset = max(self._log_start_offset, self._segments[0].base_offset)
            self._after_log_start_moved()
        return deleted

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` (at most the high watermark) and delete the
        segments wholly below it. Returns the new log start offset.
        """
        self._check_usable()
        if offset > self.high_watermark:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"cannot move the log start offset of {self.name} to {offset}, above the high watermark "
                f"{self.high_watermark}",
            )
        if offset > self._log_start_offset:
            try:
                self._write_log_start_offset(offset)
            except OSError as e:
                raise self._go_offline(e) from e
            self._log_start_offset = offset
            self._after_log_start_moved()
            # (while the cleaner swaps segments, they stay: the next retention pass deletes them)
            while (
                self._pending_swap is None
                and len(self._segments) > 1
                and self._segments[1].base_offset <= offset
            ):
                self._forget_segment(self._segments.pop(0))
        return self._log_start_offset

    def _after_log_start_moved(self) -> None:
        try:
            self.leader_epoch_cache.truncate_from_start(self._log_start_offset)
        except OSError as e:
            raise self._go_offline(e) from e

    def _write_log_start_offset(self, offset: int) -> None:
        replace_file(
            self.directory / LOG_START_OFFSET_FILE, f"{offset}\n".encode(), fsync=True, fsync_dir=True
        )

    # ---- log cleaner hooks ----------------------------------------------------------------------------------------

    def begin_segment_swap(self, groups: list[CleanedGroup], cleaner_checkpoint: int) -> SegmentSwap | None:
        """Start swapping cleaned segments in for the segments they replace (the log cleaner's commit; trio
        thread). Returns None, changing nothing, if the log changed since the cleaner read those segments (closed,
        offline, truncated, segments deleted by retention): the caller then deletes the `.cleaned` files.

        Otherwise the old segments are pinned until `end_segment_swap`: retention and DeleteRecords leave them in
        place, a truncation or close waits for the swap's file work and installs it first, and no flush writes
        their index files any more. Reads go on from them meanwhile (their descriptors stay open).
        Run `SegmentSwap.execute` next (any thread), then `end_segment_swap` (trio thread).
        """
        if self.closed or self.offline or not groups or self._pending_swap is not None:
            return None
        start = next((i for i, s in enumerate(self._segments) if s is groups[0].old[0]), None)
        if start is None:
            return None
        position = start
        for group in groups:
            for segment, generation in zip(group.old, group.generations, strict=True):
                if (
                    position >= len(self._segments) - 1  # never the active segment
                    or self._segments[position] is not segment
                    or segment.deleted
                    or segment.generation != generation
                ):
                    return None
                position += 1
        replaced = {id(segment) for group in groups for segment in group.old}
        for group in groups:
            for segment in group.old:
                segment.mark_replaced()
        self._unflushed_sealed = [s for s in self._unflushed_sealed if id(s) not in replaced]
        swap = SegmentSwap(self.directory, groups, cleaner_checkpoint)
        self._pending_swap = swap
        return swap

    def end_segment_swap(self, swap: SegmentSwap) -> list[Path]:
        """Install the cleaned segments after `swap.execute` (trio thread; a second call does nothing). Returns the
        `.deleted` files of the old segments, for the caller to unlink off the event loop. Raises KafkaError, taking
        the log offline, if the file work failed: memory and disk may then disagree, and only a restart (whose
        recovery finishes or undoes the swap) knows which segments are current.

        Closing the old segments at once is safe: nothing keeps using a segment's descriptor across a trio
        checkpoint (`read` copies with pread within one synchronous call; flushes and the cleaner work on
        duplicated descriptors). The cleaned segments go through the next flush, which writes their index files
        (their data is already fsynced).
        """
        if swap.installed:
            return swap.doomed
        swap.installed = True
        if self._pending_swap is swap:
            self._pending_swap = None
        if swap.error is not None or not swap.completed:
            for group in swap.groups:
                group.new.close()
            raise self._go_offline(swap.error or OSError("the swap of cleaned segments was interrupted"))
        old = [segment for group in swap.groups for segment in group.old]
        start = next(i for i, s in enumerate(self._segments) if s is old[0])
        self._segments[start : start + len(old)] = [group.new for group in swap.groups]
        for segment in old:
            segment.close()
        self._unflushed_sealed.extend(group.new for group in swap.groups)
        self._set_cleaner_checkpoint(swap.cleaner_checkpoint)
        return swap.doomed

    def _finish_pending_swap(self) -> None:
        """Before a truncation or a close: wait for the cleaner's file work (rare, and short) and install it, so
        that they act on the segments that are on disk.
        """
        swap = self._pending_swap
        if swap is not None:
            swap.done.wait()
            self.end_segment_swap(swap)

    def _set_cleaner_checkpoint(self, offset: int) -> None:
        self._cleaner_checkpoint = offset
        try:
            replace_file(self.directory / CLEANER_CHECKPOINT_FILE, f"{offset}\n".encode(), fsync=False)
        except OSError:
            # Harmless: an older checkpoint on disk only means more work for the next cleaning after a restart.
            logger.warning("%s: could not write the cleaner checkpoint", self.name, exc_info=True)

    # ---- durability -----------------------------------------------------------------------------------------------

    def begin_flush(self, *, borrow: bool = False) -> FlushPlan:
        """Capture what a flush must make durable (everything up to the current log end offset). Runs on the trio
        thread; pass the plan to `FlushPlan.execute` (any thread), then to `end_flush` (trio thread). With
        `borrow`, the plan holds the segments' own descriptors (see FlushPlan).
        """
        self._check_usable()
        plan = FlushPlan(
            directory=self.directory,
            log_end_offset=self._log_end_offset,
            truncations=self._truncations,
            directory_changes=self._directory_changes,
            sync_directory=self._directory_changes != self._directory_changes_flushed,
            data_fds=[segment.fd for segment in self._unflushed_sealed],
            borrowed=True,
        )
        plan.data_fds.append(self._segments[-1].fd)
        if not borrow:
            try:
                plan.own()
            except OSError as e:
                raise self._go_offline(e) from e
        if self._unflushed_sealed:
            plan.sealed = [(segment, segment.generation) for segment in self._unflushed_sealed]
        return plan

    def end_flush(self, plan: FlushPlan) -> None:
        """The plan executed without error: advance the recovery point (unless the log was truncated meanwhile,
        in which case the plan's offsets may name different data).
        """
        if plan.truncations == self._truncations:
            self.recovery_point = max(self.recovery_point, plan.log_end_offset)
        if plan.sealed:
            done = {id(segment) for segment, _ in plan.sealed}
            self._unflushed_sealed = [s for s in self._unflushed_sealed if id(s) not in done]
        self._directory_changes_flushed = max(self._directory_changes_flushed, plan.directory_changes)

    def fail_flush(self, error: BaseException) -> KafkaError:
        """The plan's execution raised: the log goes offline. Returns the error to give the waiters."""
        return self._go_offline(error)

    def flush(self) -> None:
        """fsync everything written so far, on this thread. Raises KafkaError (and goes offline) on a disk error."""
        plan = self.begin_flush()
        try:
            plan.execute()
        except OSError as e:
            raise self.fail_flush(e) from e
        self.end_flush(plan)

    def close(self, clean: bool = True) -> None:
        """Close the files. A clean close first makes everything durable and writes the active segment's indexes
        and a producer state snapshot, so the next open trusts them instead of scanning the last segment.
        """
        if self.closed:
            return
        try:
            self._finish_pending_swap()
        except KafkaError:
            clean = False
        if clean and not self.offline:
            try:
                self.flush()
                active = self._segments[-1]
                active.seal()
                active.persist_indexes(active.generation)
                write_snapshot(self.directory, self._log_end_offset, self.producer_state, fsync=True)
                fsync_directory(self.directory)
            except (OSError, KafkaError):
                logger.warning(
                    "%s: unclean close, the next open will recover the log", self.name, exc_info=True
                )
        for segment in self._segments:
            segment.close()
        self.closed = True


def _writable(records: Buffer) -> bool:
    return isinstance(records, bytearray) or (isinstance(records, memoryview) and not records.readonly)


class InvalidRecords(CodedError):
    """Records of a well-formed batch that fail validation (Kafka's RecordValidationException): a producer hears why,
    with the log start offset (KIP-467); a malformed batch (InvalidRecordException) hears neither."""

    error_code = ErrorCode.INVALID_RECORD


def _check_keys(batch: RecordBatch) -> None:
    """Compacted topics keep the latest record per key, so a record without a key could never be cleaned."""
    try:
        records = decode_records(batch)
    except CorruptRecordError as e:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(e)) from e
    if any(record.key is None for record in records):
        raise InvalidRecords("compacted topic cannot accept a record without a key")
