"""Transactions in the log: open transactions, markers, the last stable offset, the aborted transaction index (kept
on disk, rebuilt by recovery, cut by truncation), the producer rules and KIP-890's verification guard, and the
cleaner's transactional semantics. Storage only: the coordinator and the clients are tested elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kbroker.common import KafkaError
from kbroker.log.cleaner import clean_log
from kbroker.log.config import CLEANUP_COMPACT, LogConfig
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.log.producer_state import SNAPSHOT_SUFFIX, ProducerStateManager
from kbroker.log.segment import TXN_INDEX_SUFFIX, segment_file_name
from kbroker.log.txn_index import AbortedTxn, decode_entries
from protocol.errors import ErrorCode
from protocol.records import Record, RecordBatch, build_batch, iter_batches, read_end_txn_marker

pytestmark = pytest.mark.timeout(60)

P1, P2, P3 = 7001, 7002, 7003


class Producer:
    """A transactional producer's batches: sequences numbered as a client numbers them."""

    def __init__(self, pid: int, epoch: int = 0) -> None:
        self.pid, self.epoch, self.seq = pid, epoch, 0

    def batch(
        self, count: int = 2, key: bytes | None = None, value: bytes = b"v", txn: bool = True
    ) -> bytearray:
        records = [Record(i, 1000, key, value) for i in range(count)]
        data = build_batch(
            records,
            producer_id=self.pid,
            producer_epoch=self.epoch,
            base_sequence=self.seq,
            is_transactional=txn,
        )
        self.seq += count
        return data


def open_log(directory: Path, config: LogConfig | None = None) -> PartitionLog:
    log = PartitionLog.open(directory, config or LogConfig(segment_bytes=100_000), now_ms=0)
    return log


def append(log: PartitionLog, data: bytearray) -> AppendInfo:
    info = log.append_as_leader(data, leader_epoch=0, now_ms=0)
    log.advance_high_watermark(log.log_end_offset)
    return info


def end_txn(log: PartitionLog, producer: Producer, commit: bool, coordinator_epoch: int = 0) -> AppendInfo:
    info = log.append_end_txn_marker(producer.pid, producer.epoch, coordinator_epoch, commit, 0, 0)
    log.advance_high_watermark(log.log_end_offset)
    return info


def refused(fn: object, *args: object, **kwargs: object) -> ErrorCode:
    assert callable(fn)
    with pytest.raises(KafkaError) as e:
        fn(*args, **kwargs)
    return e.value.code


def all_aborted(log: PartitionLog) -> list[AbortedTxn]:
    return [txn for segment in log.segments for txn in segment.aborted_txns]


@pytest.fixture
def log(tmp_path: Path) -> PartitionLog:
    return open_log(tmp_path / "t-0")


def test_the_lso_stops_at_the_oldest_open_transaction(log: PartitionLog) -> None:
    p1, p2 = Producer(P1), Producer(P2)
    append(log, build_batch([Record(0, 1000, None, b"plain")]))
    first1 = append(log, p1.batch()).base_offset
    assert log.last_stable_offset == first1 == 1
    first2 = append(log, p2.batch()).base_offset
    append(log, p1.batch())
    assert log.last_stable_offset == first1
    assert log.high_watermark == log.log_end_offset
    end_txn(log, p1, commit=True)
    assert log.last_stable_offset == first2, "p2's transaction is still open"
    end_txn(log, p2, commit=False)
    assert log.last_stable_offset == log.high_watermark == log.log_end_offset


def test_an_ended_transaction_is_unstable_until_the_high_watermark_passes_its_marker(
    log: PartitionLog,
) -> None:
    p1 = Producer(P1)
    log.append_as_leader(p1.batch(), leader_epoch=0, now_ms=0)
    log.advance_high_watermark(log.log_end_offset)
    marker = log.append_end_txn_marker(P1, 0, 0, True, 0, 0).base_offset
    assert log.high_watermark == marker
    assert log.last_stable_offset == 0, (
        "the marker is not replicated: the transaction's records stay invisible"
    )
    log.advance_high_watermark(marker + 1)
    assert log.last_stable_offset == marker + 1


