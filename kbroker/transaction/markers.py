"""Writing transaction markers on the partitions this node leads: the work of WriteTxnMarkers (Kafka's
KafkaApis.handleWriteTxnMarkersRequest), shared by the handler (markers from a coordinator on another node) and the
local coordinator (markers for partitions it leads itself, without a network round trip).

Each marker is appended as the partition's leader with acks=-1: the answer waits until it is fsynced and
replicated to the ISR. Once a marker is on a `__consumer_offsets` partition, the group coordinator makes the
producer's offsets of that transaction visible (commit) or drops them (abort).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kbroker.common import TopicPartition
from kbroker.metadata.image import OFFSETS_TOPIC
from kbroker.replication.replica_manager import ProduceResult
from protocol.errors import ErrorCode


class MarkerLog(Protocol):
    """What writing markers needs of the replica manager."""

    def append_end_txn_markers(
        self,
        partitions: Iterable[TopicPartition],
        *,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        now_ms: int,
    ) -> list[ProduceResult]: ...

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None: ...


class OffsetsTransactions(Protocol):
    """The group coordinator's side of a transaction's end (kbroker/coordinator/wiring.py)."""

    async def complete_transaction(
        self, partitions: Collection[int], producer_id: int, commit: bool
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class Marker:
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    partitions: tuple[TopicPartition, ...]


class TxnMarkerWriter:
    def __init__(
        self,
        log: MarkerLog,
        offsets: OffsetsTransactions,
        *,
        clock_ms: Callable[[], int],
        timeout_ms: int = 30_000,
    ) -> None:
        self._log = log
        self._offsets = offsets
        self._now_ms = clock_ms
        self.timeout_ms = timeout_ms
        """Kafka's request.timeout.ms: how long a marker may wait for its acknowledgement."""

    async def write(self, markers: Sequence[Marker]) -> list[dict[TopicPartition, ErrorCode]]:
        """Append every marker (in order, before waiting for any), then wait for their acknowledgements; each
        marker's result per partition. The group coordinator hears of `__consumer_offsets` partitions written."""
        now = self._now_ms()
        appended = [
            self._log.append_end_txn_markers(
                marker.partitions,
                producer_id=marker.producer_id,
                producer_epoch=marker.producer_epoch,
                coordinator_epoch=marker.coordinator_epoch,
                commit=marker.commit,
                now_ms=now,
            )
            for marker in markers
        ]
        await self._log.wait_for_acks([r for results in appended for r in results], self.timeout_ms)
        out = []
        for marker, results in zip(markers, appended, strict=True):
            errors = {r.tp: ErrorCode.NONE if r.error is None else r.error.code for r in results}
            offsets = [
                tp.partition for tp, e in errors.items() if tp.topic == OFFSETS_TOPIC and e is ErrorCode.NONE
            ]
            if offsets:
                await self._offsets.complete_transaction(offsets, marker.producer_id, marker.commit)
            out.append(errors)
        return out
