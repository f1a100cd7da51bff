"""The transaction coordinator inside a broker: `__transaction_state`, which of its partitions we coordinate, the
writes, the markers, the timers.

`TransactionService` owns the `TransactionCoordinator` (the synchronous decisions) and connects it to the broker
through narrow interfaces, as GroupService does for groups:

- `__transaction_state` is created on first use (FindCoordinator for a transactional id answers
  COORDINATOR_NOT_AVAILABLE meanwhile, as Kafka), compacted, with transaction.state.log.* settings; a cluster waits
  for as many live brokers as its replication factor;
- ownership follows leadership: after each metadata image, partitions this node now leads are loaded (their ids
  read back from the log, at the coordinator epoch of this leadership) and transactions found decided but not
  completed get their markers written; partitions led elsewhere now are dropped;
- every transition is written to the partition as its leader with acks=-1, and applied in memory only once
  acknowledged; a write that fails leaves the state as it was (the client hears an error and retries);
- after PrepareCommit/PrepareAbort is written the client is answered, and the markers go to every partition of the
  transaction: to this node's partitions directly (TxnMarkerWriter), to others' leaders with WriteTxnMarkers, retried
  until each is written or the partition is gone; then CompleteCommit/CompleteAbort is written;
- KIP-890 verification for the Produce path: a leader asks the coordinator whether a partition is in a producer's
  transaction (here directly, or AddPartitionsToTxn verify_only to the coordinator's node);
- timers (the broker's clock, so virtual time in tests): every transaction.abort.timed.out.transaction.cleanup.
  interval.ms, transactions past their timeout are aborted and their producers fenced; every transaction.remove.
  expired.transaction.cleanup.interval.ms, ids idle for transactional.id.expiration.ms are deleted.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import trio

from kbroker.clock import Clock
from kbroker.common import KafkaError, TopicPartition
from kbroker.coordinator.runtime import read_records
from kbroker.log.partition_log import PartitionLog
from kbroker.metadata.api import MetadataView, ProducerIdManager, TopicAdmin
from kbroker.metadata.image import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, BrokerRegistration, MetadataImage
from kbroker.replication.client import BrokerClientError, BrokerClientPool, Connector, plaintext_connector
from kbroker.replication.replica_manager import ProduceResult
from kbroker.transaction.coordinator import (
    NEED_PRODUCER_ID,
    FenceThenAbort,
    MarkerJob,
    TransactionConfig,
    TransactionCoordinator,
    TxnDescription,
    TxnListing,
    TxnWrite,
)
from kbroker.transaction.markers import Marker, TxnMarkerWriter
from kbroker.transaction.metadata import PREPARED
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.write_txn_markers_request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from protocol.records import Record, build_batch

log = logging.getLogger(__name__)

CREATE_RETRY_S = 1.0
# How soon markers (or the Complete write) are tried again after a retriable failure.
RETRY_BACKOFF_S = 0.1
# How long EndTxn may wait for the markers before it is answered anyway (see TransactionService._end).
END_TXN_WAIT_S = 0.5
WRITE_TXN_MARKERS_VERSION = 1
ADD_PARTITIONS_TO_TXN_VERSION = 5


class TransactionLog(Protocol):
    """What the coordinator needs of the replica manager."""

    def leader_log(self, tp: TopicPartition) -> PartitionLog | None: ...

    def is_leader(self, tp: TopicPartition) -> bool: ...

    def leader_epoch(self, tp: TopicPartition) -> int: ...

    def append_records(
        self,
        entries: Iterable[tuple[TopicPartition, bytearray]],
        *,
        required_acks: int,
        now_ms: int,
        internal_topics_allowed: bool = False,
        from_client: bool = True,
    ) -> list[ProduceResult]: ...

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class TransactionSettings:
    """The transaction.state.log.* topic settings and the timers (Kafka's names, dots as underscores)."""

    replication_factor: int = 3
    min_isr: int = 2
    segment_bytes: int = 104_857_600
    abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    remove_expired_transaction_cleanup_interval_ms: int = 3_600_000
    request_timeout_ms: int = 30_000


class TransactionService:
    def __init__(
        self,
        config: TransactionConfig,
        settings: TransactionSettings,
        *,
        node_id: int,
        replicas: TransactionLog,
        metadata: MetadataView,
        topic_admin: TopicAdmin,
        producer_ids: ProducerIdManager,
        markers: TxnMarkerWriter,
        offsets_partition_for: Callable[[str], int],
        clock: Clock,
        connect: Connector = plaintext_connector,
    ) -> None:
        self.node_id = node_id
        self.settings = settings
        self.coordinator = TransactionCoordinator(config)
        self.markers = markers
        self._replicas = replicas
        self._metadata = metadata
        self._topic_admin = topic_admin
        self._producer_ids = producer_ids
        self._offsets_partition_for = offsets_partition_for
        self._clock = clock
        # Other nodes are reached on the inter-broker listener, with its security (`connect`), as followers are.
        self._clients = BrokerClientPool(client_id=f"kbroker-txn-{node_id}", connect=connect)
        self._nursery: trio.Nursery | None = None
        self._creating = False

    def now_ms(self) -> int:
        return self._clock.now_ms()

    # ---- the tasks ---------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The timers and the marker senders, until cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self.coordinator.active = True
                nursery.start_soon(self._every, self.settings.abort_timed_out_transaction_cleanup_interval_ms,
                                   self._abort_timed_out)  # fmt: skip
                nursery.start_soon(self._every, self.settings.remove_expired_transaction_cleanup_interval_ms,
                                   self._expire_ids)  # fmt: skip
                self._sync_ownership(self._metadata.image())
                task_status.started()
        finally:
            self._nursery = None
            self.coordinator.active = False
            with trio.CancelScope(shield=True):
                await self._clients.aclose()

    async def _every(self, interval_ms: int, fn: Callable[[], None]) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            fn()

    def _abort_timed_out(self) -> None:
        for fence in self.coordinator.fence_timed_out(self.now_ms()):
            log.info("aborting the timed-out transaction of %r (producer %d fenced at epoch %d)",
                     fence.transactional_id, fence.producer_id, fence.producer_epoch)  # fmt: skip
            self._spawn(self._abort_fenced, fence)

    async def _abort_fenced(self, fence: FenceThenAbort) -> ErrorCode:
        return await self._end(fence.transactional_id, fence.producer_id, fence.producer_epoch, False, False)

    def _expire_ids(self) -> None:
        for write in self.coordinator.expire_ids(self.now_ms()):
            self._spawn(self._write, write)

    def _spawn(self, fn: Callable[..., object], *args: object) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)  # type: ignore[arg-type]

    # ---- the topic and ownership -------------------------------------------------------------------------------

    def find_coordinator(self, transactional_id: str, *, create: bool = True) -> BrokerRegistration:
        """The live broker leading the id's `__transaction_state` partition; KafkaError COORDINATOR_NOT_AVAILABLE if
        there is none yet (the topic is then created, unless `create` is False: clients ask again)."""
        image = self._metadata.image()
        if TRANSACTION_STATE_TOPIC not in image.topics:
            if create:
                self._spawn(self._ensure_topic)
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{TRANSACTION_STATE_TOPIC} does not exist")
        partition = self.coordinator.partition_for(transactional_id)
        leader = image.live_leader(TRANSACTION_STATE_TOPIC, partition)
        if leader < 0:
            raise KafkaError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"{TRANSACTION_STATE_TOPIC}-{partition} has no live leader",
            )
        if leader == self.node_id and partition not in self.coordinator.partitions:
            raise KafkaError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{TRANSACTION_STATE_TOPIC}-{partition} is not loaded"
            )
        return image.brokers[leader]

    async def _ensure_topic(self) -> None:
        if self._creating:
            return
        self._creating = True
        try:
            settings = self.settings
            configs = {
                "cleanup.policy": "compact",
                "segment.bytes": str(settings.segment_bytes),
                "min.insync.replicas": str(min(settings.min_isr, settings.replication_factor)),
                "unclean.leader.election.enable": "false",
            }
            partitions = self.coordinator.config.transaction_state_log_num_partitions
            while True:
                image = await self._metadata.wait_for(
                    lambda i: (
                        TRANSACTION_STATE_TOPIC in i.topics or len(i.brokers) >= settings.replication_factor
                    ),
                    math.inf,
                )
                if image is None or TRANSACTION_STATE_TOPIC in image.topics:
                    return
                try:
                    await self._topic_admin.create_topic(
                        TRANSACTION_STATE_TOPIC, partitions, settings.replication_factor, configs
                    )
                    log.info("created %s with %d partitions", TRANSACTION_STATE_TOPIC, partitions)
                    return
                except KafkaError as exc:
                    if exc.code is ErrorCode.TOPIC_ALREADY_EXISTS:
                        return
                    log.info("%s not created yet: %s", TRANSACTION_STATE_TOPIC, exc)
                    await trio.sleep(CREATE_RETRY_S)
        finally:
            self._creating = False

    def on_metadata(self, image: MetadataImage) -> None:
        """A metadata publisher (after the replica manager): ownership follows leadership."""
        if self._nursery is not None:
            self._sync_ownership(image)

    def _sync_ownership(self, image: MetadataImage) -> None:
        topic = image.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return
        coordinator = self.coordinator
        if coordinator.config.transaction_state_log_num_partitions != topic.num_partitions:
            # Where ids live follows the topic as it is (transaction.state.log.num.partitions must not change).
            coordinator.config = dataclasses.replace(
                coordinator.config, transaction_state_log_num_partitions=topic.num_partitions
            )
        for partition in range(topic.num_partitions):
            tp = TopicPartition(TRANSACTION_STATE_TOPIC, partition)
            epoch = self._replicas.leader_epoch(tp)
            owned = coordinator.partitions.get(partition)
            if epoch >= 0 and (owned is None or owned.coordinator_epoch != epoch):
                self._load(partition, epoch)
            elif epoch < 0 and owned is not None:
                coordinator.unload(partition)
                log.info("no longer coordinating the transactions of %s", tp)

    def _load(self, partition: int, epoch: int) -> None:
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, partition)
        plog = self._replicas.leader_log(tp)
        if plog is None:
            return
        try:
            jobs = self.coordinator.load(partition, epoch, read_records(plog), self.now_ms())
        except Exception:
            log.exception("could not load %s; its transactional ids stay unavailable", tp)
            self.coordinator.unload(partition)
            return
        loaded = self.coordinator.partitions[partition].txns
        if loaded:
            log.info("coordinating %d transactional ids of %s at epoch %d (%d transactions to complete)",
                     len(loaded), tp, epoch, len(jobs))  # fmt: skip
        for job in jobs:
            self._spawn(self._complete, job)

    # ---- writing transitions -----------------------------------------------------------------------------------

    async def _write(self, write: TxnWrite, *, durable: bool = True) -> ErrorCode:
        """Write a transition to its partition (acks=-1, unless not `durable`) and apply it once acknowledged; what
        the client hears."""
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, write.partition)
        now = self.now_ms()
        key, value = write.record()
        batch = build_batch([Record(offset=0, timestamp=now, key=key, value=value)])
        results = self._replicas.append_records(
            [(tp, batch)],
            required_acks=-1 if durable else 1,
            now_ms=now,
            internal_topics_allowed=True,
            from_client=False,
        )
        if durable:
            await self._replicas.wait_for_acks(results, self.settings.request_timeout_ms)
        error = results[0].error
        if error is not None:
            log.info("could not write %s of %r to %s: %s", write.transit.state.display_name,
                     write.metadata.transactional_id, tp, error)  # fmt: skip
        return self.coordinator.complete_write(write, ErrorCode.NONE if error is None else error.code)

    # ---- the APIs ----------------------------------------------------------------------------------------------

    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, producer_id: int, producer_epoch: int
    ) -> tuple[ErrorCode, int, int]:
        """InitProducerId with a transactional id: (error, producer id, epoch). `producer_id` and `producer_epoch`
        are KIP-360's (-1: none given)."""
        expected = (producer_id, producer_epoch) if producer_id >= 0 else None
        new_producer_id: int | None = None
        while True:
            decision = self.coordinator.prepare_init(
                transactional_id, timeout_ms, expected, self.now_ms(), new_producer_id
            )
            if decision is NEED_PRODUCER_ID:
                try:
                    new_producer_id = await self._producer_ids.next_producer_id()
                except KafkaError:
                    return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, -1
                continue
            break
        if isinstance(decision, ErrorCode):
            return decision, -1, -1
        if isinstance(decision, FenceThenAbort):
            error = await self._abort_fenced(decision)
            return (ErrorCode.CONCURRENT_TRANSACTIONS if error is ErrorCode.NONE else error), -1, -1
        assert isinstance(decision, TxnWrite)
        error = await self._write(decision)
        if error is not ErrorCode.NONE:
            return error, -1, -1
        log.debug("initialized %r: producer %d epoch %d", transactional_id, decision.transit.producer_id,
                  decision.transit.producer_epoch)  # fmt: skip
        return ErrorCode.NONE, decision.transit.producer_id, decision.transit.producer_epoch

    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> ErrorCode:
        decision = self.coordinator.prepare_add_partitions(
            transactional_id, producer_id, producer_epoch, partitions, self.now_ms()
        )
        if isinstance(decision, ErrorCode):
            return decision
        return await self._write(decision)

    async def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str
    ) -> ErrorCode:
        """AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction."""
        tp = TopicPartition(OFFSETS_TOPIC, self._offsets_partition_for(group_id))
        return await self.add_partitions(transactional_id, producer_id, producer_epoch, [tp])

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """AddPartitionsToTxn verify_only, answered by this coordinator."""
        return self.coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)

    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> ErrorCode:
        return await self._end(transactional_id, producer_id, producer_epoch, commit, True)

    async def _end(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, from_client: bool
    ) -> ErrorCode:
        decision = self.coordinator.prepare_end(
            transactional_id, producer_id, producer_epoch, commit, from_client, self.now_ms()
        )
        if isinstance(decision, ErrorCode):
            return decision
        error = await self._write(decision)
        if error is not ErrorCode.NONE:
            return error
        job = self.coordinator.begin_markers(decision, self.now_ms())
        if isinstance(job, ErrorCode):
            return job
        # The decision is durable: the transaction completes whatever happens now. The client is answered once the
        # markers are written too, if that takes less than END_TXN_WAIT_S (the usual case): its next transaction
        # then begins at once instead of meeting CONCURRENT_TRANSACTIONS and the client's retry backoff (100 ms
        # in librdkafka). Kafka answers as soon as the decision is written; clients cannot tell but by the time.
        completed = trio.Event()
        self._spawn(self._complete, job, completed)
        if from_client:
            with trio.move_on_after(END_TXN_WAIT_S):
                await completed.wait()
        return ErrorCode.NONE

    def describe(self, transactional_id: str) -> TxnDescription:
        return self.coordinator.describe(transactional_id)

    def list_transactions(
        self, states: Iterable[str], producer_ids: Iterable[int], duration_ms: int
    ) -> tuple[ErrorCode, list[TxnListing], list[str]]:
        return self.coordinator.list_transactions(states, producer_ids, duration_ms, self.now_ms())

    async def write_markers(self, markers: Sequence[Marker]) -> list[dict[TopicPartition, ErrorCode]]:
        """WriteTxnMarkers from a coordinator (ours or another node's)."""
        return await self.markers.write(markers)

    # ---- markers -----------------------------------------------------------------------------------------------

    def _job_current(self, job: MarkerJob) -> bool:
        write = job.write
        owned = self.coordinator.partitions.get(write.partition)
        return (
            owned is not None
            and owned.coordinator_epoch == write.coordinator_epoch
            and owned.txns.get(job.transactional_id) is write.metadata
        )

    async def _complete(self, job: MarkerJob, completed: trio.Event | None = None) -> None:
        """Write the markers of a decided transaction on all its partitions, then its Complete state; `completed` is
        set when that is done (or given up)."""
        try:
            await self._write_markers_then_complete(job)
        finally:
            if completed is not None:
                completed.set()

    async def _write_markers_then_complete(self, job: MarkerJob) -> None:
        while job.pending:
            if not self._job_current(job):
                return
            image = self._metadata.image()
            by_leader: dict[int, list[TopicPartition]] = {}
            for tp in sorted(job.pending):
                if tp.topic not in image.topics:
                    self.coordinator.marker_written(job, tp)  # the topic is gone, and its records with it
                    continue
                by_leader.setdefault(image.live_leader(tp.topic, tp.partition), []).append(tp)
            async with trio.open_nursery() as nursery:
                for leader, tps in by_leader.items():
                    if leader >= 0:
                        nursery.start_soon(self._send_markers, job, image, leader, tps)
            if job.fenced:
                log.warning("stopped writing the markers of %r: a partition fenced this coordinator or producer",
                            job.transactional_id)  # fmt: skip
                return
            if job.pending:
                await trio.sleep(RETRY_BACKOFF_S)
        while self._job_current(job):
            # Not waited for: a Complete lost with a crash leaves PrepareCommit/PrepareAbort, whose markers the next
            # coordinator writes again (harmless: they end no transaction twice), and any later acks=-1 write of
            # this partition makes it durable first.
            error = await self._write(job.write, durable=False)
            if error is not ErrorCode.COORDINATOR_NOT_AVAILABLE:
                return
            # Written markers, an unwritten Complete: try again while the partition is ours.
            await trio.sleep(RETRY_BACKOFF_S)
            md = job.write.metadata
            if not self._job_current(job) or md.state not in PREPARED or md.pending_transition:
                return
            job.write = TxnWrite(
                job.write.partition, job.write.coordinator_epoch, md, md.prepare_complete(self.now_ms())
            )

    async def _send_markers(
        self, job: MarkerJob, image: MetadataImage, leader: int, partitions: list[TopicPartition]
    ) -> None:
        marker = Marker(
            job.producer_id, job.producer_epoch, job.commit, job.write.coordinator_epoch, tuple(partitions)
        )
        if leader == self.node_id:
            [errors] = await self.markers.write([marker])
        else:
            errors = await self._send_remote_markers(image.brokers[leader], marker)
        for tp, error in errors.items():
            if error in (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                self.coordinator.marker_written(job, tp)
            elif error in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED):
                job.fenced.add(tp)
            else:
                log.debug("marker of %r on %s: %s, retrying", job.transactional_id, tp, error.name)

    async def _send_remote_markers(
        self, broker: BrokerRegistration, marker: Marker
    ) -> dict[TopicPartition, ErrorCode]:
        by_topic: dict[str, list[int]] = {}
        for tp in marker.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = WriteTxnMarkersRequest(
            markers=[
                WritableTxnMarker(
                    producer_id=marker.producer_id,
                    producer_epoch=marker.producer_epoch,
                    transaction_result=marker.commit,
                    coordinator_epoch=marker.coordinator_epoch,
                    topics=[WritableTxnMarkerTopic(name=t, partition_indexes=p) for t, p in by_topic.items()],
                )
            ]
        )
        try:
            response = await self._clients.request(
                broker.host,
                broker.port,
                request,
                WRITE_TXN_MARKERS_VERSION,
                timeout_s=self.settings.request_timeout_ms / 1000 + 5,
            )
        except BrokerClientError as exc:
            log.debug("WriteTxnMarkers to broker %d failed: %s", broker.node_id, exc)
            return dict.fromkeys(marker.partitions, ErrorCode.NETWORK_EXCEPTION)
        errors: dict[TopicPartition, ErrorCode] = {}
        for result in response.markers:
            for topic in result.topics:
                for p in topic.partitions:
                    errors[TopicPartition(topic.name, p.partition_index)] = _code(p.error_code)
        return errors

    # ---- KIP-890 verification for the Produce path -------------------------------------------------------------

    async def verify_for_produce(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """Ask the id's coordinator (this node's, or another's with AddPartitionsToTxn verify_only) whether these
        partitions are in the producer's ongoing transaction; the coordinator's answer per partition."""
        try:
            # (Only FindCoordinator creates the topic: without it no transaction was ever begun.)
            broker = self.find_coordinator(transactional_id, create=False)
        except KafkaError as exc:
            return dict.fromkeys(partitions, exc.code)
        if broker.node_id == self.node_id:
            return self.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = AddPartitionsToTxnRequest(
            transactions=[
                AddPartitionsToTxnTransaction(
                    transactional_id=transactional_id,
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    verify_only=True,
                    topics=[AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()],
                )
            ]
        )
        try:
            response = await self._clients.request(
                broker.host,
                broker.port,
                request,
                ADD_PARTITIONS_TO_TXN_VERSION,
                timeout_s=self.settings.request_timeout_ms / 1000,
            )
        except BrokerClientError as exc:
            log.debug("verification with broker %d failed: %s", broker.node_id, exc)
            return dict.fromkeys(partitions, ErrorCode.NETWORK_EXCEPTION)
        if response.error_code:
            return dict.fromkeys(partitions, _code(response.error_code))
        errors = dict.fromkeys(partitions, ErrorCode.NONE)
        for result in response.results_by_transaction:
            for topic in result.topic_results:
                for p in topic.results_by_partition:
                    errors[TopicPartition(topic.name, p.partition_index)] = _code(p.partition_error_code)
        return errors


def _code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
