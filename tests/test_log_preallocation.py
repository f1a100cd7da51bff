"""A busy segment reserves disk blocks ahead of its end (fallocate, keeping the file's size) and gives back what it
did not use when it is sealed, truncated or reopened after a crash; readers only ever see the data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kbroker.log.config import LogConfig
from kbroker.log.files import preallocate
from kbroker.log.partition_log import PartitionLog
from protocol.records import Record, build_batch, decode_records, iter_batches

pytestmark = pytest.mark.timeout(120)

BIG_VALUE = 256 * 1024  # 8 appends of it make a reservation (PREALLOCATE_MIN_BYTES)
BLOCK = 4096


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    probe = tmp_path / "probe"
    fd = os.open(probe, os.O_RDWR | os.O_CREAT)
    try:
        supported = preallocate(fd, 0, BLOCK)
    finally:
        os.close(fd)
        probe.unlink()
    if not supported:
        pytest.skip(f"the file system of {tmp_path} cannot reserve blocks (fallocate FALLOC_FL_KEEP_SIZE)")
    return tmp_path / "t-0"


def append_values(log: PartitionLog, count: int, size: int, first: int = 0) -> None:
    for i in range(first, first + count):
        value = (b"%08d" % i) * (size // 8)
        log.append_as_leader(build_batch([Record(0, 1000 + i, None, value)]), leader_epoch=0, now_ms=0)


def read_values(log: PartitionLog) -> list[bytes]:
    values: list[bytes] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        batches = list(iter_batches(log.read(offset, 4 << 20)))
        assert batches, f"nothing read at {offset}"
        for batch in batches:
            values += [record.value or b"" for record in decode_records(batch)]
        offset = batches[-1].last_offset + 1
    return values


def expected_values(count: int, size: int) -> list[bytes]:
    return [(b"%08d" % i) * (size // 8) for i in range(count)]


def allocated_bytes(path: Path) -> int:
    return path.stat().st_blocks * 512


def data_bytes(path: Path) -> int:
    return sum(batch.size for batch in iter_batches(path.read_bytes()))


def test_a_busy_segment_reserves_blocks_ahead_and_its_size_stays_the_data(directory: Path) -> None:
    log = PartitionLog.open(directory, LogConfig(), now_ms=0)
    append_values(log, 12, BIG_VALUE)
    path = log.segments[-1].log_path
    assert path.stat().st_size == data_bytes(path)
    assert allocated_bytes(path) > path.stat().st_size + BLOCK
    log.advance_high_watermark(log.log_end_offset)
    assert read_values(log) == expected_values(12, BIG_VALUE)
    log.close()
    # a clean close seals the active segment: the reservation is given back, the data stays
    assert allocated_bytes(path) < path.stat().st_size + BLOCK
    reopened = PartitionLog.open(directory, LogConfig(), now_ms=0)
    reopened.advance_high_watermark(reopened.log_end_offset)
    assert read_values(reopened) == expected_values(12, BIG_VALUE)
    reopened.close()


def test_a_rolled_segment_gives_its_reservation_back_and_keeps_its_modification_time(directory: Path) -> None:
    config = LogConfig(segment_bytes=4 * 1024 * 1024)
    log = PartitionLog.open(directory, config, now_ms=0)
    append_values(log, 15, BIG_VALUE)  # 3.75 MiB: all in the first segment
    first = log.segments[0].log_path
    assert len(log.segments) == 1
    assert allocated_bytes(first) > first.stat().st_size + BLOCK
    old = 1_600_000_000 * 10**9
    os.utime(first, ns=(old, old))
    append_values(log, 3, BIG_VALUE, first=15)  # past segment.bytes: rolls
    assert len(log.segments) == 2
    assert allocated_bytes(first) < first.stat().st_size + BLOCK
    assert first.stat().st_mtime_ns == old  # retention and the cleaner read it
    log.advance_high_watermark(log.log_end_offset)
    assert read_values(log) == expected_values(18, BIG_VALUE)
    log.close()


def test_small_appends_reserve_nothing(directory: Path) -> None:
    log = PartitionLog.open(directory, LogConfig(), now_ms=0)
    append_values(log, 500, 1024)
    path = log.segments[-1].log_path
    assert allocated_bytes(path) < path.stat().st_size + BLOCK
    log.close()


def test_a_truncated_segment_gives_its_reservation_back(directory: Path) -> None:
    log = PartitionLog.open(directory, LogConfig(), now_ms=0)
    append_values(log, 12, BIG_VALUE)
    path = log.segments[-1].log_path
    assert allocated_bytes(path) > path.stat().st_size + BLOCK
    log.truncate_to(5)  # a follower cut back to the leader's log
    assert path.stat().st_size == data_bytes(path)
    assert allocated_bytes(path) < path.stat().st_size + BLOCK
    append_values(log, 10, BIG_VALUE, first=5)  # and it reserves again as it grows
    assert allocated_bytes(path) > path.stat().st_size + BLOCK
    log.advance_high_watermark(log.log_end_offset)
    assert read_values(log) == expected_values(15, BIG_VALUE)
    log.close()


def test_after_a_crash_the_reservation_is_kept_out_of_the_data_and_given_back_at_the_next_seal(
    directory: Path,
) -> None:
    log = PartitionLog.open(directory, LogConfig(), now_ms=0)
    append_values(log, 12, BIG_VALUE)
    path = log.segments[-1].log_path
    log.close(clean=False)  # what kill -9 leaves: the reserved blocks are still the file's
    assert allocated_bytes(path) > path.stat().st_size + BLOCK
    recovered = PartitionLog.open(directory, LogConfig(), now_ms=0)
    assert recovered.log_end_offset == 12
    recovered.advance_high_watermark(recovered.log_end_offset)
    assert read_values(recovered) == expected_values(12, BIG_VALUE)
    append_values(recovered, 2, BIG_VALUE, first=12)
    assert path.stat().st_size == data_bytes(path)
    recovered.close()
    assert allocated_bytes(path) < path.stat().st_size + BLOCK
