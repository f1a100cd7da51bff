"""Small file systems for disk-full tests: a tmpfs of a given size mounted where a broker keeps its data, filled up by
a ballast file that is removed to free the space again. Unmounted on exit, also when the test fails."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BALLAST = "ballast"


@contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (e.g. "32m") mounted at `path` for the duration."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "kbroker-small-disk", str(path)], check=True,
                   capture_output=True, timeout=30)  # fmt: skip
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True, timeout=30).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def fill(path: Path) -> Path:
    """Write a ballast file into `path` until the file system is full; returns it (unlink it to free the space)."""
    ballast = path / BALLAST
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1):
            block = bytes(chunk)
            while True:
                try:
                    os.write(fd, block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    return ballast


def free_bytes(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize
