"""The log cleaner: compaction by key for topics with cleanup.policy=compact (`__consumer_offsets` among them).

A compacted log keeps, for every key, at least its latest record; older records of a key are removed, and so are
tombstones (null values) once they are older than delete.retention.ms. Offsets never change: kept records keep
their offsets and the gaps stay. The cleaner never writes to a segment in use: it writes new files and swaps them in.

One cleaning of one log (the dirtiest eligible one; one at a time):

1. Plan, on the trio thread (`plan_cleaning`, metadata only, no I/O but `dup`). The cleanable segments are a
   prefix of the sealed ones: each wholly below the high watermark and, with min.compaction.lag.ms, old enough;
   never the active segment. Those after the checkpoint (`PartitionLog.cleaner_checkpoint`) are dirty; everything
   before it holds at most one record per key. The log is eligible when dirty bytes / cleanable bytes reaches
   min.cleanable.dirty.ratio. Each segment's descriptor is duplicated, so the work can read it even if the log
   closes or deletes the segment meanwhile.
2. Work, in a worker thread (`CleaningPlan.execute`), so produce and fetch go on. Pass 1 maps key -> latest
   offset over the dirty segments (up to `max_map_keys`: a larger dirty range is cleaned over several rounds).
   Pass 2 rewrites every cleanable segment up to the end of that range into `<base>.log.cleaned` files, keeping a
   record iff no later offset of its key is in the map (records of the clean part whose key is not in the map are
   the only ones of their key), dropping tombstones whose segment is older than delete.retention.ms (by its
   newest record timestamp and its last write, whichever is later). Small
   results are grouped into one segment of at most segment.bytes. Then `cleaner-gaps-below` is raised, and all
   of it fsynced.
3. Commit. On the trio thread, `PartitionLog.begin_segment_swap` checks that the log did not change under the
   cleaner and pins the old segments; in a worker thread, `SegmentSwap.execute` does the renames and directory
   fsyncs that make the swap crash-safe; on the trio thread again, `end_segment_swap` puts the cleaned segments
   in the log's list and moves the checkpoint to the end of the range. Readers never wait for any of it.
4. The replaced files are handed to the log's `delete_later` (kbroker/log/deleter.py: unlinked in a worker thread).

Batches: a batch whose records all stay is copied byte for byte. One that loses some is rebuilt with the kept
records at their offsets, keeping its base offset and last offset delta (so its producer's last sequence number
stays right), its producer id, epoch and base sequence, timestamp type, partition leader epoch and compression
codec. One that loses all its records is dropped, even an idempotent producer's: producer state is kept by the
snapshots written at every roll, so a batch below the active segment is not needed to rebuild it.
Control batches, and batches that pass their CRC but do not decode, are copied unchanged. Records without a key
(possible only if the topic was switched from cleanup.policy=delete) are dropped, as Kafka does.

Transactions: the cleanable range ends at the last stable offset too, so every transaction with records in it has
ended. The batches of aborted transactions (found through the transaction indexes) are left out of the offset map,
so an aborted record never displaces a committed one, and are dropped. Transaction markers are always kept, with
the transaction index entries of the segments they are in: a read_committed consumer can always tell where an
aborted transaction ended (Kafka removes markers after delete.retention.ms once their transaction's records are
gone; kbroker keeps them, docs/kafka-differences.md).
"""

from __future__ import annotations

import itertools
import logging
import os
import struct
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import trio

from kbroker.log.config import LogConfig
from kbroker.log.files import fsync_directory, replace_file
from kbroker.log.loader import CLEANER_GAPS_FILE, read_offset_file
from kbroker.log.partition_log import PartitionLog
from kbroker.log.segment import CLEANED_SUFFIX, LogSegment, scan_batches
from kbroker.log.segment_swap import CleanedGroup
from kbroker.log.txn_index import AbortedTxn
from protocol.records import (
    INT32_MAX,
    LAST_OFFSET_DELTA_OFFSET,
    CorruptRecordError,
    Record,
    RecordBatch,
    build_batch,
    decode_records,
)

