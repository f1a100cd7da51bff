"""Unlinking what the logs no longer need, off the event loop.

Unlinking a file first drops every page of it the page cache holds, one by one: 130-137 ms for a 512 MiB segment
just written, on our VMs. On the event loop, that is as long a pause for every connection; a DeleteTopics of 2 GiB
took an acks=all producer's p99 to 72-366 ms (bench/README.md, "Deleting files"). So retention, truncation and topic
deletion only rename what goes, which is quick: a segment's log file becomes `<base>.log.deleted`, a partition's
directory `<name>.<uuid>-delete`. They hand the new path to `FileDeleter.delete_later`, and `run` (a task of the
broker's) unlinks it in a worker thread. After a crash, the loader removes what is left of both kinds
(segment_swap.finish_interrupted_cleaning, LogManager).

Kafka renames the same way (`.deleted`, `-delete`), then waits `file.delete.delay.ms` (60 s) before its "delete-file"
task unlinks, so that reads still using the file can end. kbroker does not wait: a fetch that is sending a segment
holds its own descriptor (FileRecords), and the data stays readable through it after the unlink.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

import trio

logger = logging.getLogger(__name__)


def remove_paths(paths: Iterable[Path]) -> None:
    """Remove each path: a file, or a directory with everything in it. A path already gone is no error."""
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
        except OSError as exc:
            # The data is already out of every log; the file only keeps its space. The next start tries again.
            logger.warning("could not remove %s: %s", path, exc)


def remove_now(path: Path) -> None:
    """A log's `delete_later` when no FileDeleter runs: remove at once (tools, a log opened on its own)."""
    remove_paths([path])


class FileDeleter:
    """`delete_later(path)` (trio thread): remove the path soon, in a worker thread, while `run` runs; at once
    otherwise (before the broker's start, after its stop)."""

    def __init__(self) -> None:
        self._pending: list[Path] = []
        self._work = trio.Event()
        self._running = False
        self.removed = 0
        """Paths `run` has removed in its worker thread (tests: the broker's deletions took this way)."""

    def delete_later(self, path: Path) -> None:
        if not self._running:
            remove_paths([path])
            return
        self._pending.append(path)
        self._work.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Remove what is handed to `delete_later`, a batch at a time, until cancelled; then what is still pending,
        at once (the broker is stopping: no connection is served any more)."""
        self._running = True
        task_status.started()
        batch: list[Path] = []
        try:
            while True:
                await self._work.wait()
                self._work = trio.Event()
                batch, self._pending = self._pending, []
                await trio.to_thread.run_sync(remove_paths, batch)
                self.removed += len(batch)
                batch = []
        finally:
            self._running = False
            batch, self._pending = [*batch, *self._pending], []
            remove_paths(batch)
