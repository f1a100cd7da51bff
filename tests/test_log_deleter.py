"""Deleted segments and logs are renamed at once and unlinked later, in a worker thread (kbroker/log/deleter.py);
what a crash leaves renamed is removed at the next start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from kbroker.common import TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.log_manager import LogManager
from kbroker.log.partition_log import PartitionLog
from protocol.records import Record, build_batch
from tests.inprocess import running_broker

pytestmark = pytest.mark.timeout(60)

TP = TopicPartition("t", 0)
CONFIG = LogConfig(segment_bytes=1024, retention_ms=1000)


def fill(log: PartitionLog, batches: int) -> None:
    for _ in range(batches):
        log.append_as_leader(build_batch([Record(0, 0, b"k", b"v" * 100)]), 0, now_ms=0)
    log.advance_high_watermark(log.log_end_offset)


def deleted_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".log.deleted"))


def filled(tmp_path: Path) -> tuple[LogManager, PartitionLog]:
    """A LogManager with one log of several segments, all past their retention at 10,000 ms."""
    manager = LogManager(tmp_path, CONFIG, {"t": CONFIG}, now_ms=0)
    log = manager.create(TP, CONFIG, now_ms=0)
    fill(log, 30)
    return manager, log


async def gone(path: Path) -> None:
    """Wait for the deleter to remove `path` (the test's timeout bounds it)."""
    while os.path.lexists(path):  # noqa: ASYNC110, ASYNC240 (the deleter's thread removes it: nothing to wait on)
        await trio.sleep(0.01)


@pytest.mark.trio
async def test_retention_renames_segments_and_the_deleter_unlinks_them(tmp_path: Path) -> None:
    manager, log = filled(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.deleter.run)
        before = [s.base_offset for s in log.segments]
        assert len(before) > 1
        # every segment expired: the active one goes too, after a new one is rolled
        assert manager.retention_pass(now_ms=10_000) == len(before)
        # The pass only renamed the segments' log files (and removed their small index files): the unlinks are
        # the deleter's, whose task has not run since.
        renamed = deleted_files(log.directory)
        assert renamed == [f"{base:020d}.log.deleted" for base in before]
        active = f"{log.segments[0].base_offset:020d}"
        indexes = [name for name in os.listdir(log.directory) if name.endswith((".index", ".timeindex"))]
        assert all(name.startswith(active) for name in indexes), indexes
        for name in renamed:
            await gone(log.directory / name)
        nursery.cancel_scope.cancel()
    assert [s.base_offset for s in log.segments] == [30]
    assert log.log_start_offset == 30
    assert deleted_files(log.directory) == []
    manager.close_all()


@pytest.mark.trio
async def test_a_deleted_log_directory_is_removed_by_the_deleter(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, CONFIG, now_ms=0)
    fill(manager.create(TP, CONFIG, now_ms=0), 5)
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.deleter.run)
        assert manager.delete(TP)
        assert not (tmp_path / "t-0").exists()
        [doomed] = [tmp_path / name for name in os.listdir(tmp_path) if name.endswith("-delete")]
        await gone(doomed)
        nursery.cancel_scope.cancel()
    assert manager.partitions() == []


@pytest.mark.trio
async def test_what_is_pending_when_the_deleter_stops_is_removed_then(tmp_path: Path) -> None:
    manager, log = filled(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(manager.deleter.run)
        manager.retention_pass(now_ms=10_000)
        assert deleted_files(log.directory)
        nursery.cancel_scope.cancel()  # before the deleter's task ran again
    assert deleted_files(log.directory) == []
    # Stopped: a deletion now is done at once.
    fill(log, 30)
    manager.retention_pass(now_ms=20_000)
    assert deleted_files(log.directory) == []
    manager.close_all()


def test_without_a_running_deleter_files_are_removed_at_once(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", CONFIG, now_ms=0)
    fill(log, 30)
    assert log.apply_retention(now_ms=10_000) > 0
    assert deleted_files(log.directory) == []
    assert not (log.directory / "00000000000000000000.log").exists()
    log.close()


def test_renamed_files_a_crash_left_are_removed_at_the_next_start(tmp_path: Path) -> None:
    manager, log = filled(tmp_path)
    end = log.log_end_offset
    manager.close_all()
    # What a kill -9 between the rename and the unlink leaves: a segment renamed, a log directory renamed.
    directory = tmp_path / "t-0"
    (directory / "00000000000000000000.log").rename(directory / "00000000000000000000.log.deleted")
    doomed_log = tmp_path / "u-0.0123abcd-delete"
    doomed_log.mkdir()
    (doomed_log / "00000000000000000000.log.deleted").write_bytes(b"x" * 100)

    manager = LogManager(tmp_path, CONFIG, {"t": CONFIG}, now_ms=0)
    assert deleted_files(directory) == []
    assert not doomed_log.exists()
    reopened = manager.get(TP)
    assert reopened is not None
    assert reopened.log_end_offset == end
    assert reopened.segments[0].base_offset > 0  # the renamed segment is not part of the log any more
    manager.close_all()


@pytest.mark.trio
async def test_a_broker_unlinks_a_deleted_topics_files_in_its_deleters_thread(tmp_path: Path) -> None:
    """Through a stock client: CreateTopics, records, DeleteTopics; the broker's deleter removes the directory."""
    async with running_broker(tmp_path / "data") as broker:
        bootstrap = f"127.0.0.1:{broker.port}"

        def create_fill_delete() -> None:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap)
            try:
                admin.create_topics([NewTopic("doomed", 2, 1)])
                producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
                for i in range(200):
                    producer.send("doomed", b"v" * 1000, partition=i % 2)
                producer.flush(30)
                producer.close()
                admin.delete_topics(["doomed"])
            finally:
                admin.close()

        await trio.to_thread.run_sync(create_fill_delete)
        while broker.logs.deleter.removed < 2:  # noqa: ASYNC110 (counted in the deleter's task: nothing to wait on)
            await trio.sleep(0.01)
        assert broker.logs.get(TopicPartition("doomed", 0)) is None
        assert not [name for name in os.listdir(tmp_path / "data") if name.startswith("doomed")]
