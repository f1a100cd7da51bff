"""Log compaction on a PartitionLog: what is kept, what is removed, what never changes, and crash safety."""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import kbroker.log.cleaner
import kbroker.log.files
import kbroker.log.partition_log
import kbroker.log.segment_swap
from kbroker.log.cleaner import (
    CleaningPlan,
    clean_log,
    commit_cleaning,
    discard_segments,
    plan_cleaning,
)
from kbroker.log.config import LogConfig
from kbroker.log.loader import CLEANER_CHECKPOINT_FILE, CLEANER_GAPS_FILE
from kbroker.log.partition_log import PartitionLog
from protocol import compression
from protocol.records import LOG_APPEND_TIME, Record, RecordBatch, build_batch, decode_records, iter_batches

pytestmark = pytest.mark.timeout(120)

MINUTE = 60 * 1000
HOUR = 60 * MINUTE
T0 = 1_700_000_000_000
COMPACT = frozenset({"compact"})


def compact_config(**overrides: Any) -> LogConfig:
    settings: dict[str, Any] = {
        "segment_bytes": 2048,
        "index_interval_bytes": 256,
        "cleanup_policy": COMPACT,
        "min_cleanable_dirty_ratio": 0.01,
    }
    settings.update(overrides)
    return LogConfig(**settings)


def open_log(directory: Path, config: LogConfig) -> PartitionLog:
    log = PartitionLog.open(directory, config, now_ms=T0)
    log.advance_high_watermark(log.log_end_offset)
    return log


Entry = tuple[bytes | None, bytes | None]  # (key, value): a None value is a tombstone


def append(
    log: PartitionLog,
    entries: list[Entry],
    timestamp: int = T0,
    codec: int = compression.NONE,
    **batch_fields: Any,
) -> list[Record]:
    """Append one batch; returns its records with the offsets the log assigned."""
    records = [Record(i, timestamp + i, key, value, (("h", b"x"),)) for i, (key, value) in enumerate(entries)]
    info = log.append_as_leader(
        build_batch(records, compression=codec, **batch_fields),
        leader_epoch=batch_fields.get("epoch", 0),
        now_ms=timestamp,
    )
    log.advance_high_watermark(log.log_end_offset)
    return [dataclasses.replace(r, offset=info.base_offset + r.offset) for r in records]


def fill(
    log: PartitionLog,
    updates: int,
    keys: int,
    seed: int = 1,
    codec: int = compression.NONE,
    timestamp: int = T0,
) -> dict[int, Record]:
    """`updates` random updates over `keys` keys in batches of 1-5 records; returns every record by offset."""
    rng = random.Random(seed)
    written: dict[int, Record] = {}
    done = 0
    while done < updates:
        size = min(rng.randint(1, 5), updates - done)
        entries: list[Entry] = [
            (f"key-{rng.randrange(keys)}".encode(), f"value-{done + i}".encode()) for i in range(size)
        ]
        for record in append(log, entries, timestamp=timestamp, codec=codec):
            written[record.offset] = record
        done += size
    return written


def read_batches(log: PartitionLog) -> list[RecordBatch]:
    out: list[RecordBatch] = []
    position = log.log_start_offset
    while position < log.high_watermark:
        data = log.read(position, 1 << 20)
        if not data:
            break
        for batch in iter_batches(data):
            out.append(batch)
            position = batch.next_offset
    return out


def read_all(log: PartitionLog) -> list[Record]:
    return [record for batch in read_batches(log) for record in decode_records(batch)]


def latest_by_key(records: list[Record]) -> dict[bytes | None, Record]:
    latest: dict[bytes | None, Record] = {}
    for record in records:
        latest[record.key] = record
    return latest


