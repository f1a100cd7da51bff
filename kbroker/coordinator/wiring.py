"""The group coordinator inside a broker: `__consumer_offsets`, which of its partitions we coordinate, durability.

`GroupService` owns the `GroupCoordinator` and its `CoordinatorRuntime` and connects them to the rest of the broker
through narrow interfaces: the replica manager's leader logs and appends (`OffsetsLog`), the metadata view (who
leads what), topic administration (to create `__consumer_offsets`) and the clock.

- it creates `__consumer_offsets` once it is missing and enough brokers are live for its replication factor (a
  single node creates it at once, before its listener opens);
- ownership follows leadership: after each metadata image (this service is subscribed after the replica manager, so
  roles are applied first) it loads the partitions this node now leads and unloads (asynchronously: parked requests
  get NOT_COORDINATOR) the ones it no longer leads;
- coordinator records are appended to the partition as its leader with acks=-1: the response waits until they are
  fsynced here and replicated to the ISR, so an acknowledged offset commit survives kill -9 and power loss;
- FindCoordinator answers with the live leader of the group's partition;
- committed offsets of deleted topics are forgotten (tombstones);
- TxnOffsetCommit's records are one transactional batch of the producer, written once the transaction coordinator
  confirms `__consumer_offsets`' partition is in the producer's transaction (KIP-890); a transaction's marker makes
  its offsets visible or drops them (`complete_transaction`, from WriteTxnMarkers).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol

import trio

from kbroker.clock import Clock, SteadyClock
from kbroker.common import KafkaError, TopicPartition
from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from kbroker.coordinator.records import Record
from kbroker.coordinator.runtime import CoordinatorRuntime, offsets_batch, read_log_entries
from kbroker.log.partition_log import PartitionLog
from kbroker.log.producer_state import VerificationGuard
from kbroker.metadata.api import MetadataView, TopicAdmin
from kbroker.metadata.image import OFFSETS_TOPIC, BrokerRegistration, MetadataImage
from kbroker.replication.replica_manager import ProduceResult
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

# Kafka's offsets.commit.timeout.ms default: how long a coordinator write may wait for acknowledgement.
COMMIT_TIMEOUT_MS = 5000
CREATE_RETRY_S = 1.0


class OffsetsLog(Protocol):
    """What the coordinator needs of the replica manager."""

    def leader_log(self, tp: TopicPartition) -> PartitionLog | None: ...

    def is_leader(self, tp: TopicPartition) -> bool: ...

    def append_records(
        self,
        entries: Iterable[tuple[TopicPartition, bytearray]],
        *,
        required_acks: int,
        now_ms: int,
        internal_topics_allowed: bool = False,
        from_client: bool = True,
        verification_guards: Mapping[TopicPartition, VerificationGuard] | None = None,
    ) -> list[ProduceResult]: ...

    def begin_transaction_verification(
        self, producer_id: int, partitions: Iterable[TopicPartition], now_ms: int
    ) -> dict[TopicPartition, VerificationGuard]: ...

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None: ...


# Asks the transaction coordinator whether partitions are in a producer's transaction (KIP-890): the error per
# partition (TransactionService.verify_for_produce).
TransactionVerifier = Callable[
    [str, int, int, Sequence[TopicPartition]], Awaitable[Mapping[TopicPartition, ErrorCode]]
]


@dataclasses.dataclass(frozen=True, slots=True)
class OffsetsTopicSettings:
    num_partitions: int = 50
    replication_factor: int = 3
    segment_bytes: int = 104_857_600


class ReplicatedOffsetsWriter:
    """The coordinator's OffsetsWriter: one batch per `__consumer_offsets` partition, appended as leader (before the
    first await, so calls never interleave their records), then acknowledged like an acks=-1 produce."""

    def __init__(self, replicas: OffsetsLog) -> None:
        self._replicas = replicas
        self.verifier: TransactionVerifier | None = None
        """Set once the transaction coordinator exists (it is built after the group coordinator)."""

    async def append(self, records: Mapping[int, Sequence[Record]], now_ms: int) -> None:
        entries = [
            (TopicPartition(OFFSETS_TOPIC, partition), offsets_batch(recs, now_ms))
            for partition, recs in records.items()
            if recs
        ]
        results = self._replicas.append_records(
            entries, required_acks=-1, now_ms=now_ms, internal_topics_allowed=True
        )
        await self._replicas.wait_for_acks(results, COMMIT_TIMEOUT_MS)
        for result in results:
            if result.error is not None:
                raise result.error

    async def append_transactional(
        self,
        partition: int,
        records: Sequence[Record],
        now_ms: int,
        *,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
    ) -> None:
        tp = TopicPartition(OFFSETS_TOPIC, partition)
        guards = self._replicas.begin_transaction_verification(producer_id, [tp], now_ms)
        if guards and self.verifier is not None:
            errors = await self.verifier(transactional_id, producer_id, producer_epoch, [tp])
            error = errors.get(tp, ErrorCode.NONE)
            if error is not ErrorCode.NONE:
                raise KafkaError(
                    _verification_error(error), f"{tp} is not verified in the transaction: {error.name}"
                )
        batch = offsets_batch(records, now_ms, producer_id, producer_epoch)
        results = self._replicas.append_records(
            [(tp, batch)],
            required_acks=-1,
            now_ms=now_ms,
            internal_topics_allowed=True,
            from_client=False,
            verification_guards=guards,
        )
        await self._replicas.wait_for_acks(results, COMMIT_TIMEOUT_MS)
        error_ = results[0].error
        if error_ is not None:
            raise KafkaError(_txn_commit_error(error_.code), error_.message)


def _verification_error(code: ErrorCode) -> ErrorCode:
    """What a TxnOffsetCommit answers when the transaction coordinator did not confirm the partition."""
    if code is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code in (
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    ):
        # Retriable for every client without looking for the group coordinator again (which is fine).
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    return code


def _txn_commit_error(code: ErrorCode) -> ErrorCode:
    """Kafka's answer to a TxnOffsetCommit whose write failed with `code`."""
    if code in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return code


