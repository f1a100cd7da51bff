"""Check a produce history against the final contents of the log: Jepsen's lost-write, duplicate and
inconsistent-offset checks, plus dense, increasing offsets per partition.

The input is what a fault test can always collect, from any client and any broker:

- **acknowledgements**: every record a producer was told is written, as (topic, partition, offset, value). Values
  must be unique across the whole history (e.g. ``"<producer>-<sequence>"``): that is what makes a record
  recognisable wherever it ends up.
- **the final log**: one or more full reads of the partitions after the faults, as (topic, partition, offset,
  value) in the order they were read. Each read is a *source* (e.g. ``"consumer"``, or one per replica when the
  replicas' logs are dumped directly); a source is taken to be a complete read of every partition it contains.

Checks, each named as in the report:

| kind | meaning |
|---|---|
| ``lost-write`` | an acknowledged value is absent from a source that read its partition (or no source read it) |
| ``duplicate`` | a value is at two or more offsets of one source, or was acknowledged at two different offsets |
| ``wrong-offset`` | an acknowledged value is present, but not at the partition and offset it was acknowledged with |
| ``inconsistent-offset`` | one offset of a partition holds two different values (across acks and every source) |
| ``gap`` | a source's offsets of a partition skip one or more offsets (or do not begin at ``start_offset``) |
| ``non-monotonic`` | a source's offsets of a partition do not increase |
| ``dirty-read`` | a consumer was served a record that the final log does not hold at that offset (it was read above
  the high watermark, and later truncated) |
| ``offset-regression`` | a group's committed offset of a partition went back, or lies beyond the end of the log |

Records present in the log but never acknowledged are fine (a write whose acknowledgement was lost, e.g. to a
timeout, may or may not have happened); they are counted, not flagged.

Offsets are expected dense: right for plain (non-transactional) producers on an uncompacted topic. Transaction
markers and compaction leave gaps, so do not use the gap check on such topics.

Two more inputs, both optional, judge what clients saw *during* the faults:

- **reads** (`Read`): records consumers were served while the faults went on, as (topic, partition, offset, value).
  Unlike a source they need not be complete or in order (a consumer group re-reads after a rebalance); each must be
  in the final log at the offset it was served at: consumers only ever see committed records.
- **commits** (`Commit`): a consumer group's committed offsets as observed (acknowledged commits, or OffsetFetch
  answers), in the order observed. Per group and partition they must never go back, and never pass the log's end.

Transactions have their own check, `check_transactions`: the transactions the producers wrote (their values and
how each ended as far as its producer knows: committed, aborted, or unknown) against what read_committed consumers
read, during the faults and after. It finds aborted reads, dirty reads (read while the faults happened, gone from the
settled log: read beyond the last stable offset), lost committed writes, transactions visible in part, duplicates,
and values nobody wrote.

Command line (exit status 0 when the history is valid, 1 when anomalies were found, 2 on bad input)::

    python -m kbroker.testing.history ACKS.jsonl LOG.jsonl [LOG.jsonl ...] [--start-offset 0] [--json]
        [--reads READS.jsonl] [--commits COMMITS.jsonl]

Each line of ACKS.jsonl is ``{"topic": T, "partition": P, "offset": O, "value": V}`` (an optional ``"producer"``
names who was acknowledged); each line of a LOG file is the same with an optional ``"source"`` (default: the file
name). ``V`` is a UTF-8 string, or give ``"value_b64"`` (base64 of the bytes) instead. ``"topic"`` may be left
out when there is only one. A line of READS.jsonl is a record as in ACKS.jsonl (``"consumer"`` optional); a line of
COMMITS.jsonl is ``{"group": G, "topic": T, "partition": P, "offset": O}``, in the order observed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kbroker.common import TopicPartition

LOST = "lost-write"
DUPLICATE = "duplicate"
WRONG_OFFSET = "wrong-offset"
INCONSISTENT = "inconsistent-offset"
GAP = "gap"
NON_MONOTONIC = "non-monotonic"
DIRTY_READ = "dirty-read"
OFFSET_REGRESSION = "offset-regression"
KINDS = (LOST, DUPLICATE, WRONG_OFFSET, INCONSISTENT, GAP, NON_MONOTONIC, DIRTY_READ, OFFSET_REGRESSION)

DEFAULT_SOURCE = "log"
ACKS_SOURCE = "acks"

Position = tuple[str, int, int]  # topic, partition, offset


UNKNOWN_OFFSET = -1
"""The offset of an Ack whose producer was told the write succeeded but not where: librdkafka reports an idempotent
batch so when a retry of it was answered as a duplicate whose offset it could not learn. Such a value must still be
in the log exactly once; only its offset is not checked."""


@dataclass(frozen=True, slots=True)
class Ack:
    """A producer was told `value` is written at `offset` of `topic`-`partition` (UNKNOWN_OFFSET: somewhere in it)."""

    topic: str
    partition: int
    offset: int
    value: bytes
    producer: str = ""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """A record read back after the faults, from `source` (one full read of the partitions it covers)."""

    topic: str
    partition: int
    offset: int
    value: bytes
    source: str = DEFAULT_SOURCE


@dataclass(frozen=True, slots=True)
class Read:
    """A consumer was served `value` at `offset` of `topic`-`partition` while the faults went on."""

    topic: str
    partition: int
    offset: int
    value: bytes
    consumer: str = ""


@dataclass(frozen=True, slots=True)
class Commit:
    """A consumer group's committed offset of a partition, as observed (in observation order)."""

    group: str
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class Anomaly:
    kind: str
    topic: str
    partition: int
    offset: int | None
    value: bytes | None
    detail: str

    def describe(self) -> str:
        where = f"{self.topic}-{self.partition}" + ("" if self.offset is None else f"@{self.offset}")
        value = "" if self.value is None else f" {show(self.value)}"
        return f"{self.kind}: {where}{value}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "value": None if self.value is None else show(self.value),
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """What one source holds of one partition."""

    source: str
    topic: str
    partition: int
    records: int
    first_offset: int | None
    last_offset: int | None
    acknowledged: int  # acknowledgements naming this partition