logger = logging.getLogger(__name__)

# Pass 1's map holds bytes keys in a dict: about 100 bytes per key plus the key, so a million keys is ~150 MB.
# A dirty range with more keys is cleaned over several rounds (the map may overshoot by one segment's keys).
DEFAULT_MAX_MAP_KEYS = 1_000_000
# A log whose cleaning failed (a disk error, say) is left alone this long, so it cannot starve the others.
FAILURE_BACKOFF_MS = 60_000

_I32 = struct.Struct(">i")


class CleaningCancelled(Exception):
    """The cleaner task was cancelled (broker shutdown) while the worker was busy."""


@dataclass(frozen=True, slots=True)
class DirtyState:
    """How much of a log is cleanable and how much of that is dirty."""

    segments: list[
        tuple[LogSegment, int]
    ]  # the cleanable segments with their end offsets (the next base offset)
    first_dirty_offset: int
    dirty_bytes: int
    cleanable_bytes: int

    @property
    def ratio(self) -> float:
        return self.dirty_bytes / self.cleanable_bytes if self.cleanable_bytes else 0.0


def dirty_state(log: PartitionLog, now_ms: int) -> DirtyState | None:
    """The cleanable prefix of `log`'s sealed segments, or None if the log is not compacted or nothing is dirty."""
    if log.closed or log.offline or not log.config.compact_enabled:
        return None
    segments = log.segments
    lag = log.config.min_compaction_lag_ms
    cleanable: list[tuple[LogSegment, int]] = []
    # Nothing at or above the last stable offset: a transaction there may still commit or abort.
    stable = log.last_stable_offset
    for segment, following in itertools.pairwise(segments):
        end = following.base_offset
        if end > stable:
            break
        # Kafka applies the lag only when set: with 0, a producer timestamp in the future does not block cleaning.
        if lag > 0 and now_ms - segment.largest_timestamp() < lag:
            break
        cleanable.append((segment, end))
    if not cleanable:
        return None
    first_dirty = max(log.cleaner_checkpoint, cleanable[0][0].base_offset)
    dirty = sum(segment.size for segment, end in cleanable if end > first_dirty)
    if dirty == 0:
        return None
    return DirtyState(cleanable, first_dirty, dirty, sum(segment.size for segment, _ in cleanable))


@dataclass(slots=True)
class _Source:
    """One old segment as the worker sees it."""

    segment: LogSegment
    generation: int
    fd: int  # a duplicate, closed by the plan
    size: int
    end_offset: int
    # The segment's age for delete.retention.ms: its newest record timestamp or its last write, whichever is
    # later, so neither old producer timestamps nor an old file can make a tombstone go early.
    tombstone_time: int
    last_modified_ms: int
    dirty: bool
    aborted_txns: list[AbortedTxn] = field(default_factory=list)
    """The segment's transaction index, which its cleaned copy keeps (the markers stay)."""


@dataclass(slots=True)
class CleaningStats:
    log: str
    first_dirty_offset: int
    end_offset: int  # the new checkpoint
    keys: int = 0  # in the offset map
    segments_before: int = 0
    segments_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    records_before: int = 0
    records_after: int = 0
    batches_rewritten: int = 0
    batches_dropped: int = 0
    seconds: float = 0.0


@dataclass(slots=True)
class CleanedLog:
    """The worker's result: cleaned segments ready to be swapped in, and the checkpoint they establish."""

    groups: list[CleanedGroup]
    end_offset: int
    stats: CleaningStats


