"""Recovery: a log reopened after a crash keeps exactly its longest valid prefix of batches."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbroker.log.config import LogConfig
from kbroker.log.partition_log import PartitionLog
from kbroker.log.segment import LogSegment
from protocol.records import Record, build_batch, decode_records, iter_batches

pytestmark = pytest.mark.timeout(120)

ONE_SEGMENT = LogConfig(index_interval_bytes=128)
SMALL_SEGMENTS = LogConfig(segment_bytes=2048, index_interval_bytes=128)


def write_log(
    directory: Path, sizes: list[int], config: LogConfig = ONE_SEGMENT
) -> tuple[PartitionLog, list[int]]:
    """A log with one batch per entry of `sizes` (records of that many value bytes, 1-3 records per batch).
    Returns the log and the end offset after each batch.
    """
    log = PartitionLog.open(directory, config, now_ms=0)
    ends = []
    for i, size in enumerate(sizes):
        records = [Record(j, 1000 + i, b"key", bytes([i % 256]) * size) for j in range(1 + i % 3)]
        ends.append(log.append_as_leader(build_batch(records), leader_epoch=0, now_ms=0).last_offset + 1)
    return log, ends


def crash(log: PartitionLog) -> None:
    """What a kill -9 leaves: data written with os.write, no index files for unflushed segments, no snapshot."""
    log.close(clean=False)


def reopen(directory: Path, config: LogConfig = ONE_SEGMENT) -> PartitionLog:
    log = PartitionLog.open(directory, config, now_ms=0)
    log.advance_high_watermark(log.log_end_offset)
    return log


def all_offsets(log: PartitionLog) -> list[int]:
    out: list[int] = []
    position = log.log_start_offset
    while position < log.log_end_offset:
        got = [r.offset for b in iter_batches(log.read(position, 1 << 20)) for r in decode_records(b)]
        assert got, f"no data at {position}"
        out += got
        position = got[-1] + 1
    return out


def batch_positions(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    positions, position = [], 0
    for b in iter_batches(data):
        positions.append((position, b.size))
        position += b.size
    return positions


def check_recovered(directory: Path, expected_end: int, expected_size: int | None = None) -> None:
    log = reopen(directory)
    assert log.log_end_offset == expected_end
    if expected_size is not None:
        assert log.segments[-1].log_path.stat().st_size == expected_size
    assert all_offsets(log) == list(range(expected_end))
    # and it keeps working: appends continue at the recovered end, and survive another reopen
    assert log.append_as_leader(build_batch([Record(0, 0, None, b"after")]), 0, 0).base_offset == expected_end
    log.close()
    again = reopen(directory)
    assert again.log_end_offset == expected_end + 1
    again.close()


sizes_strategy = st.lists(st.integers(0, 300), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(sizes=sizes_strategy, cut_fraction=st.floats(0, 1))
def test_truncated_tail_recovers_the_longest_valid_prefix(sizes: list[int], cut_fraction: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log, ends = write_log(directory, sizes)
        segment_path = log.segments[0].log_path
        crash(log)
        positions = batch_positions(segment_path)
        total = sum(size for _, size in positions)
        cut = int(total * cut_fraction)
        os.truncate(segment_path, cut)
        whole = sum(1 for position, size in positions if position + size <= cut)
        check_recovered(
            directory, ends[whole - 1] if whole else 0, sum(size for _, size in positions[:whole])
        )


@settings(max_examples=30, deadline=None)
@given(
    sizes=sizes_strategy,
    tail=st.one_of(st.integers(1, 10_000).map(bytes), st.binary(min_size=1, max_size=3000)),
)
def test_zero_filled_or_garbage_tail_is_cut(sizes: list[int], tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log, ends = write_log(directory, sizes)
        segment_path = log.segments[0].log_path
        crash(log)
        with open(segment_path, "ab") as f:
            f.write(tail)
        check_recovered(directory, ends[-1])


@settings(max_examples=60, deadline=None)
@given(sizes=sizes_strategy, which=st.integers(0, 100), where=st.integers(0, 10_000), bit=st.integers(0, 7))
def test_a_corrupt_batch_and_everything_after_it_are_cut(
    sizes: list[int], which: int, where: int, bit: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log, ends = write_log(directory, sizes)
        segment_path = log.segments[0].log_path
        crash(log)
        positions = batch_positions(segment_path)
        victim = which % len(positions)
        position, size = positions[victim]
        # magic (16), CRC (17-20) and everything the CRC covers; base offset and leader epoch are not checkable
        flip_at = position + 16 + where % (size - 16)
        data = bytearray(segment_path.read_bytes())
        data[flip_at] ^= 1 << bit
        segment_path.write_bytes(data)
        check_recovered(directory, ends[victim - 1] if victim else 0)


def test_bad_crc_in_the_last_batch(tmp_path: Path) -> None:
    log, ends = write_log(tmp_path / "t-0", [50] * 10)
    path = log.segments[0].log_path
    crash(log)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(data)
    check_recovered(tmp_path / "t-0", ends[-2])


def test_clean_shutdown_is_trusted_and_a_crash_is_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned: list[int] = []
    real_recover = LogSegment.recover

    def spy(self: LogSegment, verify_crc: bool = True) -> int:
        scanned.append(self.base_offset)
        return real_recover(self, verify_crc)

    monkeypatch.setattr(LogSegment, "recover", spy)
    directory = tmp_path / "t-0"
    log, ends = write_log(directory, [100] * 60, SMALL_SEGMENTS)
    bases = [s.base_offset for s in log.segments]
    assert len(bases) > 3
    log.close()
    assert all(s.index_path.exists() for s in log.segments), "a clean close leaves every segment's indexes"
    scanned.clear()
    log = reopen(directory, SMALL_SEGMENTS)
    assert scanned == []
    assert log.log_end_offset == ends[-1]
    assert all_offsets(log) == list(range(ends[-1]))
    assert not log.segments[-1].index_path.exists(), "the active segment's indexes go once it can grow again"

    # Rolled and flushed segments are trusted after a crash; only the active one is scanned.
    for _ in range(15):
        log.append_as_leader(build_batch([Record(0, 0, None, b"x" * 100)]), 0, 0)
    log.flush()
    active_base = log.segments[-1].base_offset
    assert active_base > bases[-1], "rolled at least once"
    crash(log)
    scanned.clear()
    log = reopen(directory, SMALL_SEGMENTS)
    assert scanned == [active_base]
    assert log.log_end_offset == ends[-1] + 15

    # Segments rolled but never flushed have no index files: they are scanned too.
    for _ in range(30):
        log.append_as_leader(build_batch([Record(0, 0, None, b"y" * 100)]), 0, 0)
    unflushed = [s.base_offset for s in log.segments if s.base_offset >= active_base]
    assert len(unflushed) > 1
    end = log.log_end_offset
    crash(log)
    scanned.clear()
    log = reopen(directory, SMALL_SEGMENTS)
    assert scanned == unflushed
    assert log.log_end_offset == end
    assert all_offsets(log) == list(range(end))


def test_a_torn_middle_segment_drops_the_segments_after_it(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, ends = write_log(directory, [100] * 60, SMALL_SEGMENTS)
    segments = list(log.segments)
    assert len(segments) >= 4
    victim = segments[1]
    crash(log)  # never flushed: no segment has index files
    positions = batch_positions(victim.log_path)
    cut_at = positions[2][0] + 5
    os.truncate(victim.log_path, cut_at)
    log = reopen(directory, SMALL_SEGMENTS)
    assert [s.base_offset for s in log.segments] == [segments[0].base_offset, victim.base_offset]
    assert not any((directory / s.log_path.name).exists() for s in segments[2:])
    expected_end = [e for e in ends if e > victim.base_offset][1]  # two whole batches kept in the victim
    assert log.log_end_offset == expected_end
    assert all_offsets(log) == list(range(expected_end))


def test_bad_index_files_are_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, ends = write_log(directory, [100] * 60, SMALL_SEGMENTS)
    log.close()
    first = log.segments[0]
    first.index_path.write_bytes(b"\x00" * 7)  # not a whole entry
    log = reopen(directory, SMALL_SEGMENTS)
    assert all_offsets(log) == list(range(ends[-1]))
    for offset in range(ends[-1]):
        assert log.read(offset, 1)  # the rebuilt index finds every batch


def test_an_overlapping_segment_is_deleted(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory, [100] * 30, SMALL_SEGMENTS)
    crash(log)
    first_end = log.segments[0].next_offset
    # A segment that does not start where its predecessor ends is left over from an interrupted truncation
    # (which deletes the later segments): it and everything after it go.
    (directory / f"{1:020d}.log").write_bytes(b"")
    log = reopen(directory, SMALL_SEGMENTS)
    assert [s.base_offset for s in log.segments] == [0]
    assert log.log_end_offset == first_end
    assert all_offsets(log) == list(range(first_end))


def test_a_gap_between_segments_drops_the_later_ones(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory, [100] * 60, SMALL_SEGMENTS)
    segments = list(log.segments)
    log.close()
    segments[2].log_path.unlink()
    log = reopen(directory, SMALL_SEGMENTS)
    assert [s.base_offset for s in log.segments] == [s.base_offset for s in segments[:2]]
    assert log.log_end_offset == segments[2].base_offset


def test_leftover_temporary_and_orphan_index_files_are_removed(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory, [10] * 3)
    log.close()
    (directory / "00000000000000000000.index.tmp").write_bytes(b"junk")
    (directory / f"{99:020d}.index").write_bytes(b"")
    reopen(directory).close()
    assert not (directory / "00000000000000000000.index.tmp").exists()
    assert not (directory / f"{99:020d}.index").exists()
