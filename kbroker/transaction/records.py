"""The `__transaction_state` records, byte for byte as Kafka 3.x writes them, and replaying them into state.

    key    TransactionLogKey v0     version int16 (0), transactionalId string
    value  TransactionLogValue v0   version int16 (0), producerId int64, producerEpoch int16,
                                    transactionTimeoutMs int32, transactionStatus int8 (TxnState ids),
                                    transactionPartitions [topic string, partitionIds [int32]] (null when Empty),
                                    transactionLastUpdateTimestampMs int64, transactionStartTimestampMs int64

A null value (a tombstone) is an expired transactional id. Version 1 of the value (Kafka 4 with transactions v2) is
the flexible encoding with tagged fields; kbroker writes and reads version 0, the one Kafka 3.x writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kbroker.common import TopicPartition
from kbroker.coordinator.records import partition_for
from kbroker.transaction.metadata import TransactionMetadata, TxnState, TxnTransit
from protocol.errors import ProtocolError
from protocol.primitives import Reader, Writer

KEY_VERSION = 0
VALUE_VERSION = 0

Record = tuple[bytes, bytes | None]


class RecordFormatError(ValueError):
    """The bytes are not a `__transaction_state` record of a known version."""


def transaction_partition_for(transactional_id: str, num_partitions: int) -> int:
    """Where a transactional id lives: Java's `abs(transactionalId.hashCode()) % partitions`, as for groups."""
    return partition_for(transactional_id, num_partitions)


def key_bytes(transactional_id: str) -> bytes:
    w = Writer()
    w.int16(KEY_VERSION)
    w.string(transactional_id, False)
    return bytes(w.out)


def value_bytes(transit: TxnTransit) -> bytes:
    w = Writer()
    w.int16(VALUE_VERSION)
    w.int64(transit.producer_id)
    w.int16(transit.producer_epoch)
    w.int32(transit.timeout_ms)
    w.int8(transit.state.id)
    if transit.state is TxnState.EMPTY:
        w.array_length(-1, False)
    else:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(transit.partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        w.array_length(len(by_topic), False)
        for topic, partitions in by_topic.items():
            w.string(topic, False)
            w.array_length(len(partitions), False)
            for partition in partitions:
                w.int32(partition)
    w.int64(transit.last_update_ms)
    w.int64(transit.start_ms)
    return bytes(w.out)


def record(transactional_id: str, transit: TxnTransit) -> Record:
    """The record of a transition; Dead is a tombstone."""
    return key_bytes(transactional_id), None if transit.state is TxnState.DEAD else value_bytes(transit)


@dataclass(frozen=True, slots=True)
class TxnValue:
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    last_update_ms: int
    start_ms: int


def parse_key(data: bytes) -> str:
    try:
        r = Reader(data)
        version = r.int16()
        if version != KEY_VERSION:
            raise RecordFormatError(f"transaction log key version {version}")
        return r.string(False)
    except ProtocolError as e:
        raise RecordFormatError(f"malformed transaction log key: {e}") from e


def parse_value(data: bytes) -> TxnValue:
    try:
        r = Reader(data)
        version = r.int16()
        if version != VALUE_VERSION:
            raise RecordFormatError(f"transaction log value version {version}")
        producer_id = r.int64()
        producer_epoch = r.int16()
        timeout_ms = r.int32()
        state = TxnState.from_id(r.int8())
        partitions: set[TopicPartition] = set()
        for _ in range(max(r.array_length(False), 0)):
            topic = r.string(False)
            for _ in range(r.array_length(False)):
                partitions.add(TopicPartition(topic, r.int32()))
        last_update_ms = r.int64()
        start_ms = r.int64()
    except (ProtocolError, ValueError) as e:
        raise RecordFormatError(f"malformed transaction log value: {e}") from e
    return TxnValue(
        producer_id, producer_epoch, timeout_ms, state, frozenset(partitions), last_update_ms, start_ms
    )


def load(records: Iterable[Record]) -> dict[str, TransactionMetadata]:
    """The latest state of every transactional id in a partition's records, in log order (tombstones delete)."""
    out: dict[str, TransactionMetadata] = {}
    for key, value in records:
        transactional_id = parse_key(key)
        if value is None:
            out.pop(transactional_id, None)
            continue
        v = parse_value(value)
        out[transactional_id] = TransactionMetadata(
            transactional_id,
            v.producer_id,
            producer_epoch=v.producer_epoch,
            timeout_ms=v.timeout_ms,
            state=v.state,
            partitions=v.partitions,
            start_ms=v.start_ms,
            last_update_ms=v.last_update_ms,
        )
    return out
