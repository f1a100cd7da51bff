"""One log segment: `<base offset>.log` holding batches exactly as stored, and its two sparse indexes.

Files use Kafka's layout and names (20-digit base offset): `.log`, `.index` (int32 offset relative to the base, int32
file position; big-endian), `.timeindex` (int64 timestamp, int32 relative offset), and `.txnindex` (the aborted
transactions whose marker is in this segment, kbroker/log/txn_index.py; only for segments that have some). The
indexes live in memory and are written to disk only once the segment is sealed (rolled or closed), after its data is
fsynced: so an index file on disk always describes durable data, and a segment without index files is recovered by
scanning it (its aborted transactions are rebuilt by the log's producer state replay).

Index entries are added every `index.interval.bytes`: an offset entry maps the *last* offset of a batch to the
batch's position (as Kafka does), a time entry records the segment's largest timestamp so far and the last offset
of the batch that carried it, only when that timestamp grew.

Thread use: the trio thread owns a segment. The flusher's worker thread only fsyncs duplicated descriptors and writes
the index files of sealed segments, under `lock`; truncation and deletion take the same lock, so a worker never
resurrects the index files of a segment that changed meanwhile (`generation`) or is gone (`deleted`).
"""

from __future__ import annotations

import bisect
import os
import struct
import sys
import threading
from array import array
from collections.abc import Iterator
from pathlib import Path

from kbroker.log.files import fsync_directory, out_of_space, preallocate, replace_file, write_all
from kbroker.log.txn_index import AbortedTxn, decode_entries, encode_entries
from protocol.primitives import Splice
from protocol.records import (
    BATCH_LENGTH_OFFSET,
    INT32_MAX,
    LOG_OVERHEAD,
    MAGIC,
    RECORD_BATCH_OVERHEAD,
    RecordBatch,
    iter_batches,
)

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
INDEX_FILE_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
# The log cleaner's files (see kbroker/log/cleaner.py and partition_log.SegmentSwap):
# `<base>.log.cleaned`, a cleaned segment being written (deleted by recovery: the old segments are intact);
# `<base>-<end>.log.swap`, a cleaned segment committed to replace every segment whose base offset is in
# [base, end) (recovery finishes the swap); `<base>.log.deleted`, a replaced segment awaiting unlink.
CLEANED_SUFFIX = ".log.cleaned"
SWAP_SUFFIX = ".log.swap"
DELETED_SUFFIX = ".log.deleted"

# How much a header scan reads at once: several small batches' headers per read() without reading far ahead.
_SCAN_CHUNK = 64 * 1024
# Recovery checks CRCs, so it reads everything; larger reads amortise the syscalls.
_RECOVERY_CHUNK = 1024 * 1024

# A fetch read at least this large is answered as a FileRecords (sent with sendfile, never read into Python); a
# smaller one is read with pread: below this, two syscalls per partition (send + sendfile) cost more than a copy.
SENDFILE_MIN_BYTES = 32 * 1024
# While finding a large read's extent, batches at least this large are skipped by reading their 61-byte header only
# (one pread each); smaller ones are scanned in _SCAN_CHUNK reads, as a copy of them is cheaper than a syscall each.
_FETCH_SCAN_HEADER_ONLY = 16 * 1024

_I32 = struct.Struct(">i")
# Disk blocks reserved ahead of a busy segment's end (`LogSegment._preallocate`): an eighth of the segment or eight
# appends of the size just written, at most PREALLOCATE_MAX_BYTES, and nothing when that is under
# PREALLOCATE_MIN_BYTES (small appends: a partition that is not busy keeps no blocks it does not use).
PREALLOCATE_MIN_BYTES = 1024 * 1024
PREALLOCATE_MAX_BYTES = 8 * 1024 * 1024
_LEFTOVER_RESERVATION_BYTES = 64 * 1024

_TIME_ENTRY = struct.Struct(">qi")
_OFFSET_ENTRY_SIZE = 8