@dataclass(slots=True)
class Verdict:
    acknowledged: int
    read: int
    unacknowledged_present: int  # read but never acknowledged: allowed
    anomalies: list[Anomaly] = field(default_factory=list)
    partitions: list[PartitionSummary] = field(default_factory=list)
    served: int = 0  # reads checked (records consumers were served during the faults)
    commits: int = 0  # committed offsets checked

    @property
    def valid(self) -> bool:
        return not self.anomalies

    def by_kind(self) -> dict[str, list[Anomaly]]:
        grouped: dict[str, list[Anomaly]] = {kind: [] for kind in KINDS}
        for anomaly in self.anomalies:
            grouped.setdefault(anomaly.kind, []).append(anomaly)
        return grouped

    def counts(self) -> dict[str, int]:
        return {kind: len(found) for kind, found in self.by_kind().items()}

    def report(self, examples: int = 10) -> str:
        """A human-readable verdict: counts per check, then up to `examples` cases of each anomaly."""
        lines = [
            f"{'VALID' if self.valid else 'INVALID'}: {self.acknowledged} acknowledged, {self.read} read, "
            f"{self.unacknowledged_present} read but never acknowledged (allowed)"
            + (f", {self.served} served to consumers" if self.served else "")
            + (f", {self.commits} committed offsets" if self.commits else ""),
        ]
        lines += [f"  {kind:<20} {count}" for kind, count in self.counts().items()]
        for kind, found in self.by_kind().items():
            for anomaly in found[:examples]:
                lines.append("  " + anomaly.describe())
            if len(found) > examples:
                lines.append(f"  ... and {len(found) - examples} more {kind}")
        for p in self.partitions:
            span = "empty" if p.first_offset is None else f"offsets {p.first_offset}..{p.last_offset}"
            lines.append(
                f"  [{p.source}] {p.topic}-{p.partition}: {p.records} records, {span}, "
                f"{p.acknowledged} acknowledged"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "acknowledged": self.acknowledged,
            "read": self.read,
            "unacknowledged_present": self.unacknowledged_present,
            "served": self.served,
            "commits": self.commits,
            "counts": self.counts(),
            "anomalies": [a.to_json() for a in self.anomalies],
            "partitions": [
                {
                    "source": p.source,
                    "topic": p.topic,
                    "partition": p.partition,
                    "records": p.records,
                    "first_offset": p.first_offset,
                    "last_offset": p.last_offset,
                    "acknowledged": p.acknowledged,
                }
                for p in self.partitions
            ],
        }