@dataclass(slots=True)
class _Group:
    """The cleaned segment being written and the old segments it will replace."""

    segment: LogSegment
    sources: list[_Source] = field(default_factory=list)

    def finish(self) -> CleanedGroup:
        segment = self.segment
        segment.seal()
        # The cleaned data counts as old as the newest data it came from, for retention by time.
        segment.last_modified_ms = max(source.last_modified_ms for source in self.sources)
        mtime_ns = segment.last_modified_ms * 1_000_000
        os.utime(segment.fd, ns=(mtime_ns, mtime_ns))
        os.fsync(segment.fd)
        segment.aborted_txns = [txn for source in self.sources for txn in source.aborted_txns]
        return CleanedGroup(
            old=[source.segment for source in self.sources],
            generations=[source.generation for source in self.sources],
            new=segment,
            end_offset=self.sources[-1].end_offset,
        )


class CleaningPlan:
    """One cleaning of one log, captured on the trio thread by `plan_cleaning`; `execute` runs in a worker thread
    and touches only its duplicated descriptors and the cleaner's own files (`.cleaned` files, the gaps file).
    """

    def __init__(
        self,
        log_name: str,
        directory: Path,
        config: LogConfig,
        sources: list[_Source],
        first_dirty_offset: int,
        now_ms: int,
        max_map_keys: int,
        aborted_txns: list[AbortedTxn] | None = None,
    ) -> None:
        self.log_name = log_name
        self.directory = directory
        self.config = config
        self.sources = sources
        self.first_dirty_offset = first_dirty_offset
        self.now_ms = now_ms
        self.max_map_keys = max_map_keys
        # The aborted transactions' offset ranges, by producer id.
        self.aborted: dict[int, list[tuple[int, int]]] = {}
        for txn in aborted_txns or ():
            self.aborted.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
        # Set from the trio thread to make a running `execute` give up (and remove its files).
        self.stop = threading.Event()

    def close(self) -> None:
        """Close the duplicated descriptors (idempotent; `execute` does it when it ends)."""
        for source in self.sources:
            if source.fd >= 0:
                os.close(source.fd)
                source.fd = -1

    def execute(self) -> CleanedLog:
        """Both passes and the fsyncs. Raises OSError on a disk error and CleaningCancelled if stopped; either way
        the files it created are gone. The plan's descriptors are closed when it returns.
        """
        started = time.monotonic()
        written: list[LogSegment] = []
        try:
            self._remove_stale_files()
            offset_map, end_offset = self._build_offset_map()
            stats = CleaningStats(self.log_name, self.first_dirty_offset, end_offset, keys=len(offset_map))
            groups = self._rewrite(offset_map, end_offset, written, stats)
            self._raise_gaps_limit(end_offset)
            # The new files' entries, the removals and the gaps file: all durable before any commit.
            fsync_directory(self.directory)
        except BaseException:
            discard_segments(written)
            raise
        finally:
            self.close()
        stats.seconds = time.monotonic() - started
        return CleanedLog(groups, end_offset, stats)

    def _remove_stale_files(self) -> None:
        """A `.cleaned` file left by an earlier cleaning whose removal failed would make recovery take this
        cleaning's swap for an interrupted one (see SegmentSwap): none may exist when it commits.
        """
        for name in os.listdir(self.directory):
            if name.endswith(CLEANED_SUFFIX):
                (self.directory / name).unlink(missing_ok=True)

    def _batches(self, source: _Source) -> Iterator[RecordBatch]:
        for _, batch in scan_batches(source.fd, 0, source.size, whole=True):
            if self.stop.is_set():
                raise CleaningCancelled(f"cleaning of {self.log_name} cancelled")
            yield batch

    def _is_aborted(self, batch: RecordBatch) -> bool:
        """Whether `batch` holds records of an aborted transaction."""
        if not batch.is_transactional or batch.is_control:
            return False
        ranges = self.aborted.get(batch.producer_id)
        return ranges is not None and any(first <= batch.base_offset <= last for first, last in ranges)

    def _build_offset_map(self) -> tuple[dict[bytes, int], int]:
        """Pass 1: key -> latest offset over the dirty segments, and the end of the range the map covers."""
        offset_map: dict[bytes, int] = {}
        end_offset = self.first_dirty_offset
        for source in self.sources:
            if not source.dirty:
                continue
            for batch in self._batches(source):
                if batch.is_control or batch.last_offset < self.first_dirty_offset or self._is_aborted(batch):
                    continue
                records = _decode(batch, self.log_name)
                if records is None:
                    continue
                for record in records:
                    if record.key is not None and record.offset >= self.first_dirty_offset:
                        offset_map[record.key] = record.offset
            end_offset = source.end_offset
            if len(offset_map) >= self.max_map_keys:
                break
        return offset_map, end_offset

    def _rewrite(
        self, offset_map: dict[bytes, int], end_offset: int, written: list[LogSegment], stats: CleaningStats
    ) -> list[CleanedGroup]:
        """Pass 2: the cleaned copies of every cleanable segment below end_offset, grouped."""
        groups: list[CleanedGroup] = []
        group: _Group | None = None
        for source in self.sources:
            if source.end_offset > end_offset:
                break
            if group is not None and group.segment.size > 0 and self._starts_new_group(group, source):
                groups.append(group.finish())
                group = None
            if group is None:
                segment = LogSegment.create_cleaned(
                    self.directory, source.segment.base_offset, self.config.index_interval_bytes, self.now_ms
                )
                written.append(segment)
                group = _Group(segment)
            group.sources.append(source)
            stats.segments_before += 1
            stats.bytes_before += source.size
            # The delete horizon, per segment: its tombstones go once it is older than delete.retention.ms.
            drop_tombstones = self.now_ms - source.tombstone_time > self.config.delete_retention_ms
            for batch in self._batches(source):
                stats.records_before += batch.record_count
                if self._is_aborted(batch):
                    stats.batches_dropped += 1
                    continue
                cleaned = _clean_batch(batch, offset_map, drop_tombstones, self.log_name)
                if cleaned is None:
                    stats.batches_dropped += 1
                    continue
                if cleaned is not batch:
                    stats.batches_rewritten += 1
                stats.records_after += cleaned.record_count
                group.segment.append(cleaned.buf, batch.last_offset, cleaned.max_timestamp, self.now_ms)
        if group is not None:
            groups.append(group.finish())
        stats.segments_after = len(groups)
        stats.bytes_after = sum(g.new.size for g in groups)
        return groups

    def _starts_new_group(self, group: _Group, source: _Source) -> bool:
        """Whether `source`'s output goes to a new segment: the current one is full, or its index could not hold
        the offsets (they are stored relative to the base). An empty current segment always takes more.
        """
        return (
            group.segment.size + source.size > self.config.segment_bytes
            or source.end_offset - 1 - group.segment.base_offset > INT32_MAX
        )

    def _raise_gaps_limit(self, end_offset: int) -> None:
        """Recovery must accept the gaps the cleaned segments may leave below end_offset: durable before the
        commit, or a crash just after it would make recovery drop every segment after the first gap.
        """
        path = self.directory / CLEANER_GAPS_FILE
        if read_offset_file(path, -1) < end_offset:
            replace_file(path, f"{end_offset}\n".encode(), fsync=True)