def check_compacted(
    log: PartitionLog, written: dict[int, Record], cleaned_up_to: int | None = None
) -> list[Record]:
    """The invariants of a cleaned log, against everything that was appended (by offset). Below `cleaned_up_to`
    (by default the active segment) there must be one record per key.
    """
    records = read_all(log)
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets)), "offsets must stay strictly increasing"
    for record in records:
        assert written[record.offset] == record, "a kept record must be unchanged, at its original offset"
    active_base = log.segments[-1].base_offset
    end = active_base if cleaned_up_to is None else cleaned_up_to
    below = [r.key for r in records if r.offset < end]
    assert len(below) == len(set(below)), "one record per key below the active segment"
    assert {k: r for k, r in latest_by_key(records).items()} == {
        k: r
        for k, r in latest_by_key(list(written.values())).items()
        if r.value is not None or k in {x.key for x in records}
    }
    # the active segment is never touched
    assert [r for r in records if r.offset >= active_base] == [
        r for o, r in sorted(written.items()) if o >= active_base
    ]
    return records


# ---- what compaction keeps ---------------------------------------------------------------------------------


def test_latest_value_of_every_key_is_kept_at_its_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config())
    written = fill(log, 5000, keys=100)
    start, end, segments = log.log_start_offset, log.log_end_offset, len(log.segments)
    assert segments > 50
    stats = clean_log(log, now_ms=T0 + MINUTE)
    assert stats is not None
    assert stats.end_offset == log.segments[-1].base_offset
    assert (log.log_start_offset, log.log_end_offset) == (start, end)
    assert len(log.segments) < segments
    records = check_compacted(log, written)
    assert latest_by_key(records) == latest_by_key(list(written.values()))
    assert len([r for r in records if r.offset < log.segments[-1].base_offset]) <= 100
    # nothing dirty left: no second cleaning
    assert clean_log(log, now_ms=T0 + MINUTE) is None
    # the cleaned log survives a clean close and a crash alike (gaps between segments are accepted)
    log.close()
    log = open_log(tmp_path / "t-0", compact_config())
    assert read_all(log) == records
    assert log.cleaner_checkpoint == stats.end_offset
    log.close(clean=False)
    for path in (tmp_path / "t-0").glob("*.index"):
        path.unlink()  # as if no segment had been flushed: every one is scanned
    log = open_log(tmp_path / "t-0", compact_config())
    assert read_all(log) == records
    assert (log.log_start_offset, log.log_end_offset) == (start, end)
    # every offset still finds its batch (or the next one, across a gap)
    for offset in range(start, end, 97):
        batch = next(iter_batches(log.read(offset, 1)))
        assert batch.last_offset >= offset


def test_gaps_left_by_the_cleaner_survive_recovery_only_below_the_gaps_file(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config())
    rng = random.Random(5)
    for i in range(3000):
        append(log, [(f"k{rng.randrange(200)}".encode(), b"%d" % i * 20)])
    clean_log(log, now_ms=T0)
    segments = log.segments
    gaps = [a for a, b in itertools.pairwise(segments) if a.next_offset < b.base_offset]
    assert gaps, "the cleaning should have left a segment ending before the next one begins"
    bases = [s.base_offset for s in segments]
    log.close(clean=False)
    assert [s.base_offset for s in open_log(directory, compact_config()).segments] == bases
    # Without the file, such a gap looks like an interrupted truncation (the rule of test_log_recovery).
    (directory / CLEANER_GAPS_FILE).unlink()
    reopened = open_log(directory, compact_config())
    assert len(reopened.segments) < len(bases)


@pytest.mark.parametrize(
    "codec",
    [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD],
    ids=compression.CODEC_NAMES.get,
)
def test_compressed_batches_are_rewritten_with_their_codec(tmp_path: Path, codec: int) -> None:
    log = open_log(tmp_path / "t-0", compact_config(segment_bytes=1024))
    written: dict[int, Record] = {}
    rng = random.Random(7)
    for i in range(300):
        entries: list[Entry] = [
            (f"k{rng.randrange(30)}".encode(), f"v{i}-{j}".encode() * 3) for j in range(8)
        ]
        for record in append(log, entries, codec=codec):
            written[record.offset] = record
    original = {b.base_offset: b.last_offset for b in read_batches(log)}
    assert clean_log(log, now_ms=T0) is not None
    check_compacted(log, written)
    batches = read_batches(log)
    rewritten = [b for b in batches if 0 < b.record_count < b.last_offset_delta + 1]
    assert rewritten, "some batches should have lost only part of their records"
    for batch in batches:
        assert batch.compression == codec
        assert batch.verify_crc()
        # base and last offsets of every batch stay what they were
        assert original[batch.base_offset] == batch.last_offset