def show(value: bytes) -> str:
    """A value for a report: the text if it is UTF-8, else Python's bytes repr."""
    try:
        return value.decode()
    except UnicodeDecodeError:
        return repr(value)


# ---- the checks ------------------------------------------------------------------------------------------------


def check(
    acks: Iterable[Ack],
    log: Iterable[LogRecord],
    *,
    start_offset: int | None = None,
    reads: Iterable[Read] = (),
    commits: Iterable[Commit] = (),
) -> Verdict:
    """Judge the acknowledgements against the log read back. `start_offset`, when given, is where every
    partition's log must begin (0 for a topic nothing was deleted from); otherwise it may begin anywhere. `reads`
    and `commits` are what consumers were served and what a group committed while the faults went on."""
    acks = list(acks)
    log = list(log)
    reads = list(reads)
    commits = list(commits)
    anomalies: list[Anomaly] = []

    # Read order per (source, partition), as the records came.
    by_source: dict[str, dict[TopicPartition, list[LogRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in log:
        by_source[record.source][TopicPartition(record.topic, record.partition)].append(record)

    anomalies += _order_anomalies(by_source, start_offset)
    anomalies += _duplicate_anomalies(acks, by_source)
    anomalies += _inconsistent_offsets(acks, log)
    anomalies += _acknowledged_anomalies(acks, by_source)
    anomalies += _dirty_reads(reads, by_source)
    anomalies += _offset_regressions(commits, by_source)

    acked_values = {ack.value for ack in acks}
    unacknowledged = len({r.value for r in log if r.value not in acked_values})
    acks_per_partition: dict[TopicPartition, int] = defaultdict(int)
    for ack in acks:
        acks_per_partition[TopicPartition(ack.topic, ack.partition)] += 1
    summaries = []
    for source in sorted(by_source):
        for tp, records in sorted(by_source[source].items()):
            summaries.append(
                PartitionSummary(
                    source=source,
                    topic=tp.topic,
                    partition=tp.partition,
                    records=len(records),
                    first_offset=records[0].offset if records else None,
                    last_offset=records[-1].offset if records else None,
                    acknowledged=acks_per_partition.get(tp, 0),
                )
            )
    return Verdict(
        acknowledged=len(acks),
        read=len(log),
        unacknowledged_present=unacknowledged,
        anomalies=anomalies,
        partitions=summaries,
        served=len(reads),
        commits=len(commits),
    )


def _order_anomalies(
    by_source: dict[str, dict[TopicPartition, list[LogRecord]]], start_offset: int | None
) -> list[Anomaly]:
    """Offsets of each partition, in read order, must be start_offset (if given), then each one more."""
    found = []
    for source, partitions in sorted(by_source.items()):
        for tp, records in sorted(partitions.items()):
            topic, partition = tp.topic, tp.partition
            expected = start_offset
            for record in records:
                if expected is not None and record.offset != expected:
                    if record.offset > expected:
                        missing = record.offset - expected
                        found.append(
                            Anomaly(
                                GAP, topic, partition, expected, None,
                                f"[{source}] offsets {expected}..{record.offset - 1} missing "
                                f"({missing} offset{'s' if missing > 1 else ''}), next read is {record.offset}",
                            )
                        )  # fmt: skip
                    else:
                        found.append(
                            Anomaly(
                                NON_MONOTONIC, topic, partition, record.offset, record.value,
                                f"[{source}] read after offset {expected - 1}",
                            )
                        )  # fmt: skip
                # Resynchronise on what was read, so one anomaly does not cascade into every later record.
                expected = record.offset + 1 if expected is None else max(expected, record.offset + 1)
    return found


def _duplicate_anomalies(
    acks: list[Ack], by_source: dict[str, dict[TopicPartition, list[LogRecord]]]
) -> list[Anomaly]:
    """A value at more than one position of one source, or acknowledged at more than one position."""
    found = []
    sources: list[tuple[str, Iterable[Ack | LogRecord]]] = [(ACKS_SOURCE, acks)]
    sources += [
        (name, (r for records in parts.values() for r in records)) for name, parts in by_source.items()
    ]
    for source, items in sorted(sources, key=lambda s: s[0]):
        positions: dict[bytes, list[Position]] = defaultdict(list)
        for item in items:
            where = (item.topic, item.partition, item.offset)
            if where not in positions[item.value]:
                positions[item.value].append(where)
        for value, where_all in positions.items():
            if len(where_all) > 1:
                topic, partition, offset = where_all[0]
                others = ", ".join(f"{t}-{p}@{o}" for t, p, o in where_all)
                what = "acknowledged at" if source == ACKS_SOURCE else f"[{source}] present at"
                found.append(
                    Anomaly(
                        DUPLICATE, topic, partition, offset, value,
                        f"{what} {len(where_all)} positions: {others}",
                    )
                )  # fmt: skip
    return found


def _inconsistent_offsets(acks: list[Ack], log: list[LogRecord]) -> list[Anomaly]:
    """Every observation of a position (acknowledgements and every source) must agree on its value."""
    values: dict[Position, dict[bytes, list[str]]] = defaultdict(lambda: defaultdict(list))
    for ack in acks:
        if ack.offset == UNKNOWN_OFFSET:
            continue
        seen_by = values[(ack.topic, ack.partition, ack.offset)][ack.value]
        if ACKS_SOURCE not in seen_by:
            seen_by.append(ACKS_SOURCE)
    for record in log:
        seen_by = values[(record.topic, record.partition, record.offset)][record.value]
        if record.source not in seen_by:
            seen_by.append(record.source)
    found = []
    for (topic, partition, offset), observed in sorted(values.items()):
        if len(observed) > 1:
            described = "; ".join(f"{show(v)} ({', '.join(who)})" for v, who in observed.items())
            found.append(
                Anomaly(
                    INCONSISTENT, topic, partition, offset, None,
                    f"{len(observed)} values: {described}",
                )
            )  # fmt: skip
    return found


def _acknowledged_anomalies(
    acks: list[Ack], by_source: dict[str, dict[TopicPartition, list[LogRecord]]]
) -> list[Anomaly]:
    """Every acknowledged record must be in every source that read its partition, at its acknowledged offset."""
    found = []
    read_partitions = {tp for parts in by_source.values() for tp in parts}
    for ack in acks:
        if TopicPartition(ack.topic, ack.partition) not in read_partitions:
            found.append(
                Anomaly(
                    LOST, ack.topic, ack.partition, ack.offset, ack.value,
                    f"acknowledged{_by(ack)}, but no source read {ack.topic}-{ack.partition}",
                )
            )  # fmt: skip
    for source, parts in sorted(by_source.items()):
        positions: dict[bytes, list[Position]] = defaultdict(list)
        at: dict[Position, bytes] = {}
        end: dict[TopicPartition, int] = {}
        for tp, records in parts.items():
            for r in records:
                positions[r.value].append((tp.topic, tp.partition, r.offset))
                at.setdefault((tp.topic, tp.partition, r.offset), r.value)
            end[tp] = max((r.offset + 1 for r in records), default=0)
        for ack in acks:
            tp = TopicPartition(ack.topic, ack.partition)
            if tp not in parts:
                continue
            where = (ack.topic, ack.partition, ack.offset)
            present = positions.get(ack.value, [])
            if not present:
                if ack.offset == UNKNOWN_OFFSET:
                    why = "not at any offset (acknowledged without one)"
                elif ack.offset >= end[tp]:
                    why = f"beyond the end of the log read (next offset {end[tp]})"
                elif where in at:
                    why = f"the offset holds {show(at[where])}"
                else:
                    why = "the offset is missing from the log read"
                found.append(
                    Anomaly(
                        LOST, ack.topic, ack.partition, ack.offset, ack.value,
                        f"[{source}] acknowledged{_by(ack)}, not read: {why}",
                    )
                )  # fmt: skip
            elif ack.offset != UNKNOWN_OFFSET and where not in present:
                elsewhere = ", ".join(f"{t}-{p}@{o}" for t, p, o in present)
                found.append(
                    Anomaly(
                        WRONG_OFFSET, ack.topic, ack.partition, ack.offset, ack.value,
                        f"[{source}] acknowledged{_by(ack)} at {ack.offset}, read at {elsewhere}",
                    )
                )  # fmt: skip
    return found


def _dirty_reads(
    reads: list[Read], by_source: dict[str, dict[TopicPartition, list[LogRecord]]]
) -> list[Anomaly]:
    """Every record a consumer was served must be at that offset in each source that read its partition."""
    found = []
    for source, parts in sorted(by_source.items()):
        at: dict[Position, bytes] = {}
        for tp, records in parts.items():
            for r in records:
                at.setdefault((tp.topic, tp.partition, r.offset), r.value)
        reported: set[Position] = set()
        for read in reads:
            where = (read.topic, read.partition, read.offset)
            if TopicPartition(read.topic, read.partition) not in parts or where in reported:
                continue
            final = at.get(where)
            if final != read.value:
                reported.add(where)
                holds = "nothing" if final is None else show(final)
                who = f" to {read.consumer}" if read.consumer else ""
                found.append(
                    Anomaly(
                        DIRTY_READ, read.topic, read.partition, read.offset, read.value,
                        f"served{who}, but [{source}] holds {holds} there",
                    )
                )  # fmt: skip
    return found


def _offset_regressions(
    commits: list[Commit], by_source: dict[str, dict[TopicPartition, list[LogRecord]]]
) -> list[Anomaly]:
    """Per group and partition, committed offsets in observation order never go back nor pass the log end."""
    found = []
    ends: dict[TopicPartition, int] = {}
    for parts in by_source.values():
        for tp, records in parts.items():
            end = max((r.offset + 1 for r in records), default=0)
            ends[tp] = max(ends.get(tp, 0), end)
    highest: dict[tuple[str, TopicPartition], Commit] = {}
    for commit in commits:
        tp = TopicPartition(commit.topic, commit.partition)
        before = highest.get((commit.group, tp))
        if before is not None and commit.offset < before.offset:
            found.append(
                Anomaly(
                    OFFSET_REGRESSION, commit.topic, commit.partition, commit.offset, None,
                    f"group {commit.group} committed {commit.offset} after {before.offset}",
                )
            )  # fmt: skip
        else:
            highest[(commit.group, tp)] = commit
        if tp in ends and commit.offset > ends[tp]:
            found.append(
                Anomaly(
                    OFFSET_REGRESSION, commit.topic, commit.partition, commit.offset, None,
                    f"group {commit.group} committed {commit.offset}, beyond the log end {ends[tp]}",
                )
            )  # fmt: skip
    return found


def _by(ack: Ack) -> str:
    return f" to {ack.producer}" if ack.producer else ""


# ---- transactions -----------------------------------------------------------------------------------------------

COMMITTED = "committed"
ABORTED = "aborted"
UNKNOWN = "unknown"
OUTCOMES = (COMMITTED, ABORTED, UNKNOWN)

ABORTED_READ = "aborted-read"
# DIRTY_READ (above) names the same anomaly for transactions: read, then gone from the settled log.
LOST_COMMIT = "lost-committed-write"
PARTIAL = "partial-transaction"
PHANTOM = "phantom-read"
TXN_KINDS = (ABORTED_READ, DIRTY_READ, LOST_COMMIT, PARTIAL, DUPLICATE, PHANTOM)


@dataclass(frozen=True, slots=True)
class Transaction:
    """A transaction as its producer knows it: the values it wrote (unique across the whole history) and how it
    ended: `committed` (the commit was acknowledged), `aborted` (the abort was acknowledged, or the producer never
    asked to commit and was then fenced or killed), `unknown` (the commit's answer was lost: it failed, timed out, or
    the producer or its coordinator died while it was being committed)."""

    id: str
    values: tuple[bytes, ...]
    outcome: str


@dataclass(slots=True)
class TransactionVerdict:
    transactions: dict[str, int]
    """How many transactions had each outcome."""
    read: int
    anomalies: list[Anomaly] = field(default_factory=list)
    unknown_committed: int = 0
    unknown_aborted: int = 0

    @property
    def valid(self) -> bool:
        return not self.anomalies

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(TXN_KINDS, 0)
        for anomaly in self.anomalies:
            counts[anomaly.kind] = counts.get(anomaly.kind, 0) + 1
        return counts

    def report(self, examples: int = 10) -> str:
        lines = [
            f"{'VALID' if self.valid else 'INVALID'}: transactions {self.transactions}, {self.read} records read; "
            f"of the unknown outcomes {self.unknown_committed} turned out committed, {self.unknown_aborted} aborted",
        ]
        lines += [f"  {kind:<22} {count}" for kind, count in self.counts().items()]
        shown: dict[str, int] = {}
        for anomaly in self.anomalies:
            shown[anomaly.kind] = shown.get(anomaly.kind, 0) + 1
            if shown[anomaly.kind] <= examples:
                lines.append("  " + anomaly.describe())
        return "\n".join(lines)


def check_transactions(
    transactions: Iterable[Transaction], reads: Iterable[LogRecord], *, live_sources: Iterable[str] = ()
) -> TransactionVerdict:
    """Judge what read_committed consumers read against the transactions written.

    Every source is what read_committed consumers returned; the sources in `live_sources` were reading while the
    faults happened (partial reads), the others are complete reads of their partitions once everything settled.
    Anomalies: `aborted-read` (a value of an aborted transaction was read), `dirty-read` (a live source read a value
    the settled log does not hold: its transaction was visible before it was decided, i.e. beyond the last stable
    offset, then aborted), `lost-committed-write` (a committed value missing from a complete source),
    `partial-transaction` (a complete source holds some of a transaction's values but not all: not atomic),
    `duplicate` (a value at two positions of one source), `phantom-read` (a value no transaction wrote).
    """
    transactions = list(transactions)
    reads = list(reads)
    live = set(live_sources)
    owner: dict[bytes, Transaction] = {value: txn for txn in transactions for value in txn.values}
    by_source: dict[str, list[LogRecord]] = defaultdict(list)
    for record in reads:
        by_source[record.source].append(record)
    complete = {name for name in by_source if name not in live}
    settled: dict[bytes, LogRecord] = {}
    for name in complete:
        for record in by_source[name]:
            settled.setdefault(record.value, record)
    anomalies: list[Anomaly] = []
    for name, records in sorted(by_source.items()):
        positions: dict[bytes, list[LogRecord]] = defaultdict(list)
        for record in records:
            positions[record.value].append(record)
        for value, where in positions.items():
            first = where[0]
            txn = owner.get(value)
            if len(where) > 1:
                others = ", ".join(f"{r.topic}-{r.partition}@{r.offset}" for r in where)
                anomalies.append(Anomaly(DUPLICATE, first.topic, first.partition, first.offset, value,
                                         f"[{name}] read at {len(where)} positions: {others}"))  # fmt: skip
            if txn is None:
                anomalies.append(Anomaly(PHANTOM, first.topic, first.partition, first.offset, value,
                                         f"[{name}] written by no transaction of the history"))  # fmt: skip
            elif txn.outcome == ABORTED:
                anomalies.append(Anomaly(ABORTED_READ, first.topic, first.partition, first.offset, value,
                                         f"[{name}] of transaction {txn.id}, which aborted"))  # fmt: skip
            elif name in live and complete and value not in settled:
                anomalies.append(Anomaly(DIRTY_READ, first.topic, first.partition, first.offset, value,
                                         f"[{name}] of transaction {txn.id} ({txn.outcome}), read while the "
                                         "faults happened but absent from the settled log"))  # fmt: skip
    unknown_committed = unknown_aborted = 0
    for name in sorted(complete):
        present = {record.value for record in by_source[name]}
        for txn in transactions:
            found = [value in present for value in txn.values]
            if txn.outcome == COMMITTED:
                for value, there in zip(txn.values, found, strict=True):
                    if not there:
                        anomalies.append(Anomaly(LOST_COMMIT, "", -1, None, value,
                                                 f"[{name}] of transaction {txn.id}, which committed"))  # fmt: skip
            elif any(found) and not all(found):
                missing = [show(v) for v, there in zip(txn.values, found, strict=True) if not there]
                anomalies.append(Anomaly(PARTIAL, "", -1, None, None,
                                         f"[{name}] transaction {txn.id} ({txn.outcome}): {sum(found)} of "
                                         f"{len(found)} values read, missing {missing[:5]}"))  # fmt: skip
            if txn.outcome == UNKNOWN and name == min(complete):
                if all(found):
                    unknown_committed += 1
                elif not any(found):
                    unknown_aborted += 1
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for txn in transactions:
        outcomes[txn.outcome] = outcomes.get(txn.outcome, 0) + 1
    return TransactionVerdict(outcomes, len(reads), anomalies, unknown_committed, unknown_aborted)


# ---- JSONL input and output ------------------------------------------------------------------------------------


def _value_of(obj: dict[str, Any]) -> bytes:
    if "value_b64" in obj:
        return base64.b64decode(obj["value_b64"])
    value = obj["value"]
    if not isinstance(value, str):
        raise ValueError(f"value must be a string (or give value_b64): {obj}")
    return value.encode()


def ack_from_json(obj: dict[str, Any]) -> Ack:
    return Ack(
        topic=str(obj.get("topic", "")),
        partition=int(obj["partition"]),
        offset=int(obj["offset"]),
        value=_value_of(obj),
        producer=str(obj.get("producer", "")),
    )


def record_from_json(obj: dict[str, Any], default_source: str = DEFAULT_SOURCE) -> LogRecord:
    return LogRecord(
        topic=str(obj.get("topic", "")),
        partition=int(obj["partition"]),
        offset=int(obj["offset"]),
        value=_value_of(obj),
        source=str(obj.get("source", default_source)),
    )


def _value_json(value: bytes) -> dict[str, str]:
    try:
        return {"value": value.decode()}
    except UnicodeDecodeError:
        return {"value_b64": base64.b64encode(value).decode()}


def read_from_json(obj: dict[str, Any]) -> Read:
    return Read(
        topic=str(obj.get("topic", "")),
        partition=int(obj["partition"]),
        offset=int(obj["offset"]),
        value=_value_of(obj),
        consumer=str(obj.get("consumer", "")),
    )


def commit_from_json(obj: dict[str, Any]) -> Commit:
    return Commit(
        group=str(obj["group"]),
        topic=str(obj.get("topic", "")),
        partition=int(obj["partition"]),
        offset=int(obj["offset"]),
    )


def read_to_json(read: Read) -> dict[str, Any]:
    obj: dict[str, Any] = {"topic": read.topic, "partition": read.partition, "offset": read.offset}
    obj.update(_value_json(read.value))
    if read.consumer:
        obj["consumer"] = read.consumer
    return obj


def commit_to_json(commit: Commit) -> dict[str, Any]:
    return {
        "group": commit.group,
        "topic": commit.topic,
        "partition": commit.partition,
        "offset": commit.offset,
    }


def ack_to_json(ack: Ack) -> dict[str, Any]:
    obj: dict[str, Any] = {"topic": ack.topic, "partition": ack.partition, "offset": ack.offset}
    obj.update(_value_json(ack.value))
    if ack.producer:
        obj["producer"] = ack.producer
    return obj


def record_to_json(record: LogRecord) -> dict[str, Any]:
    obj: dict[str, Any] = {"topic": record.topic, "partition": record.partition, "offset": record.offset}
    obj.update(_value_json(record.value))
    obj["source"] = record.source
    return obj


def _json_lines(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                yield number, json.loads(line)


def read_acks(path: Path) -> list[Ack]:
    acks = []
    for number, obj in _json_lines(path):
        try:
            acks.append(ack_from_json(obj))
        except (KeyError, ValueError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not an acknowledgement ({error!r}): {obj}") from None
    return acks


def read_log(path: Path, default_source: str | None = None) -> list[LogRecord]:
    """Records of a log dump; those without a "source" get `default_source` (the file's name if None)."""
    source = default_source if default_source is not None else path.name
    records = []
    for number, obj in _json_lines(path):
        try:
            records.append(record_from_json(obj, source))
        except (KeyError, ValueError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not a log record ({error!r}): {obj}") from None
    return records


def _parsed(path: Path, parse: Any, what: str) -> list[Any]:
    items = []
    for number, obj in _json_lines(path):
        try:
            items.append(parse(obj))
        except (KeyError, ValueError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not {what} ({error!r}): {obj}") from None
    return items


def read_reads(path: Path) -> list[Read]:
    return _parsed(path, read_from_json, "a read")


def read_commits(path: Path) -> list[Commit]:
    return _parsed(path, commit_from_json, "a commit")


def write_jsonl(path: Path, items: Iterable[Ack | LogRecord | Read | Commit]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for item in items:
            if isinstance(item, Ack):
                obj = ack_to_json(item)
            elif isinstance(item, LogRecord):
                obj = record_to_json(item)
            elif isinstance(item, Read):
                obj = read_to_json(item)
            else:
                obj = commit_to_json(item)
            out.write(json.dumps(obj) + "\n")


# ---- command line ----------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kbroker.testing.history",
        description="Check acknowledged writes against the final log: lost writes, duplicates, wrong and "
        "inconsistent offsets, gaps. Exit status 0 if valid, 1 if not.",
    )
    parser.add_argument("acks", type=Path, help="JSONL: one acknowledgement per line")
    parser.add_argument(
        "logs", type=Path, nargs="+", help="JSONL: the records read back (one source per file)"
    )
    parser.add_argument(
        "--start-offset", type=int, default=None, help="every partition must begin at this offset (e.g. 0)"
    )
    parser.add_argument("--reads", type=Path, help="JSONL: records consumers were served during the faults")
    parser.add_argument(
        "--commits", type=Path, help="JSONL: a group's committed offsets, in the order observed"
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    parser.add_argument("--examples", type=int, default=10, help="anomalies shown per kind [default 10]")
    args = parser.parse_args(argv)
    try:
        acks = read_acks(args.acks)
        log = [record for path in args.logs for record in read_log(path)]
        reads = read_reads(args.reads) if args.reads else []
        commits = read_commits(args.commits) if args.commits else []
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    verdict = check(acks, log, start_offset=args.start_offset, reads=reads, commits=commits)
    if args.json:
        out.write(json.dumps(verdict.to_json()) + "\n")
    else:
        out.write(verdict.report(args.examples) + "\n")
    return 0 if verdict.valid else 1


if __name__ == "__main__":
    sys.exit(main())
