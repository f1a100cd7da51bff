"""The cleaner as the broker runs it: in a worker thread, while produce, fetch and group commit go on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import trio
import trio.lowlevel

from kbroker.log.cleaner import LogCleaner, clean_log
from kbroker.log.flusher import GroupCommitter
from kbroker.log.partition_log import PartitionLog
from protocol.records import Record, decode_records, iter_batches
from tests.test_log_cleaner import T0, append, check_compacted, compact_config, fill, open_log, read_all

pytestmark = pytest.mark.timeout(120)


@pytest.mark.trio
async def test_produce_fetch_and_flushes_go_on_during_a_cleaning(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", compact_config(segment_bytes=8192))
    written = fill(log, 30_000, keys=300)
    log.flush()  # so the group commits below are about the new appends only
    committer = GroupCommitter()
    cleaner = LogCleaner([log], backoff_ms=10, clock=lambda: T0)
    cleaning_done = trio.Event()
    seen: dict[str, float] = {"appends": 0, "scans": 0, "reads_across_swap": 0, "max_gap": 0.0}
    segments_before = list(log.segments)

    async def clean() -> None:
        started = time.monotonic()
        stats = await cleaner.clean(log, now_ms=T0)
        seen["seconds"] = time.monotonic() - started
        assert stats is not None
        seen["end"] = stats.end_offset
        cleaning_done.set()

    async def produce() -> None:
        while not cleaning_done.is_set():
            records = append(log, [(f"key-{seen['appends'] % 300}".encode(), b"during")])
            written.update((r.offset, r) for r in records)
            seen["appends"] += 1
            if seen["appends"] % 10 == 0:
                await committer.wait_durable(log, records[-1].offset + 1)
            await trio.sleep(0.001)

    async def tick() -> None:
        # How late a 1 ms sleep wakes up: how long the event loop was kept from running tasks.
        while not cleaning_done.is_set():
            started = time.monotonic()
            await trio.sleep(0.001)
            seen["max_gap"] = max(seen["max_gap"], time.monotonic() - started - 0.001)

    async def fetch() -> None:
        # Whole scans from offset 0, one read per trio checkpoint, so the swap lands in the middle of some.
        while not cleaning_done.is_set():
            position, previous = 0, -1
            swapped_during_scan = False
            before = log.segments[0]
            while position < log.high_watermark:
                data = log.read(position, 16 * 1024)
                for batch in iter_batches(data):
                    for record in decode_records(batch):
                        assert record.offset > previous
                        assert written[record.offset] == record
                        previous = record.offset
                    position = batch.next_offset
                await trio.lowlevel.checkpoint()
                swapped_during_scan |= log.segments[0] is not before
            seen["scans"] += 1
            seen["reads_across_swap"] += swapped_during_scan

    async with trio.open_nursery() as nursery:
        await nursery.start(committer.run)
        nursery.start_soon(produce)
        nursery.start_soon(fetch)
        nursery.start_soon(tick)
        await clean()
        await trio.sleep(0.05)
        nursery.cancel_scope.cancel()

    assert log.segments[0] is not segments_before[0]
    assert seen["appends"] > 20, seen
    assert seen["scans"] >= 1, seen
    # The event loop kept turning: no pause anywhere near the length of the cleaning itself.
    assert seen["max_gap"] < max(0.5, seen["seconds"] / 2), seen
    records = check_compacted(log, written, cleaned_up_to=int(seen["end"]))
    log.close()
    assert read_all(open_log(tmp_path / "t-0", compact_config(segment_bytes=8192))) == records


@pytest.mark.trio
async def test_the_background_task_cleans_every_dirty_compacted_log(tmp_path: Path) -> None:
    config = compact_config()
    logs = [open_log(tmp_path / f"t-{i}", config) for i in range(2)]
    plain = open_log(tmp_path / "plain-0", compact_config(cleanup_policy=frozenset({"delete"})))
    for i, log in enumerate([*logs, plain]):
        fill(log, 2000, keys=20, seed=i)
    plain_before = read_all(plain)
    cleaner = LogCleaner([*logs, plain], backoff_ms=10, clock=lambda: T0)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(cleaner.run)
            while True:
                if all(log.cleaner_checkpoint == log.segments[-1].base_offset for log in logs):
                    break
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert cleaner.cleanings >= 2
    assert read_all(plain) == plain_before
    for log in logs:
        below = [r.key for r in read_all(log) if r.offset < log.segments[-1].base_offset]
        assert len(below) == len(set(below)) == 20


@pytest.mark.trio
async def test_a_cancelled_cleaning_leaves_the_log_as_it_was_and_removes_its_files(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, compact_config(segment_bytes=8192))
    fill(log, 30_000, keys=300)
    before = read_all(log)
    cleaner = LogCleaner([log], backoff_ms=10, clock=lambda: T0)
    with trio.move_on_after(0.05) as scope:
        await cleaner.clean(log, now_ms=T0)
    assert scope.cancelled_caught, "the cleaning was expected to take longer than 50 ms"
    # The abandoned worker notices the stop flag at its next batch and removes what it wrote.
    with trio.fail_after(10):
        while True:
            if not list(directory.glob("*.cleaned")):
                break
            await trio.sleep(0.01)
    assert read_all(log) == before
    assert clean_log(log, now_ms=T0) is not None


def test_a_cleaned_log_reopens_with_the_records_a_fresh_read_gives(tmp_path: Path) -> None:
    # Guards the helper the trio tests rely on: reading across gaps from offset 0 sees every kept record once.
    log: PartitionLog = open_log(tmp_path / "t-0", compact_config())
    fill(log, 500, keys=5)
    clean_log(log, now_ms=T0)
    records: list[Record] = read_all(log)
    assert len({r.offset for r in records}) == len(records)
