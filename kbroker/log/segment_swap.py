"""The log cleaner's segment swap: how cleaned segments replace the segments they were made from, crash-safely.

The cleaner (kbroker/log/cleaner.py) writes each cleaned segment as `<base>.log.cleaned`. `PartitionLog.
begin_segment_swap` pins the old segments and returns a `SegmentSwap`; its `execute` does the renames and directory
fsyncs (in a worker thread); `PartitionLog.end_segment_swap` installs the result. `finish_interrupted_cleaning` runs
at recovery and finishes or undoes a swap a crash interrupted, so a log always comes back with all the old segments
or all the cleaned ones.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kbroker.log.files import fsync_directory
from kbroker.log.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    INDEX_FILE_SUFFIXES,
    LOG_SUFFIX,
    LogSegment,
    parse_swap_file_name,
    segment_file_name,
    swap_file_name,
)

logger = logging.getLogger(__name__)

SEGMENT_NAME_LENGTH = 20


@dataclass(slots=True)
class CleanedGroup:
    """A cleaned segment (written, sealed and fsynced by the log cleaner in `<base>.log.cleaned`) and the
    consecutive sealed segments it replaces, with the generation each had when the cleaner read it. `end_offset`
    is the base offset of the segment after the last replaced one.
    """

    old: list[LogSegment]
    generations: list[int]
    new: LogSegment
    end_offset: int


@dataclass(slots=True)
class SegmentSwap:
    """The file work of swapping cleaned segments in, captured by `PartitionLog.begin_segment_swap`.

    `execute` may run in a worker thread (its directory fsyncs can take long under load): it only renames and
    removes files, by path, of segments the log has pinned. On disk: every `<base>.log.cleaned` is renamed
    `<base>-<end>.log.swap` and the directory fsynced: once no `.cleaned` file is left, the swap is committed and
    recovery finishes it; while one is, recovery deletes the swap files instead. (The cleaner made sure, durably,
    that the directory held no other `.cleaned` file.) Then the old segments are renamed `.deleted` and their index
    files removed, and the directory fsynced again (so a crash can never leave a cleaned segment next to an old one
    it replaces); finally each swap file becomes `<base>.log` and the directory is fsynced a third time (so no swap
    file can outlive this call on disk, where the next cleaning's `.cleaned` files would make it look
    uncommitted). So a crash at any point recovers either all the old segments or all the cleaned ones.
    """

    directory: Path
    groups: list[CleanedGroup]
    cleaner_checkpoint: int
    done: threading.Event = field(default_factory=threading.Event)
    completed: bool = False
    error: OSError | None = None
    installed: bool = False
    doomed: list[Path] = field(default_factory=list)

    def execute(self) -> None:
        """The renames and fsyncs. Never raises OSError: `end_segment_swap` reports it."""
        try:
            swaps = []
            for group in self.groups:
                swap = self.directory / swap_file_name(group.new.base_offset, group.end_offset)
                os.rename(group.new.cleaned_path, swap)
                swaps.append(swap)
            fsync_directory(self.directory)
            for group in self.groups:
                self.doomed.extend(segment.retire_files() for segment in group.old)
            fsync_directory(self.directory)
            for group, swap in zip(self.groups, swaps, strict=True):
                os.rename(swap, group.new.log_path)
            fsync_directory(self.directory)
            self.completed = True
        except OSError as e:
            self.error = e
        finally:
            self.done.set()


def finish_interrupted_cleaning(directory: Path) -> None:
    """Resolve what a crash during a log cleaner swap left behind (see `SegmentSwap`).

    A cleaning is committed once every one of its `.cleaned` files has become a `<base>-<end>.log.swap` file. So
    while any `.cleaned` file remains, the swap files are not committed either: all are deleted and the old
    segments stay. Otherwise each swap file replaces every segment whose base offset is in [base, end): those go
    and it becomes `<base>.log`. `.deleted` files are old segments already replaced.
    """
    names = sorted(os.listdir(directory))
    changed = False
    uncommitted = any(name.endswith(CLEANED_SUFFIX) for name in names)
    for name in names:
        is_swap = parse_swap_file_name(name) is not None
        if name.endswith((CLEANED_SUFFIX, DELETED_SUFFIX)) or (is_swap and uncommitted):
            (directory / name).unlink(missing_ok=True)
            changed = True
    if uncommitted:
        logger.warning("%s: removed the files of an interrupted log cleaning", directory.name)
        fsync_directory(directory)
        return
    # Every segment file, with or without its .log (a crash may have come between renaming an old segment's
    # .log away and removing its index files, which must not survive to describe the new one).
    segment_files: list[tuple[int, str]] = []
    for name in names:
        stem, _, suffix = name.partition(".")
        if (
            "." + suffix in (LOG_SUFFIX, *INDEX_FILE_SUFFIXES)
            and len(stem) == SEGMENT_NAME_LENGTH
            and stem.isdigit()
        ):
            segment_files.append((int(stem), name))
    for name in names:
        swap = parse_swap_file_name(name)
        if swap is None:
            continue
        base, end = swap
        logger.warning(
            "%s: finishing the interrupted replacement of segments [%d, %d)", directory.name, base, end
        )
        for old_base, old_name in segment_files:
            if base <= old_base < end:
                (directory / old_name).unlink(missing_ok=True)
        os.rename(directory / name, directory / segment_file_name(base, LOG_SUFFIX))
        changed = True
    if changed:
        fsync_directory(directory)