def _decode(batch: RecordBatch, log_name: str) -> list[Record] | None:
    try:
        return decode_records(batch)
    except CorruptRecordError:
        logger.warning(
            "%s: batch at offset %d does not decode; the cleaner keeps it as it is",
            log_name,
            batch.base_offset,
            exc_info=True,
        )
        return None


def _keep(record: Record, offset_map: dict[bytes, int], drop_tombstones: bool) -> bool:
    if record.key is None:
        return False
    latest = offset_map.get(record.key)
    if latest is not None and latest > record.offset:
        return False
    return record.value is not None or not drop_tombstones


def _clean_batch(
    batch: RecordBatch, offset_map: dict[bytes, int], drop_tombstones: bool, log_name: str
) -> RecordBatch | None:
    """`batch` itself if every record stays, a rebuilt batch if some do, None if none does."""
    if batch.is_control:
        return batch
    records = _decode(batch, log_name)
    if records is None:
        return batch
    kept = [record for record in records if _keep(record, offset_map, drop_tombstones)]
    if len(kept) == len(records):
        return batch
    if not kept:
        return None
    rebuilt = build_batch(
        kept,
        base_offset=batch.base_offset,
        compression=batch.compression,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        timestamp_type=batch.timestamp_type,
        is_transactional=batch.is_transactional,
        partition_leader_epoch=batch.partition_leader_epoch,
    )
    # The original last offset stays (as Kafka does): the batch still accounts for the same offsets and sequences.
    _I32.pack_into(rebuilt, LAST_OFFSET_DELTA_OFFSET, batch.last_offset_delta)
    result = RecordBatch(rebuilt)
    result.write_crc()
    return result