def test_producer_fields_epochs_and_timestamp_type_are_preserved(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config(message_timestamp_type="LogAppendTime"))
    written: dict[int, Record] = {}
    sequence = 0
    for i in range(200):
        entries: list[Entry] = [
            (b"same", b"old"),
            (f"k{i}".encode(), b"unique"),
            (b"same", f"new{i}".encode()),
        ]
        records = [Record(j, T0, key, value) for j, (key, value) in enumerate(entries)]
        data = build_batch(records, producer_id=42, producer_epoch=3, base_sequence=sequence)
        info = log.append_as_leader(data, leader_epoch=5, now_ms=T0 + i)
        sequence += len(records)
        for j, (key, value) in enumerate(entries):
            written[info.base_offset + j] = Record(info.base_offset + j, T0 + i, key, value)
    log.advance_high_watermark(log.log_end_offset)
    before = {b.base_offset: (b.base_sequence, b.last_sequence, b.max_timestamp) for b in read_batches(log)}
    assert clean_log(log, now_ms=T0 + HOUR) is not None
    check_compacted(log, written)
    batches = read_batches(log)
    assert any(b.record_count == 1 for b in batches)
    for batch in batches:
        assert (batch.producer_id, batch.producer_epoch) == (42, 3)
        assert batch.partition_leader_epoch == 5
        assert batch.timestamp_type == LOG_APPEND_TIME
        assert (batch.base_sequence, batch.last_sequence, batch.max_timestamp) == before[batch.base_offset]
    # the producer's state did not move: its next batch is accepted, a retry of an old one is a duplicate
    nxt = build_batch([Record(0, T0, b"k", b"v")], producer_id=42, producer_epoch=3, base_sequence=sequence)
    assert not log.append_as_leader(nxt, leader_epoch=5, now_ms=T0).duplicate


# ---- tombstones, lag and what is never cleaned -------------------------------------------------------------


