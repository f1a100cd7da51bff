"""Small file helpers with the durability each caller needs spelled out."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TMP_SUFFIX = ".tmp"
OUT_OF_SPACE = (errno.ENOSPC, errno.EDQUOT)


def out_of_space(error: BaseException) -> bool:
    """A full disk (or quota): nothing is wrong with what is already on it, and freeing space cures it."""
    return isinstance(error, OSError) and error.errno in OUT_OF_SPACE


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """os.write may write less than asked (a full disk, a signal); loop until everything is written."""
    written = os.write(fd, data)
    if written == len(data):
        return  # (nearly always: no view to make)
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        view = view[written:]


_FALLOC_FL_KEEP_SIZE = 0x01


def _libc_function(name: str, *argtypes: type[ctypes._SimpleCData[Any]]) -> ctypes._NamedFuncPointer | None:
    """A libc function for what Python's os module lacks (Linux only), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: ctypes._NamedFuncPointer = getattr(
            ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True), name
        )
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function


# (Python's os module has only posix_fallocate, which also grows the file's size.)
_fallocate = _libc_function("fallocate", ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)


def preallocate(fd: int, offset: int, length: int) -> bool:
    """Reserve the disk blocks of [offset, offset + length) without changing the file's size (Linux's fallocate with
    FALLOC_FL_KEEP_SIZE): writes into them skip the file system's block allocation. False when that cannot be done
    (another system, a file system without it, a full disk); the file is unchanged then."""
    return _fallocate is not None and _fallocate(fd, _FALLOC_FL_KEEP_SIZE, offset, length) == 0


def replace_file(path: Path, data: bytes, *, fsync: bool = True, fsync_dir: bool = False) -> None:
    """Replace `path` atomically through a temporary file and a rename, so readers and crashes see the old content
    or the new, never a mix. `fsync` makes the new content durable before the rename; `fsync_dir` makes the rename
    itself durable (callers writing several files do that once instead).
    """
    tmp = path.with_name(path.name + TMP_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
    except OSError:
        # A full disk, typically: leave no half-written temporary file to take up what space is left.
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if fsync_dir:
        fsync_directory(path.parent)


def fsync_directory(path: Path) -> None:
    """Make creations, renames and deletions of the directory's entries durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# (os has sync(), for every file system and with no error to report, but not syncfs; os.statvfs lacks the type.)
_syncfs = _libc_function("syncfs", ctypes.c_int)
_statfs = _libc_function("statfs", ctypes.c_char_p, ctypes.c_void_p)

SYNCFS_COMMITS_DIRECTORIES = {0xEF53: "ext2/3/4", 0x58465342: "xfs", 0x9123683E: "btrfs"}
"""The file systems (statfs's f_type) whose syncfs commits every directory change made before it, as an fsync of each
directory would: their sync_fs commits the journal (ext4, xfs) or the transaction (btrfs), or writes out the
directory blocks (ext2). Not every file system's does (a FUSE mount's syncfs does nothing, for one)."""


def file_system_type(path: Path) -> int | None:
    """statfs's f_type of the file system holding `path` (its magic number), or None if it cannot be had."""
    if _statfs is None:
        return None
    # (A struct statfs is 120 bytes on 64-bit Linux, and f_type, a long, comes first.)
    buffer = ctypes.create_string_buffer(256)
    if _statfs(os.fsencode(path), buffer) != 0:
        return None
    return ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF


def sync_directories(paths: Iterable[Path]) -> None:
    """Make creations, renames and deletions in every one of the directories durable, as `fsync_directory` on each
    would. On a file system whose syncfs covers that (SYNCFS_COMMITS_DIRECTORIES) it is one syncfs: a single journal
    commit for every directory, where each directory's fsync waits for a commit of its own (the log manager's start
    opens every partition's log: at 10,000 partitions those fsyncs were about a sixth of the start, bench/README.md).
    syncfs also writes out whatever else on that file system is dirty, so it takes longer on a disk other programs
    are writing to. Elsewhere, an fsync of each directory. Raises OSError."""
    by_file_system: dict[int, list[Path]] = {}
    for path in paths:
        by_file_system.setdefault(os.stat(path).st_dev, []).append(path)
    for directories in by_file_system.values():
        if _syncfs is None or file_system_type(directories[0]) not in SYNCFS_COMMITS_DIRECTORIES:
            for path in directories:
                fsync_directory(path)
            continue
        fd = os.open(directories[0], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            # (Linux reports the file system's write-back errors here since 5.8.)
            if _syncfs(fd) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"syncfs of the file system of {directories[0]}: {os.strerror(error)}")
        finally:
            os.close(fd)