class TornAppend(OSError):
    """An append failed part way and the segment could not be cut back: its tail holds a partial batch."""


def segment_file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


def swap_file_name(base_offset: int, end_offset: int) -> str:
    """The name of a committed cleaned segment: the range it replaces is in the name, so a crash between the
    commit and the removal of the old segments can be finished by recovery alone.
    """
    return f"{base_offset:020d}-{end_offset:020d}{SWAP_SUFFIX}"


def parse_swap_file_name(name: str) -> tuple[int, int] | None:
    """(base, end) of a swap file name, or None if `name` is not one."""
    if not name.endswith(SWAP_SUFFIX):
        return None
    base, dash, end = name[: -len(SWAP_SUFFIX)].partition("-")
    if not dash or not base.isdigit() or not end.isdigit():
        return None
    return int(base), int(end)


class FileRecords(Splice):
    """Whole batches of a segment file, `size` bytes at `position`, as a fetch response carries them (Kafka's
    FileRecords): the connection sends them with os.sendfile, page cache to socket (TLS reads them with
    `materialize`). `fd` is a duplicate of the segment's descriptor, so the range stays readable if the segment is
    closed or deleted meanwhile (retention, compaction); it is closed when sent, or when the response is dropped.
    `next_offset` and `record_count` come from the batch headers, so nobody needs to read the records again."""

    __slots__ = ("fd", "next_offset", "position", "record_count", "size")

    def __init__(self, fd: int, position: int, size: int, next_offset: int, record_count: int) -> None:
        self.fd = -1
        self.fd = os.dup(fd)
        self.position = position
        self.size = size
        self.next_offset = next_offset
        self.record_count = record_count

    def __len__(self) -> int:
        return self.size

    def materialize(self) -> bytes:
        data = os.pread(self.fd, self.size, self.position)
        if len(data) != self.size:
            # truncated meanwhile (a leader become follower): the response's framing can no longer be kept
            raise OSError(f"segment range {self.position}+{self.size} was truncated before it was sent")
        return data

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()


def record_count(records: bytes | FileRecords) -> int:
    """How many records whole batches hold (from their headers)."""
    if isinstance(records, FileRecords):
        return records.record_count
    return sum(batch.record_count for batch in iter_batches(records))


def scan_batches(
    fd: int, start: int, end: int, whole: bool, header_only_after: int = _SCAN_CHUNK
) -> Iterator[tuple[int, RecordBatch]]:
    """(position, batch) for each batch in [start, end) of the file.

    With `whole` the view covers the entire batch (needed for CRC checks); otherwise only its 61-byte header, which
    is all the offsets and timestamps need; after a batch of `header_only_after` bytes or more, the next header is
    read alone (reading a whole chunk for it would mostly read records we skip). Stops at the first length that
    cannot be a batch or that runs past `end` (a torn or zero-filled tail): the caller compares the last position
    reached with `end`.
    """
    chunk = b""
    chunk_start = start
    pos = start
    read_size = _RECOVERY_CHUNK if whole else _SCAN_CHUNK
    last_size = 0
    while pos + RECORD_BATCH_OVERHEAD <= end:
        at = pos - chunk_start
        if at + RECORD_BATCH_OVERHEAD > len(chunk):
            want = RECORD_BATCH_OVERHEAD if (not whole and last_size >= header_only_after) else read_size
            chunk = os.pread(fd, min(want, end - pos), pos)
            chunk_start, at = pos, 0
            if len(chunk) < RECORD_BATCH_OVERHEAD:
                return
        size = _I32.unpack_from(chunk, at + BATCH_LENGTH_OFFSET)[0] + LOG_OVERHEAD
        if size < RECORD_BATCH_OVERHEAD or pos + size > end:
            return
        if whole:
            if at + size > len(chunk):
                chunk = os.pread(fd, min(max(read_size, size), end - pos), pos)
                chunk_start, at = pos, 0
                if len(chunk) < size:
                    return
            view = memoryview(chunk)[at : at + size]
        else:
            view = memoryview(chunk)[at : at + RECORD_BATCH_OVERHEAD]
        yield pos, RecordBatch(view)
        pos += size
        last_size = size


