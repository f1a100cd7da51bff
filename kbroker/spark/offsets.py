"""Offset ranges: how a read is cut into Spark tasks and how far a micro-batch may go. Plain arithmetic, no I/O.

The rules are Spark's own connector's (KafkaOffsetRangeCalculator and KafkaMicroBatchStream.rateLimit): one task per
topic-partition; when `minPartitions` asks for more tasks than there are partitions, the large ranges are cut in
parts proportional to their share of all records; `maxRecordsPerPartition` cuts any range longer than it; a
micro-batch under `maxOffsetsPerTrigger` takes from each partition in proportion to what it has left, never starving
a partition that has something (a share below one record is rounded up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kbroker.spark.options import EARLIEST, LATEST, TopicPartition


@dataclass(frozen=True)
class OffsetRange:
    """Records [from_offset, until_offset) of one partition. Either end may still be EARLIEST / LATEST, which the
    task reading the range resolves when it starts (as Spark's own batch reads do)."""

    tp: TopicPartition
    from_offset: int
    until_offset: int

    @property
    def resolved(self) -> bool:
        return self.from_offset >= 0 and self.until_offset >= 0

    @property
    def size(self) -> int:
        """The number of offsets in the range; a range with an unresolved end counts as one (it may hold
        anything), as Spark counts it."""
        if not self.resolved:
            return 1
        return self.until_offset - self.from_offset


def split_ranges(
    ranges: Sequence[OffsetRange], min_partitions: int | None, max_records_per_partition: int | None
) -> list[OffsetRange]:
    """The ranges to read, one Spark task each: empty ones dropped, large ones cut (see the module's doc)."""
    ranges = [r for r in ranges if r.size > 0]
    if min_partitions is not None and len(ranges) < min_partitions:
        ranges = _spread(ranges, min_partitions)
    if max_records_per_partition is not None:
        ranges = [part for r in ranges for part in _cut(r, math.ceil(r.size / max_records_per_partition))]
    return ranges


def _spread(ranges: list[OffsetRange], min_partitions: int) -> list[OffsetRange]:
    total = sum(r.size for r in ranges)

    def parts_of(size: int, of_total: int, wanted: int) -> int:
        return max(round(size / of_total * wanted), 1)

    # Ranges too small to split keep their task, and their records are left out of the proportion for the rest.
    unsplit = [r for r in ranges if parts_of(r.size, total, min_partitions) == 1]
    split_total = total - sum(r.size for r in unsplit)
    split_wanted = max(min_partitions - len(unsplit), 1)
    out: list[OffsetRange] = []
    for r in ranges:
        parts = 1 if r in unsplit else parts_of(r.size, split_total, split_wanted)
        out += _cut(r, parts)
    return out


def _cut(r: OffsetRange, parts: int) -> list[OffsetRange]:
    if parts <= 1 or not r.resolved:
        return [r]
    out = []
    start = r.from_offset
    remaining = r.size
    for part in range(parts):
        # the last part takes what integer division left over
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.until_offset)
        if end > start:
            out.append(OffsetRange(r.tp, start, end))
        start = end
    return out


def rate_limit(
    limit: int,
    start: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    earliest_of_new: Mapping[TopicPartition, int],
) -> dict[TopicPartition, int]:
    """The end offsets of a micro-batch that reads at most about `limit` records from `start` towards `latest`.
    A partition missing from `start` (new since) begins at its `earliest_of_new` offset."""
    sizes: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        begin = start.get(tp, earliest_of_new.get(tp))
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        if tp not in sizes:
            out[tp] = end
            continue
        begin = start.get(tp, earliest_of_new.get(tp, 0))
        share = limit * (sizes[tp] / total)
        # a partition with something left gets at least one record
        taken = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(end, begin + taken)
    return out


def records_between(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> int:
    """How many offsets lie between two offset maps (a partition missing from `start` counting from 0), for
    minOffsetsPerTrigger."""
    return sum(max(0, offset - start.get(tp, 0)) for tp, offset in end.items())


def resolve(offset: int, earliest: int, latest: int) -> int:
    if offset == EARLIEST:
        return earliest
    if offset == LATEST:
        return latest
    return offset
