"""Small file helpers with the durability each caller needs spelled out."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from pathlib import Path

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


def _fallocate_function() -> ctypes._NamedFuncPointer | None:
    # Python's os module has only posix_fallocate, which also grows the file's size.
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    function.restype = ctypes.c_int
    return function


_fallocate = _fallocate_function()


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
