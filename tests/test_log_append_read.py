"""PartitionLog: offset assignment, reads, segment rolls, timestamps, truncation, follower appends, epochs."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict, Unpack

import pytest

from kbroker.common import KafkaError
from kbroker.log.config import LogConfig
from kbroker.log.leader_epoch import LeaderEpochCache
from kbroker.log.partition_log import PartitionLog
from protocol import compression
from protocol.errors import ErrorCode
from protocol.records import LOG_APPEND_TIME, Record, RecordBatch, build_batch, decode_records, iter_batches

pytestmark = pytest.mark.timeout(60)

SMALL = LogConfig(segment_bytes=4096, index_interval_bytes=256)


class BatchOptions(TypedDict, total=False):
    compression: int
    producer_id: int
    producer_epoch: int
    base_sequence: int


def batch(
    count: int = 1, timestamp: int = 1000, value: bytes = b"v" * 20, **options: Unpack[BatchOptions]
) -> bytearray:
    return build_batch([Record(i, timestamp + i, b"k%d" % i, value) for i in range(count)], **options)


def open_log(tmp_path: Path, config: LogConfig = SMALL) -> PartitionLog:
    return PartitionLog.open(tmp_path / "topic-0", config, now_ms=1000)


def fill(log: PartitionLog, batches: int, records_per_batch: int = 3, timestamp: int = 1000) -> None:
    for i in range(batches):
        log.append_as_leader(batch(records_per_batch, timestamp + 10 * i), leader_epoch=0, now_ms=2000)
    log.advance_high_watermark(log.log_end_offset)


def offsets(data: bytes) -> list[int]:
    return [record.offset for b in iter_batches(data) for record in decode_records(b)]


def test_append_assigns_consecutive_offsets_and_stamps_epoch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    first = log.append_as_leader(batch(3), leader_epoch=7, now_ms=5)
    second = log.append_as_leader(batch(2), leader_epoch=7, now_ms=5)
    assert (first.base_offset, first.last_offset, first.log_append_time) == (0, 2, -1)
    assert (second.base_offset, second.last_offset) == (3, 4)
    assert log.log_end_offset == 5
    assert log.high_watermark == 0, "the broker advances it once the write is acknowledged"
    assert log.advance_high_watermark(5)
    assert not log.advance_high_watermark(4), "never backwards"
    assert not log.advance_high_watermark(100), "never past the log end"
    assert log.high_watermark == 5
    batches = list(iter_batches(log.read(0, 1 << 20)))
    assert [(b.base_offset, b.partition_leader_epoch) for b in batches] == [(0, 7), (3, 7)]
    assert all(b.verify_crc() for b in batches)
    assert log.leader_epoch_cache.entries == [(7, 0)]


def test_append_accepts_a_read_only_buffer(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    data = bytes(batch(2))
    assert log.append_as_leader(memoryview(data), 0, 0).base_offset == 0
    assert log.append_as_leader(data, 0, 0).base_offset == 2


def test_log_append_time_rewrites_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(message_timestamp_type="LogAppendTime"))
    info = log.append_as_leader(batch(3, timestamp=5), leader_epoch=0, now_ms=123_456)
    assert info.log_append_time == 123_456
    log.advance_high_watermark(log.log_end_offset)
    (stored,) = iter_batches(log.read(0, 1 << 20))
    assert stored.verify_crc()
    assert stored.timestamp_type == LOG_APPEND_TIME
    assert [r.timestamp for r in decode_records(stored)] == [123_456] * 3
    assert log.offset_for_timestamp(123_000) == (0, 123_456)


def test_append_rejects_bad_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(max_message_bytes=200))
    two = batch(1) + batch(1)
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(two, 0, 0)
    assert e.value.code == ErrorCode.INVALID_RECORD
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(b"", 0, 0)
    assert e.value.code == ErrorCode.INVALID_RECORD
    corrupt = batch(1)
    corrupt[-1] ^= 1
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(corrupt, 0, 0)
    assert e.value.code == ErrorCode.CORRUPT_MESSAGE
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(batch(1, value=b"x" * 300), 0, 0)
    assert e.value.code == ErrorCode.MESSAGE_TOO_LARGE
    assert log.log_end_offset == 0


def test_compacted_topics_need_keys(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(cleanup_policy=frozenset({"compact"})))
    log.append_as_leader(batch(2, compression=compression.LZ4), 0, 0)
    keyless = build_batch([Record(0, 0, None, b"v")])
    with pytest.raises(KafkaError) as e:
        log.append_as_leader(keyless, 0, 0)
    assert e.value.code == ErrorCode.INVALID_RECORD


def test_segments_roll_by_size_and_reads_cross_them(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 200)
    assert len(log.segments) > 5
    for older, newer in zip(log.segments, log.segments[1:], strict=False):
        assert older.size <= SMALL.segment_bytes
        assert older.next_offset == newer.base_offset
    assert sorted(p.name for p in log.directory.glob("*.log")) == [
        f"{s.base_offset:020d}.log" for s in log.segments
    ]
    # every offset can be fetched, from the batch that contains it
    for fetch_offset in range(0, log.log_end_offset):
        data = log.read(fetch_offset, 100)
        first = next(iter_batches(data))
        assert first.base_offset <= fetch_offset <= first.last_offset
    # a consumer reading everything sees every offset exactly once, in order
    position, seen = 0, []
    while position < log.log_end_offset:
        data = log.read(position, 500)
        got = offsets(data)
        seen += got
        position = got[-1] + 1
    assert seen == list(range(log.log_end_offset))


def test_segments_roll_by_age(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_ms=1000))
    log.append_as_leader(batch(1), 0, now_ms=10_000)
    log.append_as_leader(batch(1), 0, now_ms=10_999)
    assert len(log.segments) == 1
    log.append_as_leader(batch(1), 0, now_ms=11_000)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_read_returns_whole_batches_within_max_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig())
    fill(log, 10, records_per_batch=2)
    one_batch_size = next(iter_batches(log.read(0, 1))).size
    # at least one batch even if it is larger than max_bytes
    assert len(log.read(0, 1)) == one_batch_size
    # then as many whole batches as fit
    assert len(log.read(0, 3 * one_batch_size + 5)) == 3 * one_batch_size
    # the batch containing the fetch offset comes first
    assert offsets(log.read(5, one_batch_size))[0] == 4
    # never at or above max_offset (the high watermark by default)
    assert offsets(log.read(0, 1 << 20, max_offset=6)) == list(range(6))
    log.high_watermark = 4
    assert offsets(log.read(0, 1 << 20)) == [0, 1, 2, 3]
    assert log.read(4, 1 << 20) == b""
    assert log.read(4, 1 << 20, max_offset=log.log_end_offset) != b""


def test_read_out_of_range(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 3)
    assert log.read(log.log_end_offset, 100) == b""
    for bad in (-1, log.log_end_offset + 1):
        with pytest.raises(KafkaError) as e:
            log.read(bad, 100)
        assert e.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_offset_for_timestamp_is_exact_within_a_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    # batch i holds 3 records stamped 1000 + 10 i, + 1, + 2
    fill(log, 100)
    assert log.offset_for_timestamp(0) == (0, 1000)
    assert log.offset_for_timestamp(1000) == (0, 1000)
    assert log.offset_for_timestamp(1001) == (1, 1001)
    assert log.offset_for_timestamp(1003) == (3, 1010)
    assert log.offset_for_timestamp(1502) == (152, 1502)
    assert log.offset_for_timestamp(1992) == (299, 1992)
    assert log.offset_for_timestamp(1993) is None
    log.high_watermark = 150
    assert log.offset_for_timestamp(1502) is None, "not above the high watermark"
    assert log.offset_for_timestamp(1492) == (149, 1492)


def test_offset_for_timestamp_with_unordered_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(index_interval_bytes=0))
    for ts in (500, 100, 900, 300, 950):
        log.append_as_leader(batch(1, timestamp=ts), 0, 0)
    log.advance_high_watermark(log.log_end_offset)
    assert log.offset_for_timestamp(400) == (0, 500)
    assert log.offset_for_timestamp(600) == (2, 900)
    assert log.offset_for_timestamp(920) == (4, 950)
    assert log.max_timestamp_offset() == (4, 950)


def test_max_timestamp_offset_finds_the_exact_record(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.max_timestamp_offset() is None
    fill(log, 50)
    records = [Record(0, 7000, b"a", b"1"), Record(1, 9000, b"b", b"2"), Record(2, 8000, b"c", b"3")]
    log.append_as_leader(build_batch(records), 0, 0)
    fill(log, 50)
    assert log.max_timestamp_offset() == (151, 9000)


def test_follower_append_keeps_offsets_and_epochs(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "leader")
    for epoch in (0, 0, 3, 3, 5):
        leader.append_as_leader(batch(2), leader_epoch=epoch, now_ms=0)
    leader.advance_high_watermark(leader.log_end_offset)
    fetched = leader.read(0, 1 << 20)
    follower = open_log(tmp_path / "follower")
    info = follower.append_as_follower(fetched + fetched[:30], now_ms=0)  # with a partial batch at the end
    assert info is not None
    assert (info.base_offset, info.last_offset) == (0, 9)
    assert follower.log_end_offset == leader.log_end_offset
    assert follower.leader_epoch_cache.entries == [(0, 0), (3, 4), (5, 8)]
    follower.advance_high_watermark(follower.log_end_offset)
    assert follower.read(0, 1 << 20) == fetched
    with pytest.raises(KafkaError):
        follower.append_as_follower(fetched, now_ms=0)  # offsets below the log end


def test_truncate_to_then_append_again(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 100)
    segments_before = len(log.segments)
    log.truncate_to(150)
    assert log.log_end_offset == 150
    assert log.high_watermark == 150
    assert len(log.segments) < segments_before
    assert not log.segments[-1].index_path.exists(), "the active segment has no index files"
    info = log.append_as_leader(batch(3), 0, 0)
    assert info.base_offset == 150
    log.advance_high_watermark(log.log_end_offset)
    assert offsets(log.read(148, 1 << 20))[0] == 147
    assert offsets(log.read(150, 1 << 20)) == [150, 151, 152]
    # truncating inside a batch removes the whole batch
    log.truncate_to(152)
    assert log.log_end_offset == 150


def test_truncate_fully_and_start_at(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 30)
    log.truncate_fully_and_start_at(1000)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (1000, 1000, 1000)
    assert [s.base_offset for s in log.segments] == [1000]
    assert log.append_as_leader(batch(1), 0, 0).base_offset == 1000
    log.close()
    reopened = open_log(tmp_path)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (1000, 1001)


def test_leader_epoch_cache(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    assert cache.end_offset_for(0, 10) == (-1, -1)
    assert cache.assign(1, 0)
    assert not cache.assign(1, 5), "only newer epochs"
    assert cache.assign(3, 10)
    assert cache.assign(4, 20)
    assert cache.end_offset_for(4, 25) == (4, 25)
    assert cache.end_offset_for(3, 25) == (3, 20)
    assert cache.end_offset_for(2, 25) == (1, 10), (
        "an epoch we never had ends where the next known one starts"
    )
    assert cache.end_offset_for(0, 25) == (0, 0)
    assert cache.end_offset_for(9, 25) == (-1, -1)
    assert cache.epoch_for_offset(15) == 3
    assert LeaderEpochCache(tmp_path).entries == [(1, 0), (3, 10), (4, 20)], "persisted"
    cache.truncate_from_end(15)
    assert cache.entries == [(1, 0), (3, 10)]
    cache.truncate_from_start(12)
    assert cache.entries == [(3, 12)]
    assert LeaderEpochCache(tmp_path).entries == [(3, 12)]
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n1\n3 12\n"


def test_corrupt_leader_epoch_checkpoint_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(2), leader_epoch=2, now_ms=0)
    log.append_as_leader(batch(2), leader_epoch=4, now_ms=0)
    log.close()
    (log.directory / "leader-epoch-checkpoint").write_text("garbage")
    assert open_log(tmp_path).leader_epoch_cache.entries == [(2, 0), (4, 2)]


def test_stored_batches_are_unchanged_apart_from_offset_and_epoch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    sent = batch(5, compression=compression.ZSTD, producer_id=3, producer_epoch=0, base_sequence=0)
    original = bytes(sent)
    log.append_as_leader(bytes(sent), leader_epoch=2, now_ms=0)
    log.append_as_leader(batch(1), 0, 0)
    log.append_as_leader(original, leader_epoch=2, now_ms=0)  # a duplicate: not written again
    log.advance_high_watermark(log.log_end_offset)
    stored = log.read(0, 1)
    assert stored[16:] == original[16:], "magic, CRC and everything under it are as sent"
    assert RecordBatch(stored).partition_leader_epoch == 2


def test_an_epoch_lost_to_a_power_cut_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    """An empty log's first epoch is recorded without fsync; the records appended at it are fsynced later. A power
    cut can keep the records and lose the entry (the checkpoint file, or its newest version): recovery takes the
    epochs back from the batches, or a follower could not truncate where it diverges from its leader."""
    log = open_log(tmp_path)
    log.leader_epoch_cache.assign(0, 0, durable=False)
    log.append_as_leader(batch(2), leader_epoch=0, now_ms=0)
    log.close()
    checkpoint = log.directory / "leader-epoch-checkpoint"
    checkpoint.unlink()  # the power cut
    assert open_log(tmp_path).leader_epoch_cache.entries == [(0, 0)]
    # The same for a newer epoch lost while the file kept an older one.
    log = open_log(tmp_path)
    log.leader_epoch_cache.assign(3, log.log_end_offset)
    kept = checkpoint.read_bytes()
    log.append_as_leader(batch(2), leader_epoch=3, now_ms=0)
    log.append_as_leader(batch(1), leader_epoch=5, now_ms=0)
    log.close()
    checkpoint.write_bytes(kept)
    assert open_log(tmp_path).leader_epoch_cache.entries == [(0, 0), (3, 2), (5, 4)]
