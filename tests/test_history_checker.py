"""kbroker.testing.history on hand-made histories: each anomaly is detected and named, a clean history passes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kbroker.testing import history
from kbroker.testing.history import (
    DIRTY_READ,
    DUPLICATE,
    GAP,
    INCONSISTENT,
    LOST,
    NON_MONOTONIC,
    OFFSET_REGRESSION,
    UNKNOWN_OFFSET,
    WRONG_OFFSET,
    Ack,
    Commit,
    LogRecord,
    Read,
    check,
    main,
    read_acks,
    read_log,
    write_jsonl,
)

ROOT = Path(__file__).resolve().parent.parent


def acks_of(*positions: tuple[int, int, str]) -> list[Ack]:
    return [Ack("t", p, o, v.encode(), producer="p1") for p, o, v in positions]


def log_of(*positions: tuple[int, int, str], source: str = "log") -> list[LogRecord]:
    return [LogRecord("t", p, o, v.encode(), source) for p, o, v in positions]


def clean() -> tuple[list[Ack], list[LogRecord]]:
    """Two partitions, offsets 0..3 each; every record acknowledged except one whose ack was lost (a-3)."""
    log = log_of(*[(0, o, f"a-{o}") for o in range(4)], *[(1, o, f"b-{o}") for o in range(4)])
    acks = [Ack(r.topic, r.partition, r.offset, r.value) for r in log if r.value != b"a-3"]
    return acks, log


def kinds(acks: list[Ack], log: list[LogRecord], start_offset: int | None = None) -> list[str]:
    return sorted(a.kind for a in check(acks, log, start_offset=start_offset).anomalies)


def test_an_ack_without_an_offset_is_checked_for_presence_only() -> None:
    """librdkafka may report an idempotent batch delivered without its offset: it must be in the log, anywhere."""
    acks, log = clean()
    assert kinds([*acks, Ack("t", 0, UNKNOWN_OFFSET, b"a-3")], log, start_offset=0) == []
    assert kinds([*acks, Ack("t", 0, UNKNOWN_OFFSET, b"never")], log, start_offset=0) == [LOST]


def test_a_clean_history_is_valid() -> None:
    acks, log = clean()
    verdict = check(acks, log, start_offset=0)
    assert verdict.valid, verdict.report()
    assert (verdict.acknowledged, verdict.read, verdict.unacknowledged_present) == (7, 8, 1)
    assert [
        (p.partition, p.records, p.first_offset, p.last_offset, p.acknowledged) for p in verdict.partitions
    ] == [
        (0, 4, 0, 3, 3),
        (1, 4, 0, 3, 4),
    ]
    assert verdict.report().startswith("VALID: 7 acknowledged, 8 read, 1 read but never acknowledged")


def test_an_empty_history_is_valid() -> None:
    assert check([], []).valid


def test_lost_write_in_the_middle_is_a_gap_and_a_loss() -> None:
    acks, log = clean()
    log = [r for r in log if r.value != b"b-2"]
    verdict = check(acks, log)
    assert sorted(a.kind for a in verdict.anomalies) == [GAP, LOST]
    lost = verdict.by_kind()[LOST][0]
    assert (lost.partition, lost.offset, lost.value) == (1, 2, b"b-2")
    assert "the offset is missing" in lost.detail
    gap = verdict.by_kind()[GAP][0]
    assert (gap.partition, gap.offset) == (1, 2)


def test_lost_write_at_the_tail_is_detected() -> None:
    # A truncated log: the acknowledged last record is simply not there. Nothing else looks wrong.
    acks, log = clean()
    log = [r for r in log if r.value != b"b-3"]
    verdict = check(acks, log)
    assert [a.kind for a in verdict.anomalies] == [LOST]
    assert "beyond the end of the log read (next offset 3)" in verdict.anomalies[0].detail


def test_lost_write_overwritten_by_another_value() -> None:
    # The acknowledged offset now holds a different record (a new leader wrote over a lost tail).
    acks, log = clean()
    log = [LogRecord("t", 1, 3, b"intruder") if r.value == b"b-3" else r for r in log]
    verdict = check(acks, log)
    assert sorted(a.kind for a in verdict.anomalies) == [INCONSISTENT, LOST]
    assert "the offset holds intruder" in verdict.by_kind()[LOST][0].detail
    assert "b-3 (acks)" in verdict.by_kind()[INCONSISTENT][0].detail
    assert "intruder (log)" in verdict.by_kind()[INCONSISTENT][0].detail


def test_a_partition_nobody_read_loses_its_writes() -> None:
    acks, log = clean()
    verdict = check(acks, [r for r in log if r.partition == 0])
    assert [a.kind for a in verdict.anomalies] == [LOST] * 4
    assert "no source read t-1" in verdict.anomalies[0].detail


def test_duplicate_in_the_log_is_detected() -> None:
    # A retried batch written twice: b-1 again at offset 4.
    acks, log = clean()
    log.append(LogRecord("t", 1, 4, b"b-1"))
    verdict = check(acks, log)
    assert [a.kind for a in verdict.anomalies] == [DUPLICATE]
    assert "present at 2 positions: t-1@1, t-1@4" in verdict.anomalies[0].detail


def test_duplicate_across_partitions_is_detected() -> None:
    acks, log = clean()
    log.append(LogRecord("t", 0, 4, b"b-0"))
    assert kinds(acks, log) == [DUPLICATE]


def test_value_acknowledged_twice_at_different_offsets_is_a_duplicate() -> None:
    acks, log = clean()
    acks.append(Ack("t", 1, 4, b"b-1"))  # the log has it at 1 only: the second ack names the wrong offset
    assert kinds(acks, log) == [DUPLICATE, WRONG_OFFSET]


def test_same_acknowledgement_reported_twice_is_not_an_anomaly() -> None:
    acks, log = clean()
    acks.append(acks[0])
    assert check(acks, log).valid


def test_wrong_offset_is_detected() -> None:
    # Acknowledged at 1, but the log has it at 2 (and the record acknowledged at 2 at 1): both wrong, and both
    # offsets were seen holding two values.
    acks, log = clean()
    swapped = {b"a-1": b"a-2", b"a-2": b"a-1"}
    log = [LogRecord(r.topic, r.partition, r.offset, swapped.get(r.value, r.value)) for r in log]
    verdict = check(acks, log)
    assert sorted(a.kind for a in verdict.anomalies) == [
        INCONSISTENT,
        INCONSISTENT,
        WRONG_OFFSET,
        WRONG_OFFSET,
    ]
    wrong = {(a.offset, a.value): a.detail for a in verdict.by_kind()[WRONG_OFFSET]}
    assert "at 1, read at t-0@2" in wrong[(1, b"a-1")]


def test_wrong_partition_is_a_wrong_offset() -> None:
    acks = acks_of((0, 0, "x"))
    log = log_of((0, 0, "y"), (1, 0, "x"))
    verdict = check(acks, log)
    assert sorted(a.kind for a in verdict.anomalies) == [INCONSISTENT, WRONG_OFFSET]
    assert "read at t-1@0" in verdict.by_kind()[WRONG_OFFSET][0].detail


def test_two_values_at_one_offset_across_acknowledgements() -> None:
    # Two producers both told they hold offset 2 of partition 0 (e.g. two leaders in one epoch).
    acks = acks_of((0, 0, "a"), (0, 1, "b"), (0, 2, "c"))
    acks.append(Ack("t", 0, 2, b"other", producer="p2"))
    log = log_of((0, 0, "a"), (0, 1, "b"), (0, 2, "c"))
    verdict = check(acks, log)
    assert sorted(a.kind for a in verdict.anomalies) == [INCONSISTENT, LOST]
    inconsistent = verdict.by_kind()[INCONSISTENT][0]
    assert inconsistent.offset == 2
    assert "c (acks, log); other (acks)" in inconsistent.detail
    assert "acknowledged to p2" in verdict.by_kind()[LOST][0].detail


def test_two_values_at_one_offset_across_sources() -> None:
    # Two replicas' logs diverge at offset 1 (neither value was acknowledged, so nothing is lost).
    log = log_of((0, 0, "a"), (0, 1, "b"), source="replica-1") + log_of(
        (0, 0, "a"), (0, 1, "z"), source="replica-2"
    )
    verdict = check(acks_of((0, 0, "a")), log)
    assert [a.kind for a in verdict.anomalies] == [INCONSISTENT]
    assert "b (replica-1); z (replica-2)" in verdict.anomalies[0].detail


def test_each_source_must_hold_every_acknowledged_record() -> None:
    acks = acks_of((0, 0, "a"), (0, 1, "b"))
    log = log_of((0, 0, "a"), (0, 1, "b"), source="replica-1") + log_of((0, 0, "a"), source="replica-2")
    verdict = check(acks, log)
    assert [a.kind for a in verdict.anomalies] == [LOST]
    assert verdict.anomalies[0].detail.startswith("[replica-2]")


def test_gap_is_detected_even_without_acknowledgements() -> None:
    log = log_of((0, 0, "a"), (0, 1, "b"), (0, 4, "c"), (0, 5, "d"))
    verdict = check([], log)
    assert [a.kind for a in verdict.anomalies] == [GAP]
    assert (verdict.anomalies[0].offset, verdict.anomalies[0].detail) == (
        2,
        "[log] offsets 2..3 missing (2 offsets), next read is 4",
    )


def test_start_offset_is_checked_when_given() -> None:
    log = log_of((0, 3, "a"), (0, 4, "b"))
    assert check([], log).valid
    assert kinds([], log, start_offset=3) == []
    assert kinds([], log, start_offset=0) == [GAP]


def test_offsets_going_backwards_are_detected() -> None:
    log = log_of((0, 0, "a"), (0, 1, "b"), (0, 2, "c"), (0, 1, "b"), (0, 3, "d"))
    verdict = check([], log)
    # Re-reading offset 1 is out of order; it does not also count as a duplicate or cascade into a gap.
    assert [a.kind for a in verdict.anomalies] == [NON_MONOTONIC]
    assert verdict.anomalies[0].offset == 1


def test_report_lists_counts_and_examples() -> None:
    acks, log = clean()
    log = [r for r in log if r.partition == 0]
    text = check(acks, log).report(examples=2)
    assert text.startswith("INVALID: 7 acknowledged, 4 read")
    assert "  lost-write           4" in text
    assert "... and 2 more lost-write" in text


def test_jsonl_round_trip_and_binary_values(tmp_path: Path) -> None:
    acks = [Ack("t", 0, 0, b"\xff\x00binary", "java"), Ack("t", 0, 1, "text é".encode())]
    log = [
        LogRecord("t", 0, 0, b"\xff\x00binary", "consumer"),
        LogRecord("t", 0, 1, "text é".encode(), "consumer"),
    ]
    write_jsonl(tmp_path / "acks.jsonl", acks)
    write_jsonl(tmp_path / "log.jsonl", log)
    assert read_acks(tmp_path / "acks.jsonl") == acks
    assert read_log(tmp_path / "log.jsonl") == log
    assert "value_b64" in (tmp_path / "acks.jsonl").read_text().splitlines()[0]


def test_command_line(tmp_path: Path) -> None:
    acks, log = clean()
    write_jsonl(tmp_path / "acks.jsonl", acks)
    # Hand-written lines with neither topic nor source: the file name becomes the source.
    (tmp_path / "final.jsonl").write_text(
        "".join(json.dumps({"partition": r.partition, "offset": r.offset, "value": r.value.decode()}) + "\n"
                for r in log)
    )  # fmt: skip
    (tmp_path / "acks-topicless.jsonl").write_text(
        "".join(json.dumps({"partition": a.partition, "offset": a.offset, "value": a.value.decode()}) + "\n"
                for a in acks)
    )  # fmt: skip

    out = io.StringIO()
    args = [str(tmp_path / "acks-topicless.jsonl"), str(tmp_path / "final.jsonl"), "--start-offset", "0"]
    assert main(args, out) == 0
    assert out.getvalue().startswith("VALID")
    assert "[final.jsonl] -0: 4 records" in out.getvalue()

    # The acknowledgements name topic "t", the log names none: every write is lost, exit status 1, as JSON.
    result = subprocess.run(
        [sys.executable, "-m", "kbroker.testing.history", str(tmp_path / "acks.jsonl"),
         str(tmp_path / "final.jsonl"), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["valid"] is False
    assert verdict["counts"]["lost-write"] == 7

    (tmp_path / "bad.jsonl").write_text('{"partition": 0}\n')
    result = subprocess.run(
        [sys.executable, "-m", "kbroker.testing.history", str(tmp_path / "bad.jsonl"), str(tmp_path / "final.jsonl")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "bad.jsonl:1: not an acknowledgement" in result.stderr


# ---- transactions ----------------------------------------------------------------------------------------------


def txn(txn_id: str, outcome: str, *values: str) -> history.Transaction:
    return history.Transaction(txn_id, tuple(v.encode() for v in values), outcome)


def reads(source: str, *values: str, partition: int = 0) -> list[history.LogRecord]:
    return [history.LogRecord("t", partition, offset, v.encode(), source) for offset, v in enumerate(values)]


TRANSACTIONS = [
    txn("t1", history.COMMITTED, "a1", "a2"),
    txn("t2", history.ABORTED, "b1", "b2"),
    txn("t3", history.UNKNOWN, "c1", "c2"),
    txn("t4", history.UNKNOWN, "d1", "d2"),
]


def test_transactions_valid() -> None:
    verdict = history.check_transactions(
        TRANSACTIONS,
        reads("final", "a1", "a2", "c1", "c2") + reads("live", "a1", "c1"),
        live_sources=["live"],
    )
    assert verdict.valid, verdict.report()
    assert (verdict.unknown_committed, verdict.unknown_aborted) == (1, 1)


@pytest.mark.parametrize(
    ("final", "live", "kind"),
    [
        (["a1", "a2", "b1", "b2"], [], history.ABORTED_READ),
        (["a1", "a2"], ["d1"], history.DIRTY_READ),
        (["a1"], [], history.LOST_COMMIT),
        (["a1", "a2", "c1"], [], history.PARTIAL),
        (["a1", "a2", "a1"], [], history.DUPLICATE),
        (["a1", "a2", "zz"], [], history.PHANTOM),
    ],
)
def test_transaction_anomalies(final: list[str], live: list[str], kind: str) -> None:
    verdict = history.check_transactions(
        TRANSACTIONS, reads("final", *final) + reads("live", *live), live_sources=["live"]
    )
    assert {a.kind for a in verdict.anomalies} == {kind}, verdict.report()


def test_reads_of_committed_records_in_any_order_are_fine() -> None:
    acks, log = clean()
    # a group re-reads after a rebalance, out of order and twice: fine as long as each was committed there
    reads = [Read("t", 1, 2, b"b-2", "c1"), Read("t", 1, 0, b"b-0", "c1"), Read("t", 1, 2, b"b-2", "c2")]
    verdict = check(acks, log, start_offset=0, reads=reads)
    assert verdict.valid, verdict.report()
    assert verdict.served == 3


def test_a_read_the_final_log_does_not_hold_is_a_dirty_read() -> None:
    acks, log = clean()
    reads = [Read("t", 0, 2, b"a-2"), Read("t", 0, 3, b"truncated-later", "c1"), Read("t", 1, 9, b"beyond")]
    verdict = check(acks, log, reads=reads)
    assert sorted(a.kind for a in verdict.anomalies) == [DIRTY_READ, DIRTY_READ]
    dirty = {a.offset: a.detail for a in verdict.by_kind()[DIRTY_READ]}
    assert "served to c1, but [log] holds a-3 there" in dirty[3]
    assert "holds nothing there" in dirty[9]


def test_committed_offsets_going_back_or_past_the_end_are_regressions() -> None:
    acks, log = clean()
    commits = [Commit("g", "t", 0, 2), Commit("g", "t", 0, 3), Commit("g", "t", 0, 1), Commit("h", "t", 0, 0)]
    commits += [Commit("g", "t", 1, 4), Commit("g", "t", 1, 5)]  # 4 is the log end: fine; 5 is beyond
    verdict = check(acks, log, commits=commits)
    regressions = sorted((a.partition, a.offset) for a in verdict.by_kind()[OFFSET_REGRESSION])
    assert regressions == [(0, 1), (1, 5)]
    assert verdict.commits == 6


def test_reads_and_commits_on_the_command_line(tmp_path: Path) -> None:
    acks, log = clean()
    write_jsonl(tmp_path / "acks.jsonl", acks)
    write_jsonl(tmp_path / "log.jsonl", log)
    write_jsonl(tmp_path / "reads.jsonl", [Read("t", 0, 1, b"a-1", "c1"), Read("t", 0, 2, b"x")])
    write_jsonl(tmp_path / "commits.jsonl", [Commit("g", "t", 0, 3), Commit("g", "t", 0, 2)])
    out = io.StringIO()
    status = main(
        [str(tmp_path / "acks.jsonl"), str(tmp_path / "log.jsonl"), "--reads", str(tmp_path / "reads.jsonl"),
         "--commits", str(tmp_path / "commits.jsonl"), "--json"],
        out,
    )  # fmt: skip
    verdict = json.loads(out.getvalue())
    assert status == 1
    assert verdict["counts"][DIRTY_READ] == 1
    assert verdict["counts"][OFFSET_REGRESSION] == 1
    assert (verdict["served"], verdict["commits"]) == (2, 2)
