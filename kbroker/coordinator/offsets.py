"""Committed offsets of every group, and Kafka's rules about when they expire.

Plain synchronous code and plain values. Whether a commit is allowed at all (generation, member) is the group's
decision (Group.validate_offset_commit); this module checks each partition and keeps the offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kbroker.common import TopicPartition
from protocol.errors import ErrorCode

# What OffsetFetch answers for a partition without a committed offset.
NO_OFFSET = -1
NO_LEADER_EPOCH = -1
NO_METADATA = ""


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int  # -1 when the client did not say
    metadata: str
    commit_timestamp_ms: int
    # Only set by OffsetCommit v2-v4 with an explicit retention_time_ms: the offset then expires at this time,
    # whatever the group does (the pre-2.1 rule).
    expire_timestamp_ms: int | None = None
    # Where the commit stands in the log of its partition (a counter): a transaction's offsets, made visible when
    # its COMMIT marker comes, do not replace an offset committed after them.
    order: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class OffsetCommitEntry:
    """One partition of an OffsetCommit request."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    metadata: str | None = NO_METADATA


@dataclass(frozen=True, slots=True)
class PartitionResult:
    topic: str
    partition: int
    error: ErrorCode


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    error: ErrorCode = ErrorCode.NONE


def java_string_length(text: str) -> int:
    """String.length() in Java counts UTF-16 code units; Kafka compares the metadata size with it."""
    return len(text.encode("utf-16-le")) // 2


class OffsetStore:
    def __init__(self, offset_metadata_max_bytes: int = 4096) -> None:
        self.offset_metadata_max_bytes = offset_metadata_max_bytes
        self._offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}

    # ---- commit ------------------------------------------------------------------------------------------------

    def check_commit(
        self, entries: Sequence[OffsetCommitEntry], now_ms: int, retention_time_ms: int = -1
    ) -> tuple[list[PartitionResult], dict[TopicPartition, OffsetAndMetadata]]:
        """Per-partition checks of a commit the group allowed: (result per entry, offsets to store)."""
        # retention_time_ms of OffsetCommit v2-v4; -1 means "use the broker's offsets.retention.minutes".
        expire = now_ms + retention_time_ms if retention_time_ms >= 0 else None
        results: list[PartitionResult] = []
        accepted: dict[TopicPartition, OffsetAndMetadata] = {}
        for entry in entries:
            metadata = entry.metadata if entry.metadata is not None else NO_METADATA
            if java_string_length(metadata) > self.offset_metadata_max_bytes:
                results.append(
                    PartitionResult(entry.topic, entry.partition, ErrorCode.OFFSET_METADATA_TOO_LARGE)
                )
                continue
            accepted[TopicPartition(entry.topic, entry.partition)] = OffsetAndMetadata(
                offset=entry.offset,
                leader_epoch=entry.leader_epoch,
                metadata=metadata,
                commit_timestamp_ms=now_ms,
                expire_timestamp_ms=expire,
            )
            results.append(PartitionResult(entry.topic, entry.partition, ErrorCode.NONE))
        return results, accepted

    def store(self, group_id: str, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        self._offsets.setdefault(group_id, {})[tp] = offset

    # ---- read --------------------------------------------------------------------------------------------------

    def get(self, group_id: str, tp: TopicPartition) -> OffsetAndMetadata | None:
        return self._offsets.get(group_id, {}).get(tp)

    def all(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return dict(self._offsets.get(group_id, {}))

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    def group_ids(self) -> list[str]:
        return list(self._offsets)

    def fetch(self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None) -> list[FetchedOffset]:
        """The committed offsets asked for (all of the group's when `topics` is None); -1 where there is none."""
        committed = self._offsets.get(group_id, {})
        if topics is None:
            return [
                FetchedOffset(tp.topic, tp.partition, o.offset, o.leader_epoch, o.metadata)
                for tp, o in sorted(committed.items())
            ]
        out: list[FetchedOffset] = []
        for topic, partitions in topics:
            for partition in partitions:
                o = committed.get(TopicPartition(topic, partition))
                if o is None:
                    # -1 as leader epoch also keeps librdkafka from validating an offset it cannot check.
                    out.append(FetchedOffset(topic, partition, NO_OFFSET, NO_LEADER_EPOCH, NO_METADATA))
                else:
                    out.append(FetchedOffset(topic, partition, o.offset, o.leader_epoch, o.metadata))
        return out

    # ---- removal -----------------------------------------------------------------------------------------------

    def remove(self, group_id: str, tps: Iterable[TopicPartition]) -> list[TopicPartition]:
        """Remove these offsets; returns those that existed (each needs a tombstone)."""
        committed = self._offsets.get(group_id)
        if committed is None:
            return []
        removed = [tp for tp in tps if committed.pop(tp, None) is not None]
        if not committed:
            del self._offsets[group_id]
        return removed

    def remove_all(self, group_id: str) -> list[TopicPartition]:
        return sorted(self._offsets.pop(group_id, {}))

    def remove_topics(self, group_id: str, topics: Iterable[str]) -> list[TopicPartition]:
        gone = set(topics)
        committed = self._offsets.get(group_id, {})
        return self.remove(group_id, sorted(tp for tp in committed if tp.topic in gone))


def expired_offsets(
    offsets: dict[TopicPartition, OffsetAndMetadata],
    *,
    now_ms: int,
    retention_ms: int,
    protocol_type: str | None,
    is_empty: bool,
    state_timestamp_ms: int | None,
    subscribed_topics: frozenset[str] | None,
) -> list[TopicPartition]:
    """Which offsets expire now, by Kafka's rules since 2.1 (KIP-211) and KIP-496.

    - A group that only stores offsets (no protocol type): each offset `retention_ms` after its commit.
    - A group with members at some point, now Empty: all offsets `retention_ms` after the group became Empty (the
      commit time when the group's record predates that timestamp).
    - A consumer group with members and known subscriptions: offsets of topics no longer subscribed, by commit time.
    - Any other group with members: nothing expires.
    - An offset committed with an explicit retention (expire timestamp) expires at that timestamp regardless.
    """
    if not protocol_type:

        def base(o: OffsetAndMetadata) -> int:
            return o.commit_timestamp_ms

        keep_topics: frozenset[str] = frozenset()
    elif is_empty:

        def base(o: OffsetAndMetadata) -> int:
            return state_timestamp_ms if state_timestamp_ms is not None else o.commit_timestamp_ms

        keep_topics = frozenset()
    elif protocol_type == "consumer" and subscribed_topics is not None:

        def base(o: OffsetAndMetadata) -> int:
            return o.commit_timestamp_ms

        keep_topics = subscribed_topics
    else:
        return []
    expired: list[TopicPartition] = []
    for tp, o in sorted(offsets.items()):
        if tp.topic in keep_topics:
            continue
        if o.expire_timestamp_ms is not None:
            if now_ms >= o.expire_timestamp_ms:
                expired.append(tp)
        elif now_ms - base(o) >= retention_ms:
            expired.append(tp)
    return expired
