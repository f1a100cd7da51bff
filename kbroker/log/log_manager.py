"""Every partition log under the data directory: `<data_dir>/<topic>-<partition>/`.

A deleted partition's directory is first renamed to `<topic>-<partition>.<uuid>-delete` (one atomic step, so a
crash never leaves a half-deleted log that looks live), then removed; leftovers are removed at the next start.

A clean close waits on several fsyncs per partition (of the segment, its index files, the producer-state snapshot
and the directory). Each log's are independent of every other's, so CLOSE_THREADS logs close at once: the file
system makes concurrent fsyncs durable in one journal commit, where one after the other each waits for its own
(10,000 partitions on one disk: a clean close ~80 s serially). Each log still does its own fsyncs in their order, and
the manager returns only when every log is done. Opening is mostly short system calls on files the page cache holds
(and, after an unclean shutdown, the recovery of active segments): OPEN_THREADS logs open at once, a few, since each
of those calls hands the interpreter lock over, and 16 threads made it change hands millions of times (10,000
partitions: 10.8 s to start, 10.7 s of it system time in futex calls, against 4.5 s with one thread and 5.0 s with
two; after dropping the page cache, 8.9 s with one thread against 13.3 s with 16). What opening changes in a
partition's directory (a clean start removes the active segment's index files) is made durable for every partition
at once, before any log is handed out: one syncfs instead of a directory fsync per partition (kbroker/log/files.py).
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from kbroker.common import KafkaError, TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.deleter import FileDeleter
from kbroker.log.files import fsync_directory, sync_directories
from kbroker.log.partition_log import MoveCount, PartitionLog
from kbroker.log.partition_metadata import read_partition_metadata

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DELETE_SUFFIX = "-delete"
# Kafka's producer.id.expiration.ms default: forget idempotent producers idle for a day.
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 24 * 3600 * 1000
# Logs closed at once (see above); more gained nothing on the disks measured.
CLOSE_THREADS = 16
# Logs opened at once (see above).
OPEN_THREADS = 2


def partition_dir_name(tp: TopicPartition) -> str:
    return str(tp)


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """The topic-partition of a partition directory name; topics may contain '-', the partition is after the last."""
    topic, dash, partition = name.rpartition("-")
    if not dash or not topic or not partition.isdigit():
        return None
    return TopicPartition(topic, int(partition))


class LogManager:
    def __init__(
        self,
        data_dir: Path,
        default_config: LogConfig,
        topic_configs: Mapping[str, LogConfig] | None = None,
        *,
        now_ms: int,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ) -> None:
        """Open (and recover) every partition directory under data_dir, with its topic's config from
        topic_configs; the logs of other topics recover with default_config and stay unconfigured (see
        PartitionLog.configured) until their owner sets their config.
        """
        self.data_dir = data_dir
        self.default_config = default_config
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self._logs: dict[TopicPartition, PartitionLog] = {}
        self.deleter = FileDeleter()
        """Unlinks the files of deleted logs and segments in a worker thread (its `run` is a task of the broker's)."""
        self.high_watermark_moves = MoveCount()
        """Moves of every log's high watermark, and logs created or deleted (the checkpoint's trigger)."""
        data_dir.mkdir(parents=True, exist_ok=True)
        configs = topic_configs or {}
        found: list[tuple[TopicPartition, Path, LogConfig | None]] = []
        for name in sorted(os.listdir(data_dir)):
            path = data_dir / name
            if not path.is_dir():
                continue
            if name.endswith(DELETE_SUFFIX):
                shutil.rmtree(path, ignore_errors=True)
                continue
            tp = parse_partition_dir_name(name)
            if tp is None:
                continue
            found.append((tp, path, configs.get(tp.topic)))

        def open_log(entry: tuple[TopicPartition, Path, LogConfig | None]) -> PartitionLog:
            tp, path, config = entry
            log = PartitionLog.open(path, config or default_config, now_ms, sync_directory=False)
            log.topic_partition = tp
            log.high_watermark_moves = self.high_watermark_moves
            log.delete_later = self.deleter.delete_later
            log.configured = config is not None
            log.topic_id = read_partition_metadata(path)
            return log

        for (tp, _, _), log in zip(found, _each_at_once(open_log, found, OPEN_THREADS), strict=True):
            self._logs[tp] = log
        # What recovery changed in the directories (each active segment's index files removed, above all) must be
        # durable before the first append: for all of them at once, here, before any log is handed out.
        sync_directories(path for _, path, _ in found)

    def get(self, tp: TopicPartition) -> PartitionLog | None:
        return self._logs.get(tp)

    def __iter__(self) -> Iterator[PartitionLog]:
        return iter(list(self._logs.values()))

    def __len__(self) -> int:
        return len(self._logs)

    def partitions(self) -> list[TopicPartition]:
        return sorted(self._logs)

    def create(self, tp: TopicPartition, config: LogConfig, now_ms: int) -> PartitionLog:
        """Open the partition's log, creating its directory; an existing log is returned as it is."""
        existing = self._logs.get(tp)
        if existing is not None:
            return existing
        log = PartitionLog.open(self.data_dir / partition_dir_name(tp), config, now_ms)
        log.topic_partition = tp
        log.high_watermark_moves = self.high_watermark_moves
        log.delete_later = self.deleter.delete_later
        # The new directory entry must survive a crash, or the partition would vanish with the data written to it.
        fsync_directory(self.data_dir)
        self._logs[tp] = log
        self.high_watermark_moves.value += 1
        return log

    def delete(self, tp: TopicPartition) -> bool:
        """Close and delete the partition's log; returns whether it existed."""
        log = self._logs.pop(tp, None)
        if log is None:
            return False
        self.high_watermark_moves.value += 1
        log.close(clean=False)
        doomed = log.directory.with_name(f"{log.directory.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}")
        os.rename(log.directory, doomed)
        fsync_directory(self.data_dir)
        self.deleter.delete_later(doomed)
        return True

    def retention_pass(self, now_ms: int, on_moved: Callable[[PartitionLog], None] | None = None) -> int:
        """Apply retention to every log and forget idle producers; returns the number of segments deleted.
        `on_moved(log)`: a log whose log start offset moved or that went offline (fetches answer differently)."""
        deleted = 0
        for log in self:
            if not log.configured:
                continue
            start, offline = log.log_start_offset, log.offline
            try:
                deleted += log.apply_retention(now_ms)
            except KafkaError:
                # A disk error took the log offline (said in its log); the others go on.
                if on_moved is not None and not offline:
                    on_moved(log)
                continue
            if on_moved is not None and log.log_start_offset != start:
                on_moved(log)
            log.producer_state.remove_expired(now_ms, self.producer_id_expiration_ms)
        return deleted

    def close_all(self) -> None:
        _each_at_once(PartitionLog.close, list(self._logs.values()), CLOSE_THREADS)
        self._logs.clear()


def _each_at_once(work: Callable[[T], R], items: Iterable[T], threads: int) -> list[R]:
    """work(item) for every item, `threads` at a time; the results in order. The first failure is raised once every
    item is done (a log that fails to open fails the start, as it did one at a time)."""
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="log-io") as pool:
        futures = [pool.submit(work, item) for item in items]
    return [future.result() for future in futures]