def test_tombstones_stay_until_delete_retention_then_go(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    config = compact_config(delete_retention_ms=HOUR)
    log = open_log(directory, config)
    written: dict[int, Record] = {}

    def add(entries: list[Entry], timestamp: int) -> None:
        for record in append(log, entries, timestamp=timestamp):
            written[record.offset] = record

    for _ in range(10):
        add([(f"k{i}".encode(), b"x" * 50) for i in range(10)], T0)
    add([(f"k{i}".encode(), None) for i in range(5)], T0)  # delete k0..k4
    for i in range(60):
        add([(f"filler{i}".encode(), b"y" * 100)], T0)
    assert clean_log(log, now_ms=T0 + MINUTE) is not None
    records = check_compacted(log, written)
    by_key = latest_by_key(records)
    for i in range(5):
        assert by_key[f"k{i}".encode()].value is None, (
            "the tombstone stays (the consumer must see the delete)"
        )
        assert sum(1 for r in records if r.key == f"k{i}".encode()) == 1, "the values before it are gone"
    # A later tombstone, recent at the next cleaning, stays while the older ones expire.
    add([(b"k5", None)], T0 + 90 * MINUTE)
    for i in range(60):
        add([(f"late{i}".encode(), b"z" * 100)], T0 + 90 * MINUTE)
    assert clean_log(log, now_ms=T0 + 2 * HOUR) is not None
    records = read_all(log)
    keys = {r.key for r in records}
    assert not any(f"k{i}".encode() in keys for i in range(5)), "expired tombstones are removed"
    assert latest_by_key(records)[b"k5"].value is None
    assert all(latest_by_key(records)[f"k{i}".encode()].value == b"x" * 50 for i in range(6, 10))
    for record in records:
        assert written[record.offset] == record
    log.close()
    assert read_all(open_log(directory, config)) == records


def test_every_record_removed_leaves_an_empty_segment_that_reopens(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    config = compact_config(delete_retention_ms=0)
    log = open_log(directory, config)
    for i in range(100):
        append(log, [(f"k{i % 10}".encode(), b"v" * 50)])
    for i in range(100):
        append(log, [(f"k{i % 10}".encode(), None)])
    start, end = log.log_start_offset, log.log_end_offset
    active = log.segments[-1].base_offset
    assert clean_log(log, now_ms=T0 + HOUR) is not None
    assert all(r.offset >= active for r in read_all(log))
    assert log.segments[0].size == 0
    log.close(clean=False)
    log = open_log(directory, config)
    assert (log.log_start_offset, log.log_end_offset) == (start, end)
    assert all(r.offset >= active for r in read_all(log))
    batch = next(iter_batches(log.read(start, 1)))
    assert batch.base_offset >= active


def test_min_compaction_lag_protects_recent_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config(min_compaction_lag_ms=HOUR))
    old = fill(log, 1000, keys=10, seed=1, timestamp=T0)
    log.roll(T0)
    young_base = log.log_end_offset
    young = fill(log, 1000, keys=10, seed=2, timestamp=T0 + 2 * HOUR)
    stats = clean_log(log, now_ms=T0 + 2 * HOUR + MINUTE)
    assert stats is not None
    assert stats.end_offset <= young_base
    records = read_all(log)
    assert [r for r in records if r.offset >= young_base] == list(young.values())
    kept_old = [r.key for r in records if r.offset < young_base]
    assert len(kept_old) == len(set(kept_old)) == 10
    for record in records:
        assert {**old, **young}[record.offset] == record


def test_nothing_above_the_high_watermark_is_cleaned(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config())
    fill(log, 1000, keys=10)
    hw = log.segments[len(log.segments) // 2].base_offset
    log.high_watermark = hw
    fill(log, 500, keys=10, seed=3)
    log.high_watermark = hw
    stats = clean_log(log, now_ms=T0)
    assert stats is not None
    assert stats.end_offset <= hw


def test_records_without_a_key_are_dropped(tmp_path: Path) -> None:
    # Only possible if the topic used cleanup.policy=delete when they were written.
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config(cleanup_policy=frozenset({"delete"})))
    for i in range(100):
        append(log, [(None, b"keyless"), (f"k{i % 5}".encode(), b"v" * 40)])
    log.config = compact_config()
    assert clean_log(log, now_ms=T0) is not None
    active = log.segments[-1].base_offset
    assert all(r.key is not None for r in read_all(log) if r.offset < active)


def test_a_log_that_is_not_compacted_is_never_cleaned(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config(cleanup_policy=frozenset({"delete"})))
    fill(log, 1000, keys=10)
    assert clean_log(log, now_ms=T0) is None


# ---- the checkpoint and the dirty ratio --------------------------------------------------------------------


def test_second_cleaning_maps_only_the_dirty_part(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config())
    written = fill(log, 2000, keys=50, seed=1)
    first = clean_log(log, now_ms=T0)
    assert first is not None
    assert (directory / CLEANER_CHECKPOINT_FILE).read_text().strip() == str(first.end_offset)
    written |= fill(log, 2000, keys=50, seed=2)
    second = clean_log(log, now_ms=T0)
    assert second is not None
    assert second.first_dirty_offset == first.end_offset
    records = check_compacted(log, written)
    assert latest_by_key(records) == latest_by_key(list(written.values()))


def test_the_dirty_ratio_decides_eligibility(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config(min_cleanable_dirty_ratio=0.5))
    fill(log, 2000, keys=1000, seed=1)  # mostly distinct keys: cleaning keeps most of it
    assert clean_log(log, now_ms=T0) is not None
    clean_bytes = log.size_in_bytes
    fill(log, 100, keys=1000, seed=2)
    assert plan_cleaning(log, now_ms=T0) is None, "a little new data is below the ratio"
    while log.size_in_bytes < 2.5 * clean_bytes:
        fill(log, 100, keys=1000, seed=log.log_end_offset)
    plan = plan_cleaning(log, now_ms=T0)
    assert plan is not None
    plan.close()


def test_truncation_below_the_checkpoint_lowers_it(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config())
    fill(log, 2000, keys=50)
    stats = clean_log(log, now_ms=T0)
    assert stats is not None
    target = read_batches(log)[3].base_offset
    assert target < stats.end_offset
    log.truncate_to(target)
    assert log.cleaner_checkpoint == target
    assert not (directory / CLEANER_CHECKPOINT_FILE).exists()
    log.close()
    assert open_log(directory, compact_config()).cleaner_checkpoint == 0


def test_a_small_offset_map_cleans_over_several_rounds(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config())
    written = fill(log, 3000, keys=200)
    rounds = 0
    while clean_log(log, now_ms=T0, max_map_keys=40) is not None:
        rounds += 1
        assert rounds < 100
    assert rounds > 1
    records = check_compacted(log, written)
    assert latest_by_key(records) == latest_by_key(list(written.values()))


# ---- a log that changes under the cleaner ------------------------------------------------------------------


def prepared_plan(log: PartitionLog) -> CleaningPlan:
    plan = plan_cleaning(log, now_ms=T0)
    assert plan is not None
    return plan


@pytest.mark.parametrize("change", ["truncate", "retention", "delete_records", "close"])
def test_a_log_changed_during_cleaning_discards_the_result(tmp_path: Path, change: str) -> None:
    directory = tmp_path / "t-0"
    log = open_log(
        directory, compact_config(cleanup_policy=frozenset({"compact", "delete"}), retention_ms=HOUR)
    )
    written = fill(log, 1000, keys=10)
    cleaned = prepared_plan(log).execute()
    assert list(directory.glob("*.cleaned"))
    if change == "truncate":
        log.truncate_to(read_batches(log)[2].base_offset)
    elif change == "retention":
        fill(log, 100, keys=10, timestamp=T0 + 3 * HOUR)
        log.roll(T0)
        assert log.apply_retention(now_ms=T0 + 2 * HOUR) > 0
    elif change == "delete_records":
        log.delete_records_before(log.segments[2].base_offset)
    else:
        log.close()
    before = None if log.closed else read_all(log)
    assert commit_cleaning(log, cleaned) is None
    discard_segments(group.new for group in cleaned.groups)
    assert not list(directory.glob("*.cleaned"))
    if before is not None:
        assert read_all(log) == before
        assert all(written[r.offset] == r for r in before if r.offset in written)


def test_flushes_and_reads_across_a_swap(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config())
    written = fill(log, 2000, keys=20)
    flush = log.begin_flush()  # holds duplicates of segments about to be replaced, and their index work
    cleaned = prepared_plan(log).execute()
    assert commit_cleaning(log, cleaned) is not None
    flush.execute()  # must neither fail nor write index files for replaced segments
    log.end_flush(flush)
    log.flush()  # writes the new segments' index files
    records = check_compacted(log, written)
    log.close()
    assert read_all(open_log(tmp_path / "t-0", compact_config())) == records


# ---- crashes -----------------------------------------------------------------------------------------------


class SimulatedCrash(BaseException):
    """Not an OSError: nothing in the code under test may catch it."""


class CrashAfter:
    """Make the n-th file system operation (rename, replace, unlink, directory fsync) and all later ones fail,
    as if the process died there: a kill -9 keeps exactly the operations done before it.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, n: int | None) -> None:
        self.n = n
        self.count = 0
        self.armed = True
        for name in ("rename", "replace", "unlink"):
            monkeypatch.setattr(os, name, self._wrap(getattr(os, name)))
        for module in (kbroker.log.partition_log, kbroker.log.files, kbroker.log.cleaner):
            monkeypatch.setattr(module, "fsync_directory", self._wrap(module.fsync_directory))

    def _wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def operation(*args: Any, **kwargs: Any) -> Any:
            if self.armed:
                if self.n is not None and self.count >= self.n:
                    raise SimulatedCrash
                self.count += 1
            return real(*args, **kwargs)

        return operation


def test_a_crash_at_any_point_of_a_cleaning_recovers_the_old_or_the_new_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = compact_config(segment_bytes=1024)
    template = tmp_path / "template" / "t-0"
    log = open_log(template, config)
    fill(log, 250, keys=15)
    log.close(clean=False)  # a log that was never flushed, as after acks=1 produces

    def copy(name: str) -> Path:
        directory = tmp_path / name / "t-0"
        shutil.copytree(template, directory)
        return directory

    def stale_file(log: PartitionLog) -> None:
        # left by an earlier cleaning that could not remove it: must not make this one's swap look uncommitted
        (log.directory / f"{log.segments[1].base_offset:020d}.log.cleaned").write_bytes(b"stale")

    log = open_log(copy("old"), config)
    old = read_all(log)
    stale_file(log)
    counter = CrashAfter(monkeypatch, None)
    assert clean_log(log, now_ms=T0) is not None
    operations, counter.armed = counter.count, False
    new = read_all(log)
    assert new != old
    assert len(log.segments) >= 3, "at least two cleaned segments, swapped in together"
    monkeypatch.undo()

    outcomes = []
    for n in range(operations + 1):
        directory = copy(f"crash-{n}")
        log = open_log(directory, config)
        stale_file(log)
        crash = CrashAfter(monkeypatch, n)
        try:
            clean_log(log, now_ms=T0)
        except SimulatedCrash:
            pass
        else:
            assert n == operations
        crash.armed = False
        monkeypatch.undo()
        log.close(clean=False)
        log = open_log(directory, config)
        records = read_all(log)
        assert records in (old, new), f"crash after {n} operations"
        outcomes.append(records == new)
        leftovers = [
            p.name for p in directory.iterdir() if p.suffix in (".cleaned", ".swap", ".deleted", ".tmp")
        ]
        assert not leftovers
        # and the recovered log cleans (again, or further) normally
        clean_log(log, now_ms=T0)
        assert read_all(log) == new
        log.close()
    # the commit point lies strictly inside: early crashes keep the old log, later ones give the new one
    assert outcomes[0] is False
    assert outcomes[-1] is True
    assert outcomes == sorted(outcomes)


# ---- while a swap is in progress ---------------------------------------------------------------------------


def begun_swap(log: PartitionLog) -> tuple[kbroker.log.segment_swap.SegmentSwap, int]:
    cleaned = prepared_plan(log).execute()
    swap = log.begin_segment_swap(cleaned.groups, cleaned.end_offset)
    assert swap is not None
    assert log.begin_segment_swap(cleaned.groups, cleaned.end_offset) is None, "one swap at a time"
    return swap, cleaned.end_offset


def test_retention_and_delete_records_leave_segments_being_swapped(tmp_path: Path) -> None:
    log = open_log(
        tmp_path / "t-0", compact_config(cleanup_policy=frozenset({"compact", "delete"}), retention_ms=1)
    )
    written = fill(log, 1000, keys=10)
    swap, _ = begun_swap(log)
    segments = list(log.segments)
    assert log.apply_retention(now_ms=T0 + HOUR) == 0
    target = segments[2].base_offset
    assert log.delete_records_before(target) == target
    assert log.segments == segments
    assert read_all(log)[0].offset >= target  # reads still come from the old segments
    swap.execute()
    doomed = log.end_segment_swap(swap)
    assert doomed
    assert all(path.exists() for path in doomed), "the caller unlinks them, off the event loop"
    for path in doomed:
        log.delete_later(path)
    check_compacted(log, written)
    assert log.apply_retention(now_ms=T0 + HOUR) > 0  # the next pass deletes what is below the log start


def test_a_truncation_during_a_swap_installs_it_first(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config())
    fill(log, 1000, keys=10)
    swap, end = begun_swap(log)
    swap.execute()
    target = read_batches(log)[-1].base_offset  # in the active segment: far above the cleaned range
    log.truncate_to(target)
    assert swap.installed
    assert log.cleaner_checkpoint == end
    log.truncate_to(3)
    assert log.cleaner_checkpoint == 3
    assert log.end_segment_swap(swap) == swap.doomed  # the cleaner's own call later does nothing
    log.close()
    log = open_log(directory, compact_config())
    assert log.log_end_offset <= 3


def test_a_close_during_a_swap_installs_it_first(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config())
    written = fill(log, 1000, keys=10)
    swap, _ = begun_swap(log)
    swap.execute()
    log.close()
    assert swap.installed
    records = check_compacted(open_log(directory, compact_config()), written)
    assert len(records) < len(written)