class GroupService:
    def __init__(
        self,
        config: CoordinatorConfig,
        offsets_topic: OffsetsTopicSettings,
        *,
        node_id: int,
        replicas: OffsetsLog,
        metadata: MetadataView,
        topic_admin: TopicAdmin,
        clock: Clock,
    ) -> None:
        self.node_id = node_id
        self.offsets_topic = offsets_topic
        self._replicas = replicas
        self._metadata = metadata
        self._topic_admin = topic_admin
        # No partition is ours until it is loaded: until then its groups get NOT_COORDINATOR, never an empty state.
        self.coordinator = GroupCoordinator(config, owned_partitions=())
        self.writer = ReplicatedOffsetsWriter(replicas)
        # Session, rebalance, offset-expiry and transaction timeouts are durations: a step of the system clock must
        # not move them.
        self.runtime = CoordinatorRuntime(
            self.coordinator, self.writer, clock=SteadyClock(clock).now_ms, txn_writer=self.writer
        )
        self._nursery: trio.Nursery | None = None
        self._started = False
        self._resigning: set[int] = set()
        self._last_topic_ids: dict[str, uuid.UUID] = {}

    # ---- the task ----------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The coordinator's timers; `__consumer_offsets` created (started after that, if it can be created now,
        so a single node's groups are loaded before any client can ask about them)."""
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.runtime.run)
                self._nursery = nursery
                if self._can_create(self._metadata.image()):
                    await self._ensure_offsets_topic()
                    task_status.started()
                else:
                    # Until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE, as in Kafka.
                    task_status.started()
                    await self._ensure_offsets_topic()
        finally:
            # Stopped: a last metadata image (a cluster node leaving) must not start resignations.
            self._nursery = None

    def _can_create(self, image: MetadataImage) -> bool:
        return OFFSETS_TOPIC in image.topics or len(image.brokers) >= self.offsets_topic.replication_factor

    async def _ensure_offsets_topic(self) -> None:
        """Create `__consumer_offsets` once enough brokers are live for its replication factor (a cluster whose
        nodes start one by one must not create it on the first node alone), then start coordinating."""
        settings = self.offsets_topic
        while True:
            image = await self._metadata.wait_for(self._can_create, math.inf)
            assert image is not None
            if OFFSETS_TOPIC in image.topics:
                break
            configs = {"cleanup.policy": "compact", "segment.bytes": str(settings.segment_bytes)}
            try:
                await self._topic_admin.create_topic(
                    OFFSETS_TOPIC, settings.num_partitions, settings.replication_factor, configs
                )
                log.info("created %s with %d partitions", OFFSETS_TOPIC, settings.num_partitions)
            except KafkaError as exc:
                # Another node created it first (our metadata catches up), or the metadata store is unavailable.
                if exc.code is not ErrorCode.TOPIC_ALREADY_EXISTS:
                    log.info("group coordinator not started yet: %s", exc)
                    await trio.sleep(CREATE_RETRY_S)
        topic = self._metadata.image().topics[OFFSETS_TOPIC]
        config = self.coordinator.config
        if topic.num_partitions != config.offsets_topic_num_partitions:
            # The topic's partition count decides where groups live, whatever the setting says now (as in Kafka,
            # where offsets.topic.num.partitions must not change once the topic exists). No group is loaded yet, so
            # nothing was placed with the other count.
            log.warning(
                "%s has %d partitions, offsets.topic.num.partitions says %d: using %d",
                OFFSETS_TOPIC,
                topic.num_partitions,
                config.offsets_topic_num_partitions,
                topic.num_partitions,
            )
            self.coordinator.config = dataclasses.replace(
                config, offsets_topic_num_partitions=topic.num_partitions
            )
        self._started = True
        self._last_topic_ids = {name: t.topic_id for name, t in self._metadata.image().topics.items()}
        self._sync_ownership(self._metadata.image())
        log.info(
            "coordinating %d of %d partitions of %s: %d groups loaded",
            len(self.coordinator.owned_partitions or ()),
            topic.num_partitions,
            OFFSETS_TOPIC,
            len(self.coordinator.groups),
        )

    # ---- following metadata ------------------------------------------------------------------------------------

    def on_metadata(self, image: MetadataImage) -> None:
        """A metadata publisher (after the replica manager): ownership follows leadership; deleted topics' offsets
        are forgotten."""
        if not self._started:
            return
        deleted = [
            name
            for name, topic_id in self._last_topic_ids.items()
            if name not in image.topics or image.topics[name].topic_id != topic_id
        ]
        self._last_topic_ids = {name: topic.topic_id for name, topic in image.topics.items()}
        if deleted and self.coordinator.owned_partitions and self._nursery is not None:
            # The coordinator call and its append run in one task step, so its tombstones reach the log in order
            # with every other coordinator write.
            self._nursery.start_soon(self.runtime.on_topics_deleted, deleted)
        self._sync_ownership(image)

    def _sync_ownership(self, image: MetadataImage) -> None:
        topic = image.topics.get(OFFSETS_TOPIC)
        if topic is None:
            return
        loaded = 0
        for partition in range(topic.num_partitions):
            leads = self._replicas.is_leader(TopicPartition(OFFSETS_TOPIC, partition))
            owns = self.owns(partition)
            if partition in self._resigning:
                continue
            if leads and not owns:
                loaded += self._load(partition)
            elif owns and not leads and self._nursery is not None:
                self._resigning.add(partition)
                self._nursery.start_soon(self._resign, partition)
        if loaded:
            log.debug("loaded %d partitions of %s", loaded, OFFSETS_TOPIC)

    def owns(self, partition: int) -> bool:
        owned = self.coordinator.owned_partitions
        return owned is not None and partition in owned

    def _load(self, partition: int) -> int:
        """Load a `__consumer_offsets` partition and coordinate its groups from now on."""
        plog = self._replicas.leader_log(TopicPartition(OFFSETS_TOPIC, partition))
        if plog is None:
            return 0
        try:
            self.runtime.load_partition(partition, read_log_entries(plog))
        except Exception:
            # Its groups get NOT_COORDINATOR (and FindCoordinator COORDINATOR_NOT_AVAILABLE) rather than a state we
            # could not read back; every other partition keeps working.
            log.exception("could not load %s-%d; its groups stay unavailable", OFFSETS_TOPIC, partition)
            self._drop_partial_load(partition)
            return 0
        return 1

    def _drop_partial_load(self, partition: int) -> None:
        # `load` may have added some groups before it failed; forget them with the partition.
        coordinator = self.coordinator
        for group_id in [g for g in coordinator.groups if coordinator.partition_for(g) == partition]:
            del coordinator.groups[group_id]
            coordinator.offsets.remove_all(group_id)
        if coordinator.owned_partitions is not None:
            coordinator.owned_partitions.discard(partition)

    async def _resign(self, partition: int) -> None:
        """Stop coordinating a partition's groups; their parked requests get NOT_COORDINATOR."""
        try:
            if self.owns(partition):
                await self.runtime.unload_partition(partition)
                log.info("no longer coordinating the groups of %s-%d", OFFSETS_TOPIC, partition)
        finally:
            self._resigning.discard(partition)
        # Leadership may have come back while we unloaded.
        self._sync_ownership(self._metadata.image())

    # ---- transactions ------------------------------------------------------------------------------------------

    def set_transaction_verifier(self, verifier: TransactionVerifier) -> None:
        """The transaction coordinator, which is built after this service, confirms TxnOffsetCommits' partitions."""
        self.writer.verifier = verifier

    async def complete_transaction(self, partitions: Collection[int], producer_id: int, commit: bool) -> None:
        """A transaction's marker is written on these `__consumer_offsets` partitions (TxnMarkerWriter)."""
        await self.runtime.complete_transaction(partitions, producer_id, commit)

    # ---- FindCoordinator ---------------------------------------------------------------------------------------

    def find_group_coordinator(self, group_id: str) -> BrokerRegistration:
        """The live broker leading the group's `__consumer_offsets` partition; KafkaError COORDINATOR_NOT_AVAILABLE
        if there is none (clients ask again)."""
        image = self._metadata.image()
        if OFFSETS_TOPIC not in image.topics:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC} does not exist")
        partition = self.coordinator.partition_for(group_id)
        leader = image.live_leader(OFFSETS_TOPIC, partition)
        if leader < 0:
            raise KafkaError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC}-{partition} has no live leader"
            )
        if leader == self.node_id and not self.owns(partition):
            # We lead it but have not loaded it (or could not): sending the client here would only earn it
            # NOT_COORDINATOR; COORDINATOR_NOT_AVAILABLE makes it ask again shortly.
            raise KafkaError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC}-{partition} is not loaded"
            )
        return image.brokers[leader]