class LogSegment:
    """A segment's file, its in-memory indexes and the facts the log needs without reading it (size, offsets,
    largest timestamp).
    """

    __slots__ = (
        "_bytes_since_index_entry",
        "_index_offsets",
        "_index_positions",
        "_time_offsets",
        "_time_timestamps",
        "aborted_txns",
        "allocated",
        "base_offset",
        "deleted",
        "directory",
        "fd",
        "generation",
        "index_interval_bytes",
        "last_modified_ms",
        "lock",
        "max_timestamp",
        "next_offset",
        "offset_of_max_timestamp",
        "preallocating",
        "roll_base_ms",
        "sealed",
        "size",
    )

    def __init__(
        self, directory: Path, base_offset: int, fd: int, index_interval_bytes: int, now_ms: int
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.fd = fd
        self.index_interval_bytes = index_interval_bytes
        self.size = 0
        self.next_offset = base_offset
        self.max_timestamp = -1
        # last offset of the first batch that carried max_timestamp
        self.offset_of_max_timestamp = -1
        # Wall-clock time of the first append, for segment.ms. Producer timestamps are not used for this because a
        # producer replaying old data would otherwise roll a new segment for every batch.
        self.roll_base_ms: int | None = None
        self.last_modified_ms = now_ms
        self.sealed = False
        self.lock = threading.Lock()
        self.generation = 0
        self.deleted = False
        self._index_offsets = array("i")
        self._index_positions = array("i")
        self._time_timestamps = array("q")
        self._time_offsets = array("i")
        self._bytes_since_index_entry = 0
        self.aborted_txns: list[AbortedTxn] = []
        """The transactions whose ABORT marker is in this segment, in marker order (the transaction index)."""
        self.preallocating = False
        """Whether appends reserve disk blocks ahead of the end (`_preallocate`): the log's own segments do; the
        cleaner's, written once, do not."""
        self.allocated = 0
        """Where the blocks reserved ahead of `size` end (no more than `size` when none are)."""

    # ---- files ----------------------------------------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        return self.directory / segment_file_name(self.base_offset, LOG_SUFFIX)

    @property
    def index_path(self) -> Path:
        return self.directory / segment_file_name(self.base_offset, INDEX_SUFFIX)

    @property
    def time_index_path(self) -> Path:
        return self.directory / segment_file_name(self.base_offset, TIME_INDEX_SUFFIX)

    @property
    def txn_index_path(self) -> Path:
        return self.directory / segment_file_name(self.base_offset, TXN_INDEX_SUFFIX)

    def _unlink_index_files(self) -> None:
        self.index_path.unlink(missing_ok=True)
        self.time_index_path.unlink(missing_ok=True)
        self.txn_index_path.unlink(missing_ok=True)

    @classmethod
    def create(cls, directory: Path, base_offset: int, index_interval_bytes: int, now_ms: int) -> LogSegment:
        """A new, empty segment. A leftover file at this base offset can only hold offsets the log no longer has
        (they are >= the log end offset), so it is emptied.
        """
        path = directory / segment_file_name(base_offset, LOG_SUFFIX)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o644)
        segment = cls(directory, base_offset, fd, index_interval_bytes, now_ms)
        segment.preallocating = True
        segment._unlink_index_files()
        return segment

    @classmethod
    def create_cleaned(
        cls, directory: Path, base_offset: int, index_interval_bytes: int, now_ms: int
    ) -> LogSegment:
        """A new, empty segment written by the log cleaner into `<base>.log.cleaned`. Its `log_path` is still
        `<base>.log`, where `SegmentSwap` renames the file; the descriptor follows.
        """
        path = directory / segment_file_name(base_offset, CLEANED_SUFFIX)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o644)
        return cls(directory, base_offset, fd, index_interval_bytes, now_ms)

    @property
    def cleaned_path(self) -> Path:
        return self.directory / segment_file_name(self.base_offset, CLEANED_SUFFIX)

    @classmethod
    def open_existing(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> LogSegment:
        """The segment file as found; call load_indexes() or recover() next."""
        path = directory / segment_file_name(base_offset, LOG_SUFFIX)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        stat = os.fstat(fd)
        segment = cls(directory, base_offset, fd, index_interval_bytes, stat.st_mtime_ns // 1_000_000)
        segment.size = stat.st_size
        segment.preallocating = True
        # Blocks reserved ahead of the end before an unclean stop are still the file's: sealing gives them back.
        # (Any file has up to a block more than its size: only a reservation's worth more counts.)
        if stat.st_blocks * 512 > stat.st_size + _LEFTOVER_RESERVATION_BYTES:
            segment.allocated = stat.st_blocks * 512
        return segment

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> Path | None:
        """Close the segment and take its files away: the index files are removed, the log file renamed
        `<base>.log.deleted` for the caller to unlink off the event loop (kbroker/log/deleter.py: unlinking a large
        file takes long). Returns the renamed path, or None when the log file was already gone."""
        doomed = self.directory / segment_file_name(self.base_offset, DELETED_SUFFIX)
        with self.lock:
            self.deleted = True
            self.close()
            try:
                os.rename(self.log_path, doomed)
                renamed = True
            except FileNotFoundError:
                renamed = False
            self._unlink_index_files()
        return doomed if renamed else None

    def mark_replaced(self) -> None:
        """The log cleaner is replacing this segment (trio thread): a flush running in a worker thread must never
        write its index files again, since the cleaned segment at the same base offset takes their names.
        """
        with self.lock:
            self.deleted = True
            self.generation += 1

    def retire_files(self) -> Path:
        """After `mark_replaced` (any thread): rename the log file to `<base>.log.deleted`, for the caller to unlink
        later (unlinking a large file takes a while), and remove the index files. The descriptor stays open for
        reads until the log closes it. Returns the renamed path.
        """
        doomed = self.directory / segment_file_name(self.base_offset, DELETED_SUFFIX)
        with self.lock:
            os.rename(self.log_path, doomed)
            self._unlink_index_files()
        return doomed

    # ---- appending ------------------------------------------------------------------------------------------------

    def append(
        self, data: bytes | bytearray | memoryview, last_offset: int, max_timestamp: int, now_ms: int
    ) -> None:
        """Write one or more batches ending at `last_offset` whose largest timestamp is `max_timestamp`.

        If the write fails (a full disk, typically, after part of the data went in), the file is cut back to where
        it was and the error raised: the segment is as if nothing had been written. If even that fails, raises
        TornAppend: the file's tail is unknown and the log must not be used.
        """
        position = self.size
        if self.preallocating and position + len(data) > self.allocated:
            self._preallocate(position + len(data), len(data))
        try:
            write_all(self.fd, data)
        except OSError as error:
            self.allocated = position  # a truncation gives back the blocks past the end too
            try:
                os.ftruncate(self.fd, position)
            except OSError as undo_error:
                raise TornAppend(
                    f"{self.log_path}: append failed ({error}), and so did undoing it"
                ) from undo_error
            raise
        self._track(position, len(data), last_offset, max_timestamp)
        if self.roll_base_ms is None:
            self.roll_base_ms = now_ms
        self.last_modified_ms = now_ms

    def _preallocate(self, end: int, append_size: int) -> None:
        """Reserve disk blocks past `end` before writing up to it. A write into blocks the file system has not yet
        allocated makes it allocate each page's block (ext4's delayed allocation: reservation, extent status,
        buffer heads), which cost more than copying the page; into reserved blocks it is the copy. Measured here
        (writes of 256 KiB and 1 MiB into page cache the machine holds): 0.160-0.165 µs per KiB without,
        0.095-0.104 with; with an fdatasync after each MiB, 0.242 against 0.176 of the writer's CPU, and the
        machine's total (/proc/stat) no higher. The size stays the data's (FALLOC_FL_KEEP_SIZE): readers,
        recovery and Kafka's tools see only what was written."""
        ahead = min(PREALLOCATE_MAX_BYTES, max(end // 8, 8 * append_size))
        if ahead < PREALLOCATE_MIN_BYTES:
            return
        start = max(self.allocated, self.size)
        if preallocate(self.fd, start, end + ahead - start):
            self.allocated = end + ahead
        else:
            # The file system cannot, or the disk is full: plain writes from now on.
            self.preallocating = False

    def _release_preallocated(self) -> None:
        """Give back the blocks reserved past the end (a truncation to the same size does; its new modification
        time is put back, since retention and the cleaner read it)."""
        if self.allocated <= self.size or self.fd < 0:
            return
        self.allocated = self.size
        try:
            stat = os.fstat(self.fd)
            os.ftruncate(self.fd, self.size)
            os.utime(self.fd, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        except OSError:
            pass  # only space is at stake: the blocks go with the file at the latest

    def _track(self, position: int, size: int, last_offset: int, max_timestamp: int) -> None:
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self._bytes_since_index_entry > self.index_interval_bytes:
            self._index_offsets.append(last_offset - self.base_offset)
            self._index_positions.append(position)
            self._maybe_add_time_entry()
            self._bytes_since_index_entry = 0
        self._bytes_since_index_entry += size
        self.size = position + size
        self.next_offset = last_offset + 1

    def _maybe_add_time_entry(self) -> None:
        last = self._time_timestamps[-1] if self._time_timestamps else -1
        if self.max_timestamp > last:
            self._time_timestamps.append(self.max_timestamp)
            self._time_offsets.append(self.offset_of_max_timestamp - self.base_offset)

    def fits(self, last_offset: int) -> bool:
        """Whether a batch ending at last_offset can go here: index entries hold offsets relative to the base."""
        return last_offset - self.base_offset <= INT32_MAX

    def seal(self) -> None:
        """No more appends (rolled or closing): record the final largest timestamp so a reload knows it, and give
        back the disk blocks reserved past the end."""
        self._maybe_add_time_entry()
        self._release_preallocated()
        self.sealed = True

    # ---- reading --------------------------------------------------------------------------------------------------

    def find_batch(self, offset: int) -> tuple[int, RecordBatch] | None:
        """Position and header of the first batch whose last offset is >= offset, if any."""
        i = bisect.bisect_right(self._index_offsets, offset - self.base_offset) - 1
        start = self._index_positions[i] if i >= 0 else 0
        for position, header in scan_batches(self.fd, start, self.size, whole=False):
            if header.last_offset >= offset:
                return position, header
        return None

    def read(
        self,
        position: int,
        first_batch_size: int,
        max_bytes: int,
        max_offset: int,
        *,
        min_one_batch: bool = True,
        sendfile: bool = False,
    ) -> bytes | FileRecords:
        """Whole batches from `position` that fit in max_bytes, none holding offsets >= max_offset; with
        `min_one_batch`, the first one even if it is larger than max_bytes. With `sendfile`, a read of
        SENDFILE_MIN_BYTES or more is a FileRecords (its extent found from the batch headers), else the bytes.
        """
        if not min_one_batch and first_batch_size > max_bytes:
            return b""
        length = min(self.size - position, max(max_bytes, first_batch_size))
        if sendfile and length >= SENDFILE_MIN_BYTES:
            end, next_offset, count = position, -1, 0
            for at, header in scan_batches(
                self.fd, position, position + length, False, header_only_after=_FETCH_SCAN_HEADER_ONLY
            ):
                if header.last_offset >= max_offset:
                    break
                end, next_offset, count = at + header.size, header.next_offset, count + header.record_count
            if end - position >= SENDFILE_MIN_BYTES:
                try:
                    return FileRecords(self.fd, position, end - position, next_offset, count)
                except OSError:  # out of file descriptors (EMFILE): the copy path still answers
                    pass
            length = end - position  # the copy path, of exactly these batches
        data = os.pread(self.fd, length, position)
        end = 0
        for batch in iter_batches(data):
            if batch.last_offset >= max_offset or (end > 0 and end + batch.size > max_bytes):
                break
            end += batch.size
        return data if end == len(data) else data[:end]

    def read_batch(self, position: int, size: int) -> RecordBatch:
        return RecordBatch(os.pread(self.fd, size, position))

    def find_timestamp(self, timestamp: int) -> tuple[int, RecordBatch] | None:
        """Position and header of the first batch whose max_timestamp is >= timestamp, if any."""
        # Time entry (T, O): no batch up to O's has a timestamp above T. So start from the batch of the last entry
        # with T < timestamp; nothing before it can match.
        i = bisect.bisect_left(self._time_timestamps, timestamp) - 1
        start = 0
        if i >= 0:
            found = self.find_batch(self._time_offsets[i] + self.base_offset)
            if found is not None:
                start = found[0]
        for position, header in scan_batches(self.fd, start, self.size, whole=False):
            if header.max_timestamp >= timestamp:
                return position, header
        return None

    def largest_timestamp(self) -> int:
        """What retention.ms compares: the largest record timestamp, or the file's age if records have none."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified_ms

    # ---- recovery and truncation ----------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._index_offsets = array("i")
        self._index_positions = array("i")
        self._time_timestamps = array("q")
        self._time_offsets = array("i")
        self._bytes_since_index_entry = 0
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        self.next_offset = self.base_offset

    def recover(self, verify_crc: bool = True) -> int:
        """Rebuild offsets, timestamps and indexes by reading the file; cut it after the longest valid prefix.

        A batch is valid if its length fits, its magic is 2, its CRC matches (when verify_crc), its offsets are
        increasing and above the previous batch's, and fit the relative-offset index. Returns the bytes cut.
        """
        file_size = os.fstat(self.fd).st_size
        self._reset()
        valid_end = 0
        expected = self.base_offset
        for position, batch in scan_batches(self.fd, 0, file_size, whole=verify_crc):
            if (
                batch.magic != MAGIC
                or batch.base_offset < expected
                or batch.last_offset_delta < 0
                or not self.fits(batch.last_offset)
                or (verify_crc and not batch.verify_crc())
            ):
                break
            self._track(position, batch.size, batch.last_offset, batch.max_timestamp)
            valid_end = position + batch.size
            expected = batch.next_offset
        self.size = valid_end
        if valid_end < file_size:
            self.allocated = valid_end  # a truncation gives back the blocks past the end too
            os.ftruncate(self.fd, valid_end)
        self._set_roll_base()
        return file_size - valid_end

    def _set_roll_base(self) -> None:
        # After a restart the wall-clock time of the first append is unknown; the file's age is the best stand-in.
        self.roll_base_ms = self.last_modified_ms if self.size > 0 else None

    def truncate_to(self, offset: int) -> None:
        """Remove every batch whose last offset is >= offset. The index files go too: the segment is now the
        active one and gets them back when sealed again.
        """
        found = self.find_batch(offset)
        with self.lock:
            self.generation += 1
            self.sealed = False
            self._unlink_index_files()
            self.aborted_txns = [txn for txn in self.aborted_txns if txn.last_offset < offset]
            if found is not None:
                self.allocated = found[0]  # a truncation gives back the blocks past the end too
                os.ftruncate(self.fd, found[0])
            # Rebuilding by a header scan keeps the largest timestamp exact; truncation is rare.
            self.recover(verify_crc=False)

    # ---- index files ----------------------------------------------------------------------------------------------

    def persist_indexes(self, generation: int) -> bool:
        """Write both index files (each fsynced, then renamed into place) if the segment is still the one the
        caller saw. The caller fsyncs the directory. Returns whether the files were written.
        """
        with self.lock:
            if self.deleted or self.generation != generation:
                return False
            offsets = array("i", bytes(_OFFSET_ENTRY_SIZE * len(self._index_offsets)))
            offsets[0::2] = self._index_offsets
            offsets[1::2] = self._index_positions
            if sys.byteorder == "little":
                offsets.byteswap()
            times = bytearray(_TIME_ENTRY.size * len(self._time_timestamps))
            for i, (timestamp, relative) in enumerate(
                zip(self._time_timestamps, self._time_offsets, strict=True)
            ):
                _TIME_ENTRY.pack_into(times, i * _TIME_ENTRY.size, timestamp, relative)
            try:
                if self.aborted_txns:
                    # Durable before the other two: their presence is what makes recovery trust this segment.
                    replace_file(self.txn_index_path, encode_entries(self.aborted_txns))
                    fsync_directory(self.directory)
                else:
                    self.txn_index_path.unlink(missing_ok=True)
                replace_file(self.index_path, offsets.tobytes())
                replace_file(self.time_index_path, bytes(times))
            except OSError as error:
                if not out_of_space(error):
                    raise
                # Indexes can always be rebuilt: with no index files, recovery scans the segment. Better than
                # taking the log offline for want of a few kilobytes.
                self.index_path.unlink(missing_ok=True)
                self.time_index_path.unlink(missing_ok=True)
                return False
            return True

    def load_indexes(self) -> bool:
        """Load index files written when this segment was sealed. False (the caller then recovers the segment) if
        they are missing or do not fit the file; their content is trusted because they are only written, by
        rename, after the data they describe was fsynced.
        """
        try:
            offsets_data = self.index_path.read_bytes()
            times_data = self.time_index_path.read_bytes()
        except FileNotFoundError:
            return False
        if len(offsets_data) % _OFFSET_ENTRY_SIZE or len(times_data) % _TIME_ENTRY.size:
            return False
        try:
            aborted_txns = decode_entries(self.txn_index_path.read_bytes())
        except FileNotFoundError:
            aborted_txns = []
        except ValueError:
            return False
        entries = array("i", offsets_data)
        if sys.byteorder == "little":
            entries.byteswap()
        index_offsets = array("i", entries[0::2])
        index_positions = array("i", entries[1::2])
        if index_positions and not (0 <= index_positions[-1] < self.size and index_offsets[-1] >= 0):
            return False
        time_timestamps = array("q")
        time_offsets = array("i")
        for timestamp, relative in _TIME_ENTRY.iter_unpack(times_data):
            time_timestamps.append(timestamp)
            time_offsets.append(relative)
        self._reset()
        self.aborted_txns = aborted_txns
        self._index_offsets, self._index_positions = index_offsets, index_positions
        self._time_timestamps, self._time_offsets = time_timestamps, time_offsets
        if time_timestamps:
            self.max_timestamp = time_timestamps[-1]
            self.offset_of_max_timestamp = time_offsets[-1] + self.base_offset
        # The batches after the last index entry give the next offset (at most index.interval.bytes of them).
        start = index_positions[-1] if index_positions else 0
        end = start
        for position, header in scan_batches(self.fd, start, self.size, whole=False):
            self.next_offset = header.next_offset
            end = position + header.size
        if end != self.size:
            return False
        self._bytes_since_index_entry = self.size - start
        self._set_roll_base()
        self.sealed = True
        return True

    def remove_index_files(self) -> None:
        with self.lock:
            self.generation += 1
            self.sealed = False
            self._unlink_index_files()
