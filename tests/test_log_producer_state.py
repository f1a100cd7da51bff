"""Idempotent producers: retries of the last five batches, sequence gaps, fencing, and state after a reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbroker.common import KafkaError
from kbroker.log.config import LogConfig
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.log.producer_state import ProducerStateManager
from protocol.errors import ErrorCode
from protocol.records import INT32_MAX, Record, RecordBatch, build_batch

pytestmark = pytest.mark.timeout(60)

PID = 4000


def idempotent(seq: int, count: int = 2, epoch: int = 0, pid: int = PID, timestamp: int = 1000) -> bytearray:
    records = [Record(i, timestamp, None, b"seq %d" % (seq + i)) for i in range(count)]
    return build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def append(log: PartitionLog, data: bytearray) -> AppendInfo:
    return log.append_as_leader(data, leader_epoch=0, now_ms=0)


def refused(log: PartitionLog, data: bytearray) -> ErrorCode:
    end = log.log_end_offset
    with pytest.raises(KafkaError) as e:
        append(log, data)
    assert log.log_end_offset == end, "nothing written"
    return e.value.code


@pytest.fixture
def log(tmp_path: Path) -> PartitionLog:
    return PartitionLog.open(tmp_path / "t-0", LogConfig(segment_bytes=1024), now_ms=0)


def test_each_of_the_last_five_batches_is_a_duplicate(log: PartitionLog) -> None:
    originals = [append(log, idempotent(seq)) for seq in range(0, 14, 2)]  # seven batches of two
    end = log.log_end_offset
    for seq, original in list(zip(range(0, 14, 2), originals, strict=True))[-5:]:
        again = append(log, idempotent(seq))
        assert again.duplicate
        assert (again.base_offset, again.last_offset) == (original.base_offset, original.last_offset)
    assert log.log_end_offset == end
    # older than the last five: no longer recognised, and out of sequence
    assert refused(log, idempotent(2)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # the next sequence is still accepted
    assert append(log, idempotent(14)).base_offset == end


def test_a_retry_must_match_both_sequences(log: PartitionLog) -> None:
    append(log, idempotent(0, count=3))
    assert refused(log, idempotent(0, count=2)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_out_of_order_sequences(log: PartitionLog) -> None:
    append(log, idempotent(0))
    assert refused(log, idempotent(3)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "a gap"
    assert refused(log, idempotent(1)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "overlaps"
    assert append(log, idempotent(2)).base_offset == 2


def test_epochs(log: PartitionLog) -> None:
    append(log, idempotent(0, epoch=3))
    append(log, idempotent(2, epoch=3))
    assert refused(log, idempotent(4, epoch=2)) == ErrorCode.INVALID_PRODUCER_EPOCH, "fenced"
    assert refused(log, idempotent(0, epoch=2)) == ErrorCode.INVALID_PRODUCER_EPOCH, (
        "not a duplicate when fenced"
    )
    assert refused(log, idempotent(5, epoch=4)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, (
        "new epoch starts at 0"
    )
    bumped = append(log, idempotent(0, epoch=4))
    assert not bumped.duplicate, "same sequence as an old-epoch batch, but a new epoch"
    assert append(log, idempotent(0, epoch=4)).duplicate
    assert refused(log, idempotent(2, epoch=3)) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_unknown_producers_are_accepted_at_any_sequence(log: PartitionLog) -> None:
    # Kafka >= 2.5: a producer whose state was removed (retention, DeleteRecords, expiry) continues its sequence
    assert append(log, idempotent(500, pid=77)).base_offset == 0
    assert refused(log, idempotent(600, pid=77)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert append(log, idempotent(502, pid=77)).base_offset == 2


def test_sequences_wrap_at_int32_max(log: PartitionLog) -> None:
    append(log, idempotent(INT32_MAX - 1, count=2))
    append(log, idempotent(0, count=3))
    assert append(log, idempotent(0, count=3)).duplicate


def test_producers_are_independent(log: PartitionLog) -> None:
    append(log, idempotent(0, pid=1))
    append(log, idempotent(0, pid=2))
    assert append(log, idempotent(0, pid=1)).duplicate
    assert append(log, idempotent(2, pid=2)).base_offset == 4
    # non-idempotent batches are never checked
    plain = build_batch([Record(0, 0, None, b"x")])
    assert append(log, plain).base_offset == 6
    assert append(log, build_batch([Record(0, 0, None, b"x")])).base_offset == 7


@pytest.mark.parametrize("clean", [True, False])
def test_state_survives_a_reopen(tmp_path: Path, clean: bool) -> None:
    config = LogConfig(segment_bytes=600)
    log = PartitionLog.open(tmp_path / "t-0", config, now_ms=0)
    originals = [append(log, idempotent(seq)) for seq in range(0, 40, 2)]
    append(log, idempotent(0, pid=9, epoch=5))
    assert len(log.segments) > 3, "rolls wrote snapshots"
    log.close(clean=clean)

    log = PartitionLog.open(tmp_path / "t-0", config, now_ms=0)
    for seq, original in list(zip(range(0, 40, 2), originals, strict=True))[-5:]:
        again = append(log, idempotent(seq))
        assert again.duplicate
        assert again.base_offset == original.base_offset
    assert refused(log, idempotent(44)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert refused(log, idempotent(2, pid=9, epoch=4)) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert append(log, idempotent(40)).base_offset == originals[-1].last_offset + 1 + 2  # after pid 9's batch


def test_state_is_rebuilt_after_a_torn_tail(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig(), now_ms=0)
    for seq in range(0, 10, 2):
        append(log, idempotent(seq))
    path = log.segments[-1].log_path
    log.close(clean=False)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 10)  # the last batch (seq 8-9) is torn
    log = PartitionLog.open(tmp_path / "t-0", LogConfig(), now_ms=0)
    assert log.log_end_offset == 8
    # the torn batch was never acknowledged as durable: the producer's retry is appended, not a duplicate
    info = append(log, idempotent(8))
    assert (info.duplicate, info.base_offset) == (False, 8)


def test_a_corrupt_snapshot_is_ignored(tmp_path: Path) -> None:
    config = LogConfig(segment_bytes=600)
    log = PartitionLog.open(tmp_path / "t-0", config, now_ms=0)
    for seq in range(0, 40, 2):
        append(log, idempotent(seq))
    log.close()
    for snapshot in (tmp_path / "t-0").glob("*.snapshot"):
        data = bytearray(snapshot.read_bytes())
        data[-1] ^= 0xFF
        snapshot.write_bytes(data)
    log = PartitionLog.open(tmp_path / "t-0", config, now_ms=0)
    assert append(log, idempotent(38)).duplicate


def test_truncation_rebuilds_the_state(log: PartitionLog) -> None:
    for seq in range(0, 20, 2):
        append(log, idempotent(seq))
    log.truncate_to(12)  # keeps sequences 0-11
    assert append(log, idempotent(10)).duplicate
    assert append(log, idempotent(12)).base_offset == 12


def test_expiry_and_snapshot_round_trip() -> None:
    state = ProducerStateManager()
    state.update(RecordBatch(idempotent(0, pid=1, timestamp=100)), 0, 100)
    state.update(RecordBatch(idempotent(0, pid=2, timestamp=5000)), 2, 5000)
    offset, copy = ProducerStateManager.from_snapshot(state.to_snapshot(4))
    assert offset == 4
    assert {pid: (e.producer_epoch, list(e.batches)) for pid, e in copy.producers.items()} == {
        pid: (e.producer_epoch, list(e.batches)) for pid, e in state.producers.items()
    }
    assert state.remove_expired(now_ms=6000, expiration_ms=2000) == 1
    assert list(state.producers) == [2]
    with pytest.raises(ValueError, match="checksum"):
        ProducerStateManager.from_snapshot(state.to_snapshot(4)[:-1] + b"\x00")
