"""The aborted transaction index: for each segment, the transactions whose ABORT marker it holds (`.txnindex`).

A read_committed consumer gets, with every fetch, the aborted transactions whose records overlap what it fetched:
(producer id, first offset). It then skips that producer's records from the first offset until it reads the ABORT
marker. The index is what finds them without reading the log.

An entry is Kafka's AbortedTxn, and the file is Kafka's too (34 bytes per entry, big-endian): version (int16, 0),
producer id (int64), first offset (int64), last offset (int64: the marker's), last stable offset (int64: the LSO
right after the abort). The entry lives in the segment that holds the marker, which may be later than the segment
where the transaction began; the LSO in each entry tells a search when it may stop looking at later segments.
Like the other indexes, the file is written when the segment is sealed and rebuilt by recovery otherwise.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def encode_entries(entries: Iterable[AbortedTxn]) -> bytes:
    return b"".join(
        _ENTRY.pack(_VERSION, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
        for e in entries
    )


def decode_entries(data: bytes) -> list[AbortedTxn]:
    """ValueError if `data` is not a whole number of version-0 entries."""
    if len(data) % _ENTRY.size:
        raise ValueError(f"transaction index of {len(data)} bytes is not a whole number of entries")
    entries = []
    for version, producer_id, first, last, lso in _ENTRY.iter_unpack(data):
        if version != _VERSION:
            raise ValueError(f"transaction index entry version {version}")
        entries.append(AbortedTxn(producer_id, first, last, lso))
    return entries


def collect_aborted(
    indexes: Iterable[Sequence[AbortedTxn]], fetch_offset: int, upper_bound: int
) -> list[AbortedTxn]:
    """The aborted transactions overlapping [fetch_offset, upper_bound), from the indexes of the segment holding
    fetch_offset and the segments after it, in order. A transaction in range has its marker in one of them; the
    search stops at the first entry whose LSO reached upper_bound, since every transaction overlapping the range had
    ended by then (Kafka's rule)."""
    found: list[AbortedTxn] = []
    for entries in indexes:
        for entry in entries:
            if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound:
                return found
    return found