def discard_segments(segments: Iterable[LogSegment]) -> None:
    """Close and delete cleaned segments that will not be swapped in (any thread)."""
    for segment in segments:
        segment.close()
        segment.cleaned_path.unlink(missing_ok=True)


def plan_cleaning(
    log: PartitionLog, now_ms: int, max_map_keys: int = DEFAULT_MAX_MAP_KEYS
) -> CleaningPlan | None:
    """A plan for cleaning `log` now, or None if it is not eligible (trio thread: reads the log's state)."""
    state = dirty_state(log, now_ms)
    if state is None or state.ratio < log.config.min_cleanable_dirty_ratio:
        return None
    sources: list[_Source] = []
    # A transaction with records in the cleanable range may have its marker (and so its index entry) further on.
    range_end = state.segments[-1][1]
    aborted = [
        txn for segment in log.segments for txn in segment.aborted_txns if txn.first_offset < range_end
    ]
    plan = CleaningPlan(
        log.name, log.directory, log.config, sources, state.first_dirty_offset, now_ms, max_map_keys, aborted
    )
    try:
        for segment, end in state.segments:
            sources.append(
                _Source(
                    segment=segment,
                    generation=segment.generation,
                    fd=os.dup(segment.fd),
                    size=segment.size,
                    end_offset=end,
                    tombstone_time=max(segment.max_timestamp, segment.last_modified_ms),
                    last_modified_ms=segment.last_modified_ms,
                    dirty=end > state.first_dirty_offset,
                    aborted_txns=list(segment.aborted_txns),
                )
            )
    except OSError:
        plan.close()
        raise
    return plan


def commit_cleaning(log: PartitionLog, cleaned: CleanedLog) -> list[Path] | None:
    """Swap the cleaned segments in and move the checkpoint, all on the calling thread (tests and tools; the
    broker's `LogCleaner` does the file work in a worker thread). None if the log changed meanwhile (the caller
    then discards the cleaned segments); otherwise the replaced files, for the log's `delete_later`.
    """
    swap = log.begin_segment_swap(cleaned.groups, cleaned.end_offset)
    if swap is None:
        return None
    swap.execute()
    return log.end_segment_swap(swap)


def clean_log(
    log: PartitionLog, now_ms: int, max_map_keys: int = DEFAULT_MAX_MAP_KEYS
) -> CleaningStats | None:
    """One whole cleaning on the calling thread (tests and tools; the broker uses `LogCleaner`)."""
    plan = plan_cleaning(log, now_ms, max_map_keys)
    if plan is None:
        return None
    cleaned = plan.execute()
    doomed = commit_cleaning(log, cleaned)
    if doomed is None:
        discard_segments(group.new for group in cleaned.groups)
        return None
    for path in doomed:
        log.delete_later(path)
    return cleaned.stats