def test_aborted_transactions_are_indexed_in_the_segment_of_their_marker(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", LogConfig(segment_bytes=250))
    p1, p2 = Producer(P1), Producer(P2)
    first1 = append(log, p1.batch()).base_offset
    first2 = append(log, p2.batch()).base_offset
    for _ in range(6):  # several segments
        append(log, p1.batch())
    marker1 = end_txn(log, p1, commit=False).base_offset
    marker2 = end_txn(log, p2, commit=True).base_offset
    assert len(log.segments) > 2
    holder = next(s for s in log.segments if s.base_offset <= marker1 < s.next_offset)
    assert holder.aborted_txns == [AbortedTxn(P1, first1, marker1, first2)], "LSO after the abort: p2's start"
    assert all_aborted(log) == holder.aborted_txns, "a commit is not indexed"
    # A read_committed fetch of any range overlapping p1's records learns of the abort, whichever segment it reads.
    assert log.aborted_transactions(0, 1) == holder.aborted_txns
    assert (
        log.aborted_transactions(log.segments[1].base_offset, log.segments[1].next_offset)
        == holder.aborted_txns
    )
    assert log.aborted_transactions(marker1 + 1, marker2 + 1) == []


def test_markers_are_control_batches_of_the_producer(log: PartitionLog) -> None:
    p1 = Producer(P1, epoch=3)
    append(log, p1.batch())
    end_txn(log, p1, commit=False, coordinator_epoch=9)
    batches = list(iter_batches(log.read(0, 1 << 20)))
    marker = batches[-1]
    assert marker.is_control
    assert marker.is_transactional
    assert (marker.producer_id, marker.producer_epoch, marker.base_sequence) == (P1, 3, -1)
    found = read_end_txn_marker(RecordBatch(bytearray(marker.buf)))
    assert found is not None
    assert (found.commit, found.coordinator_epoch) == (False, 9)


def test_marker_fencing(log: PartitionLog) -> None:
    p1 = Producer(P1, epoch=2)
    append(log, p1.batch())
    end_txn(log, p1, commit=True, coordinator_epoch=5)
    assert refused(log.append_end_txn_marker, P1, 1, 5, True, 0, 0) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert (
        refused(log.append_end_txn_marker, P1, 2, 4, True, 0, 0) == ErrorCode.TRANSACTION_COORDINATOR_FENCED
    )
    # A marker may bump the epoch (the coordinator fencing the producer): its sequences start again.
    log.append_end_txn_marker(P1, 3, 5, False, 0, 0)
    stale = p1.batch()
    assert refused(log.append_as_leader, stale, 0, 0) == ErrorCode.INVALID_PRODUCER_EPOCH
    bumped = Producer(P1, epoch=3)
    append(log, bumped.batch())


def test_a_plain_batch_inside_an_open_transaction_is_refused(log: PartitionLog) -> None:
    p1 = Producer(P1)
    append(log, p1.batch())
    plain = p1.batch(txn=False)
    assert refused(log.append_as_leader, plain, 0, 0) == ErrorCode.INVALID_TXN_STATE


def test_control_batches_from_clients_are_refused(log: PartitionLog) -> None:
    data = build_batch([Record(0, 0, b"\0\0\0\1", b"\0\0\0\0\0\0")], producer_id=P1, producer_epoch=0,
                       base_sequence=0, is_transactional=True, is_control=True)  # fmt: skip
    assert refused(log.append_as_leader, data, 0, 0) == ErrorCode.INVALID_RECORD


def test_kip_890_a_batch_that_begins_a_transaction_needs_the_verification_guard(log: PartitionLog) -> None:
    p1 = Producer(P1)
    first = p1.batch()
    assert (
        refused(log.append_as_leader, first, 0, 0, verification_required=True) == ErrorCode.INVALID_TXN_STATE
    )
    guard = log.producer_state.begin_verification(P1, 0)
    log.append_as_leader(first, 0, 0, verification_required=True, verification_guard=guard)
    # Within the open transaction, no guard is needed.
    log.append_as_leader(p1.batch(), 0, 0, verification_required=True)
    # A guard handed out before a marker ended the transaction is void: a late batch cannot reopen it (the hanging
    # transaction KIP-890 prevents).
    log.append_end_txn_marker(P1, 0, 0, False, 0, 0)
    stale_guard = guard
    late = p1.batch()
    assert (
        refused(log.append_as_leader, late, 0, 0, verification_required=True, verification_guard=stale_guard)
        == ErrorCode.INVALID_TXN_STATE
    )
    assert not log.producer_state.has_ongoing_txn(P1, 0)


def test_state_survives_a_clean_reopen(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, LogConfig(segment_bytes=300))
    p1, p2 = Producer(P1), Producer(P2)
    first1 = append(log, p1.batch()).base_offset
    for _ in range(4):
        append(log, p1.batch())
    marker = end_txn(log, p1, commit=False).base_offset
    first2 = append(log, p2.batch()).base_offset
    aborted = all_aborted(log)
    assert aborted == [AbortedTxn(P1, first1, marker, marker + 1)]
    log.close()
    # The index file is Kafka's: 34-byte entries in the segment of the marker.
    holder = next(s for s in log.segments if s.base_offset <= marker < s.next_offset)
    txn_index = directory / segment_file_name(holder.base_offset, TXN_INDEX_SUFFIX)
    assert decode_entries(txn_index.read_bytes()) == aborted
    assert txn_index.stat().st_size == 34
    reopened = open_log(directory, LogConfig(segment_bytes=300))
    assert all_aborted(reopened) == aborted
    assert reopened.last_stable_offset == first2, "p2's open transaction came back from the snapshot"
    assert reopened.producer_state.has_ongoing_txn(P2, 0)


@pytest.mark.parametrize("lose", ["snapshots", "indexes", "both"])
def test_recovery_rebuilds_open_transactions_and_the_aborted_index(tmp_path: Path, lose: str) -> None:
    directory = tmp_path / "t-0"
    config = LogConfig(segment_bytes=300)
    log = open_log(directory, config)
    p1, p2, p3 = Producer(P1), Producer(P2), Producer(P3)
    append(log, p1.batch())
    append(log, p2.batch())
    for _ in range(3):
        append(log, p1.batch())
    end_txn(log, p1, commit=False)
    open_first = append(log, p3.batch()).base_offset
    end_txn(log, p2, commit=False)
    append(log, p3.batch())
    expected = all_aborted(log)
    assert len(expected) == 2
    log.close()
    for name in os.listdir(directory):
        if (lose in ("snapshots", "both") and name.endswith(SNAPSHOT_SUFFIX)) or (
            lose in ("indexes", "both") and name.endswith((".index", ".timeindex", TXN_INDEX_SUFFIX))
        ):
            (directory / name).unlink()
    reopened = open_log(directory, config)
    assert all_aborted(reopened) == expected
    reopened.advance_high_watermark(reopened.log_end_offset)
    assert reopened.last_stable_offset == open_first
    assert reopened.producer_state.has_ongoing_txn(P3, 0)
    assert not reopened.producer_state.has_ongoing_txn(P1, 0)


def test_truncation_removes_later_aborts_and_reopens_their_transactions(log: PartitionLog) -> None:
    p1 = Producer(P1)
    first = append(log, p1.batch()).base_offset
    marker = end_txn(log, p1, commit=False).base_offset
    assert all_aborted(log)
    log.truncate_to(marker)
    assert all_aborted(log) == []
    assert log.producer_state.has_ongoing_txn(P1, 0)
    log.advance_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == first


def test_snapshots_keep_open_transactions() -> None:
    state = ProducerStateManager()
    p1 = Producer(P1, epoch=1)
    header = RecordBatch(p1.batch())
    state.update(header, 10, 1000)
    state.complete_txn(P1, 1, 4, True, 12, 1000)
    state.update(RecordBatch(p1.batch()), 13, 1000)
    offset, loaded = ProducerStateManager.from_snapshot(state.to_snapshot(20))
    assert offset == 20
    entry = loaded.producers[P1]
    assert (entry.producer_epoch, entry.coordinator_epoch, entry.current_txn_first_offset) == (1, 4, 13)
    assert loaded.ongoing_txns == {13: P1}
    assert loaded.first_unstable_offset(20) == 13


def test_producers_with_open_transactions_do_not_expire(log: PartitionLog) -> None:
    append(log, Producer(P1).batch())
    append(log, Producer(P2).batch(txn=False))
    assert log.producer_state.remove_expired(now_ms=10**9, expiration_ms=1) == 1
    assert set(log.producer_state.producers) == {P1}


# ---- the cleaner ---------------------------------------------------------------------------------------------------


def compacted(directory: Path) -> PartitionLog:
    return open_log(directory, LogConfig(segment_bytes=350, cleanup_policy=frozenset({CLEANUP_COMPACT})))


def values_by_key(log: PartitionLog) -> dict[bytes, bytes | None]:
    from protocol.records import decode_records

    out: dict[bytes, bytes | None] = {}
    for batch in iter_batches(log.read(log.log_start_offset, 1 << 24, log.log_end_offset)):
        if batch.is_control:
            continue
        for record in decode_records(batch):
            assert record.key is not None
            out[record.key] = record.value
    return out


def test_the_cleaner_drops_aborted_records_and_keeps_committed_ones_and_markers(tmp_path: Path) -> None:
    log = compacted(tmp_path / "c-0")
    committed, aborted = Producer(P1), Producer(P2)
    append(log, committed.batch(key=b"k", value=b"committed"))
    end_txn(log, committed, commit=True)
    append(log, aborted.batch(key=b"k", value=b"aborted"))
    append(log, aborted.batch(key=b"other", value=b"aborted"))
    end_txn(log, aborted, commit=False)
    markers_before = sum(1 for b in iter_batches(log.read(0, 1 << 24)) if b.is_control)
    for i in range(12):
        append(log, build_batch([Record(0, 1000, b"filler-%d" % i, b"x" * 40)]))
    log.roll(0)
    assert clean_log(log, now_ms=0) is not None
    # An aborted record neither survives nor displaces the committed value of its key.
    assert values_by_key(log)[b"k"] == b"committed"
    assert b"other" not in values_by_key(log)
    assert sum(1 for b in iter_batches(log.read(0, 1 << 24)) if b.is_control) == markers_before
    assert len(all_aborted(log)) == 1, "the index entry stays with its marker"


def test_the_cleaner_stops_at_the_last_stable_offset(tmp_path: Path) -> None:
    log = compacted(tmp_path / "c-0")
    append(log, build_batch([Record(0, 1000, b"k", b"old")]))
    open_txn = Producer(P1)
    first = append(log, open_txn.batch(key=b"k", value=b"undecided")).base_offset
    for i in range(12):
        append(log, build_batch([Record(0, 1000, b"k", b"v%d" % i)]))
    log.roll(0)
    assert log.last_stable_offset == first
    # Nothing from the open transaction's first offset on may be cleaned (the later values of "k" would remove
    # both "old" and the undecided record).
    stats = clean_log(log, now_ms=0)
    assert stats is None or stats.end_offset <= first
    assert values_of(log, b"k")[:2] == [b"old", b"undecided"]
    end_txn(log, open_txn, commit=False)
    log.roll(0)
    assert clean_log(log, now_ms=0) is not None
    assert values_of(log, b"k") == [b"v11"]


def values_of(log: PartitionLog, key: bytes) -> list[bytes | None]:
    from protocol.records import decode_records

    return [
        record.value
        for batch in iter_batches(log.read(log.log_start_offset, 1 << 24, log.log_end_offset))
        if not batch.is_control
        for record in decode_records(batch)
        if record.key == key
    ]
