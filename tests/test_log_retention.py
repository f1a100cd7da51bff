"""Retention by time and size, DeleteRecords, and what retention never deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbroker.common import KafkaError
from kbroker.log.config import LogConfig
from kbroker.log.partition_log import PartitionLog
from protocol.errors import ErrorCode
from protocol.records import Record, build_batch, iter_batches

pytestmark = pytest.mark.timeout(60)

HOUR = 3600 * 1000


def open_log(tmp_path: Path, *, retention_ms: int, retention_bytes: int = -1) -> PartitionLog:
    config = LogConfig(segment_bytes=1024, retention_ms=retention_ms, retention_bytes=retention_bytes)
    return PartitionLog.open(tmp_path / "t-0", config, now_ms=0)


def fill(log: PartitionLog, batches: int, timestamp: int) -> None:
    for _ in range(batches):
        log.append_as_leader(build_batch([Record(0, timestamp, b"k", b"v" * 100)]), 0, now_ms=timestamp)
    log.advance_high_watermark(log.log_end_offset)


def test_retention_by_time_uses_each_segments_largest_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=10 * HOUR)
    fill(log, 20, timestamp=1 * HOUR)
    fill(log, 20, timestamp=5 * HOUR)
    only_old = sum(1 for s in log.segments[:-1] if s.max_timestamp == 1 * HOUR)
    assert only_old >= 2
    assert log.apply_retention(now_ms=11 * HOUR) == 0
    # every segment whose records are all from hour 1 goes; one holding an hour-5 batch stays
    assert log.apply_retention(now_ms=11 * HOUR + 1) == only_old
    assert log.segments[0].max_timestamp == 5 * HOUR
    assert log.log_start_offset == log.segments[0].base_offset > 0
    assert not (log.directory / "00000000000000000000.log").exists()
    assert next(iter_batches(log.read(log.log_start_offset, 1))).base_offset == log.log_start_offset
    with pytest.raises(KafkaError) as e:
        log.read(0, 100)
    assert e.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_retention_deletes_an_expired_active_segment_after_rolling_a_new_one(tmp_path: Path) -> None:
    # As Kafka does (checked against Kafka 3.9.2: "Rolled new log segment at offset N", then the old one deleted
    # for its retention time breach): a topic whose records are all expired ends up empty, offsets kept.
    log = open_log(tmp_path, retention_ms=HOUR)
    fill(log, 30, timestamp=0)
    segments = len(log.segments)
    assert segments > 1
    assert log.apply_retention(now_ms=100 * HOUR) == segments
    assert [(s.base_offset, s.size) for s in log.segments] == [(30, 0)]
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (30, 30, 30)
    assert log.apply_retention(now_ms=100 * HOUR) == 0, "an empty active segment stays"
    assert log.append_as_leader(build_batch([Record(0, 0, b"k", b"v")]), 0, now_ms=0).base_offset == 30
    log.close()
    reopened = PartitionLog.open(tmp_path / "t-0", LogConfig(segment_bytes=1024), now_ms=0)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (30, 31)


def test_retention_keeps_an_active_segment_reaching_above_the_high_watermark(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=HOUR)
    fill(log, 30, timestamp=0)
    log.high_watermark = log.log_end_offset - 1
    log.apply_retention(now_ms=100 * HOUR)
    assert len(log.segments) == 1
    assert log.segments[0].size > 0
    assert log.log_start_offset == log.segments[0].base_offset
    assert log.log_end_offset == 30


def test_retention_never_deletes_above_the_high_watermark(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=HOUR)
    fill(log, 30, timestamp=0)
    log.high_watermark = log.segments[1].base_offset
    assert log.apply_retention(now_ms=100 * HOUR) == 1
    assert log.log_start_offset == log.high_watermark


def test_infinite_retention(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=-1)
    fill(log, 30, timestamp=0)
    assert log.apply_retention(now_ms=10**15) == 0


def test_retention_by_size(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=-1, retention_bytes=3000)
    fill(log, 60, timestamp=0)
    assert log.size_in_bytes > 3000
    log.apply_retention(now_ms=0)
    assert log.size_in_bytes >= 3000, "deletes only while what remains is at least retention.bytes"
    assert log.size_in_bytes - log.segments[0].size < 3000
    assert log.log_start_offset == log.segments[0].base_offset


def test_compact_only_topics_are_not_deleted_by_retention(tmp_path: Path) -> None:
    log = PartitionLog.open(
        tmp_path / "t-0",
        LogConfig(segment_bytes=1024, retention_ms=1, cleanup_policy=frozenset({"compact"})),
        now_ms=0,
    )
    fill(log, 30, timestamp=0)
    assert log.apply_retention(now_ms=100 * HOUR) == 0


def test_delete_records_before(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=-1)
    fill(log, 30, timestamp=0)
    segments = len(log.segments)
    third = log.segments[2].base_offset
    assert log.delete_records_before(third + 1) == third + 1
    assert log.log_start_offset == third + 1
    assert len(log.segments) == segments - 2, "segments wholly below the new start go"
    with pytest.raises(KafkaError) as e:
        log.read(third, 100)
    assert e.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    # the batch containing the new start is returned whole
    assert next(iter_batches(log.read(third + 1, 1))).base_offset <= third + 1
    assert log.delete_records_before(5) == third + 1, "never backwards"
    with pytest.raises(KafkaError) as e:
        log.delete_records_before(log.high_watermark + 1)
    assert e.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    log.close()
    reopened = PartitionLog.open(tmp_path / "t-0", LogConfig(segment_bytes=1024), now_ms=0)
    assert reopened.log_start_offset == third + 1, "persisted"


def test_retention_moves_the_leader_epoch_cache_start(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=HOUR)
    for epoch in range(30):
        log.append_as_leader(build_batch([Record(0, 0, b"k", b"v" * 100)]), epoch, now_ms=0)
    # A recent record in the active segment keeps it (and the epoch-29 batch before it) from expiring.
    log.append_as_leader(build_batch([Record(0, 100 * HOUR, b"k", b"v")]), 30, now_ms=0)
    log.advance_high_watermark(log.log_end_offset)
    log.apply_retention(now_ms=100 * HOUR)
    start = log.log_start_offset
    assert log.leader_epoch_cache.entries[0] == (start, start)
