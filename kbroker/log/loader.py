"""Opening a partition's directory: recovery of its segments after a clean or an unclean shutdown.

Segments with index files were sealed after an fsync and are trusted; every other segment is checked batch by batch
(length, magic, CRC, increasing offsets) and cut after its longest valid prefix. If a segment other than the last is
cut, the segments after it are deleted: their data would follow a gap. What recovery keeps is fsynced before the log
trusts it, so a reopened log starts with its recovery point at its log end. A log cleaner swap that a crash
interrupted is finished or undone first (kbroker/log/segment_swap.py). `PartitionLog.open` builds the log on top.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from kbroker.log.config import LogConfig
from kbroker.log.files import fsync_directory
from kbroker.log.leader_epoch import CHECKPOINT_FILE as LEADER_EPOCH_CHECKPOINT
from kbroker.log.leader_epoch import LeaderEpochCache
from kbroker.log.segment import INDEX_FILE_SUFFIXES, LOG_SUFFIX, LogSegment, segment_file_name
from kbroker.log.segment_swap import SEGMENT_NAME_LENGTH, finish_interrupted_cleaning

logger = logging.getLogger(__name__)

LOG_START_OFFSET_FILE = "log-start-offset"
# The log cleaner's first dirty offset: everything before it holds at most one record per key. Written without
# fsync (a lost or older value only makes the next cleaning redo work); a truncation below it removes it durably.
CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
# Below this offset the cleaner may have removed the last batches of a segment, so a segment may end before the
# next one begins. Recovery accepts such gaps only below it; it is fsynced before any cleaned segment is committed.
CLEANER_GAPS_FILE = "cleaner-gaps-below"


@dataclass(slots=True)
class LoadedLog:
    """What recovery found in a partition directory, already durable."""

    segments: list[LogSegment]
    log_start_offset: int
    leader_epoch_cache: LeaderEpochCache
    rebuild_leader_epochs: bool
    """The leader-epoch checkpoint was unreadable: rebuild it from the batches' leader epochs."""
    cleaner_checkpoint: int
    recovered: list[LogSegment]
    """The segments that were scanned rather than trusted: their aborted transaction indexes must be rebuilt."""


def load_segments(
    directory: Path, config: LogConfig, now_ms: int, *, sync_directory: bool = True
) -> LoadedLog:
    """Recover the segments of `directory` (created if missing) and make what is kept durable.

    With `sync_directory` False the directory's entries (the removed index files above all) are not fsynced here:
    the caller makes them durable before anything is appended (the log manager's start, for every partition at once
    with `sync_directories`)."""
    directory.mkdir(parents=True, exist_ok=True)
    segments, recovered = _recover_segments(directory, config, now_ms)
    log_start_offset = max(segments[0].base_offset, read_log_start_offset(directory))
    try:
        leader_epoch_cache = LeaderEpochCache(directory)
        rebuild_leader_epochs = False
    except ValueError:
        logger.warning("%s: rebuilding the leader epoch cache from the log", directory.name, exc_info=True)
        (directory / LEADER_EPOCH_CHECKPOINT).unlink()
        leader_epoch_cache = LeaderEpochCache(directory)
        rebuild_leader_epochs = True
    active = segments[-1]
    if active.sealed:
        # Clean shutdown: the active segment's index files describe it as closed; it grows again from now on, so
        # they must go before the first append (and durably, or a crash would make them look current).
        active.remove_index_files()
    # Make what recovery kept durable before trusting it: from here on recovery_point == log_end_offset.
    for segment in recovered:
        os.fsync(segment.fd)
        if segment is not active:
            segment.seal()
            segment.persist_indexes(segment.generation)
    if sync_directory:
        fsync_directory(directory)
    return LoadedLog(
        segments=segments,
        log_start_offset=min(log_start_offset, segments[-1].next_offset),
        leader_epoch_cache=leader_epoch_cache,
        rebuild_leader_epochs=rebuild_leader_epochs,
        cleaner_checkpoint=read_offset_file(directory / CLEANER_CHECKPOINT_FILE, 0),
        recovered=recovered,
    )


def read_log_start_offset(directory: Path) -> int:
    return read_offset_file(directory / LOG_START_OFFSET_FILE, 0)


def read_offset_file(path: Path, default: int) -> int:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return default


def _segment_base_offsets(directory: Path) -> list[int]:
    """Base offsets of the .log files; removes leftovers (temporary files, indexes without a log)."""
    names = os.listdir(directory)
    bases = []
    for name in names:
        stem, _, suffix = name.partition(".")
        if name.endswith(".tmp"):
            (directory / name).unlink(missing_ok=True)
        elif "." + suffix == LOG_SUFFIX and len(stem) == SEGMENT_NAME_LENGTH and stem.isdigit():
            bases.append(int(stem))
    present = set(bases)
    for name in names:
        stem, _, suffix = name.partition(".")
        if "." + suffix in INDEX_FILE_SUFFIXES and stem.isdigit() and int(stem) not in present:
            (directory / name).unlink(missing_ok=True)
    return sorted(bases)


def _delete_segment_files(directory: Path, base_offset: int) -> None:
    for suffix in (LOG_SUFFIX, *INDEX_FILE_SUFFIXES):
        (directory / segment_file_name(base_offset, suffix)).unlink(missing_ok=True)


def _recover_segments(
    directory: Path, config: LogConfig, now_ms: int
) -> tuple[list[LogSegment], list[LogSegment]]:
    """(segments, the ones that were scanned rather than trusted)."""
    finish_interrupted_cleaning(directory)
    bases = _segment_base_offsets(directory)
    # Cleaned segments may end before the next one starts (their last batches were removed).
    gaps_below = read_offset_file(directory / CLEANER_GAPS_FILE, -1)
    segments: list[LogSegment] = []
    recovered: list[LogSegment] = []
    for i, base in enumerate(bases):
        cleaned_gap = bool(segments) and segments[-1].next_offset < base <= gaps_below
        if segments and base != segments[-1].next_offset and not cleaned_gap:
            # Segments are contiguous (a roll starts the new one at the log end offset), except where the cleaner
            # left a gap. One that overlaps or leaves another gap is left over from a truncation (which deletes
            # the later segments) cut short by a crash.
            logger.warning(
                "%s: segment %d does not follow the previous one (ending at %d); deleting it and later ones",
                directory.name,
                base,
                segments[-1].next_offset,
            )
            for later in bases[i:]:
                _delete_segment_files(directory, later)
            break
        segment = LogSegment.open_existing(directory, base, config.index_interval_bytes)
        segments.append(segment)
        if segment.load_indexes():
            continue
        recovered.append(segment)
        cut = segment.recover(verify_crc=True)
        if cut:
            logger.warning("%s: cut %d bytes of invalid data from segment %d", directory.name, cut, base)
            if i + 1 < len(bases):
                logger.warning("%s: deleting the %d segments after it", directory.name, len(bases) - i - 1)
                for later in bases[i + 1 :]:
                    _delete_segment_files(directory, later)
                break
    if not segments:
        segment = LogSegment.create(
            directory, read_log_start_offset(directory), config.index_interval_bytes, now_ms
        )
        segments.append(segment)
        recovered.append(segment)
    return segments, recovered