class LogCleaner:
    """The background task: clean the dirtiest eligible log, again and again; sleep `backoff_ms` when none is.

    `logs` is iterated afresh each round (a LogManager does), so topics created later are picked up.
    """

    def __init__(
        self,
        logs: Iterable[PartitionLog],
        *,
        backoff_ms: int,
        max_map_keys: int = DEFAULT_MAX_MAP_KEYS,
        clock: Callable[[], int],
    ) -> None:
        self._logs = logs
        self.backoff_ms = backoff_ms
        self.max_map_keys = max_map_keys
        self._clock = clock
        self._failed_until: weakref.WeakKeyDictionary[PartitionLog, int] = weakref.WeakKeyDictionary()
        # Completed cleanings and the last one's numbers: for tests and metrics.
        self.cleanings = 0
        self.last_stats: CleaningStats | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            stats = await self.clean_dirtiest()
            if stats is None:
                await trio.sleep(self.backoff_ms / 1000)
            else:
                await trio.lowlevel.checkpoint()

    def dirtiest(self, now_ms: int) -> PartitionLog | None:
        """The eligible log with the largest dirty ratio."""
        best: PartitionLog | None = None
        best_ratio = -1.0
        for log in self._logs:
            # The cheap test first: this runs over every log each backoff, and most logs are not compacted.
            if (
                not log.config.compact_enabled
                or not log.configured
                or self._failed_until.get(log, 0) > now_ms
            ):
                continue
            state = dirty_state(log, now_ms)
            if state is None or state.ratio < log.config.min_cleanable_dirty_ratio:
                continue
            if state.ratio > best_ratio:
                best, best_ratio = log, state.ratio
        return best

    async def clean_dirtiest(self) -> CleaningStats | None:
        """Clean the dirtiest eligible log once; None if there was none (or its cleaning did not complete)."""
        now = self._clock()
        log = self.dirtiest(now)
        if log is None:
            return None
        try:
            return await self.clean(log, now)
        except Exception:
            # A disk error (OSError; KafkaError if it struck during the swap, which takes the log offline) or a log
            # the cleaner cannot make sense of: never a reason to stop the broker or to starve the other logs.
            logger.exception("%s: cleaning failed; retrying in %d ms", log.name, FAILURE_BACKOFF_MS)
            self._failed_until[log] = now + FAILURE_BACKOFF_MS
            return None

    async def clean(self, log: PartitionLog, now_ms: int) -> CleaningStats | None:
        plan = plan_cleaning(log, now_ms, self.max_map_keys)
        if plan is None:
            return None
        try:
            # Abandoned on cancellation (shutdown need not wait for a long cleaning): the stop flag makes the
            # worker remove its files and close its descriptors; recovery removes anything left.
            cleaned = await trio.to_thread.run_sync(plan.execute, abandon_on_cancel=True)
        except trio.Cancelled:
            plan.stop.set()
            raise
        swap = log.begin_segment_swap(cleaned.groups, cleaned.end_offset)
        if swap is None:
            logger.info("%s: the log changed during cleaning; discarding the result", log.name)
            await trio.to_thread.run_sync(discard_segments, [group.new for group in cleaned.groups])
            return None
        try:
            # Shielded: once begun, the swap must end (installed, or the log offline) even at shutdown; its file
            # work is a few renames and two directory fsyncs.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(swap.execute)
        finally:
            # (if the worker never ran, end_segment_swap sees an incomplete swap and takes the log offline)
            swap.done.set()
            doomed = log.end_segment_swap(swap)
        for path in doomed:
            log.delete_later(path)  # the log manager's FileDeleter: unlinked in a worker thread
        stats = cleaned.stats
        self.cleanings += 1
        self.last_stats = stats
        logger.info(
            "%s: cleaned offsets [%d, %d) (%d keys): %d segments, %d bytes, %d records -> %d segments, %d bytes, "
            "%d records in %.2f s",
            log.name,
            stats.first_dirty_offset,
            stats.end_offset,
            stats.keys,
            stats.segments_before,
            stats.bytes_before,
            stats.records_before,
            stats.segments_after,
            stats.bytes_after,
            stats.records_after,
            stats.seconds,
        )
        return stats
