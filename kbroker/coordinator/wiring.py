"""The group coordinator inside a broker: `__consumer_offsets`, which of its partitions we coordinate, durability.

`GroupService` owns the `GroupCoordinator` and its `CoordinatorRuntime` and connects them to the broker:

- at startup it creates `__consumer_offsets` if it is missing, loads every partition this broker leads, and starts the
  runtime's timer task in the broker's nursery;
- coordinator records are appended to the partition's log as leader, then the high watermark is advanced and the
  append is made durable (group commit fsync, and replication in a cluster) before any response waiting on them is
  sent: an acknowledged offset commit survives kill -9 and power loss;
- ownership is explicit: the coordinator serves exactly the partitions loaded with `on_become_leader` (all of them on
  a single node); cluster mode calls `on_become_leader` / `on_resign_leader` as leadership moves;
- FindCoordinator answers with the leader of the group's partition.

The broker exposes this as `broker.groups`, plus `coordinator_owns`, `on_become_offsets_leader` and
`on_resign_offsets_leader`.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

import trio

from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from kbroker.coordinator.runtime import CoordinatorRuntime, PartitionLogWriter, read_records
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.topics import TopicError, TopicMetadata
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kbroker.broker import Broker, BrokerEndpoint

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
# Kafka's offsets.commit.timeout.ms default: how long a coordinator write may wait for acknowledgement.
COMMIT_TIMEOUT_MS = 5000


class CoordinatorLookupError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class GroupService:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        config = CoordinatorConfig.from_broker_config(broker.config)
        # No partition is ours until it is loaded: until then its groups get NOT_COORDINATOR, never an empty state.
        self.coordinator = GroupCoordinator(config, owned_partitions=())
        writer = PartitionLogWriter(self._log_for, self._leader_epoch_for, self._after_append)
        self.runtime = CoordinatorRuntime(self.coordinator, writer)
        self._nursery: trio.Nursery | None = None

    # ---- startup -----------------------------------------------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        """Create `__consumer_offsets` if needed, load the partitions we lead, start the coordinator's timers."""
        topic = await self._ensure_offsets_topic()
        if topic.num_partitions != self.coordinator.config.offsets_topic_num_partitions:
            # The topic's partition count decides where groups live, whatever the setting says now (as in Kafka,
            # where offsets.topic.num.partitions must not change once the topic exists). No group is loaded yet, so
            # nothing was placed with the other count.
            log.warning(
                "%s has %d partitions, offsets.topic.num.partitions says %d: using %d",
                OFFSETS_TOPIC,
                topic.num_partitions,
                self.coordinator.config.offsets_topic_num_partitions,
                topic.num_partitions,
            )
            self.coordinator.config = dataclasses.replace(
                self.coordinator.config, offsets_topic_num_partitions=topic.num_partitions
            )
        for partition in range(topic.num_partitions):
            if self.broker.is_leader(OFFSETS_TOPIC, partition):
                self.on_become_leader(partition)
        log.info(
            "coordinating %d of %d partitions of %s: %d groups loaded",
            len(self.coordinator.owned_partitions or ()),
            topic.num_partitions,
            OFFSETS_TOPIC,
            len(self.coordinator.groups),
        )
        await nursery.start(self.runtime.run)
        self._nursery = nursery

    async def _ensure_offsets_topic(self) -> TopicMetadata:
        broker = self.broker
        existing = broker.topics.get(OFFSETS_TOPIC)
        if existing is not None:
            return existing
        config = broker.config
        replication_factor = min(
            config.get_int("offsets.topic.replication.factor"), max(1, len(broker.live_brokers()))
        )
        configs = {
            "cleanup.policy": "compact",
            "segment.bytes": str(config.get_int("offsets.topic.segment.bytes")),
        }
        try:
            topic = await broker.create_topic_async(
                OFFSETS_TOPIC, config.get_int("offsets.topic.num.partitions"), replication_factor, configs
            )
        except TopicError as exc:
            # In a cluster another broker may have created it first.
            if exc.code is not ErrorCode.TOPIC_ALREADY_EXISTS:
                raise
            created = broker.topics.get(OFFSETS_TOPIC)
            if created is None:
                raise
            return created
        log.info("created %s with %d partitions", OFFSETS_TOPIC, topic.num_partitions)
        return topic

    # ---- ownership ---------------------------------------------------------------------------------------------

    def owns(self, partition: int) -> bool:
        owned = self.coordinator.owned_partitions
        return owned is not None and partition in owned

    def on_become_leader(self, partition: int) -> None:
        """Load a `__consumer_offsets` partition and coordinate its groups from now on (idempotent)."""
        if self.owns(partition):
            return
        plog = self.broker.partition_log(OFFSETS_TOPIC, partition)
        if plog is None:
            log.error("cannot coordinate %s-%d: no local log", OFFSETS_TOPIC, partition)
            return
        try:
            self.runtime.load_partition(partition, read_records(plog))
        except Exception:
            # Its groups get NOT_COORDINATOR (and FindCoordinator COORDINATOR_NOT_AVAILABLE) rather than a state we
            # could not read back; every other partition keeps working.
            log.exception("could not load %s-%d; its groups stay unavailable", OFFSETS_TOPIC, partition)
            self._drop_partial_load(partition)
            return
        log.debug("coordinating the groups of %s-%d", OFFSETS_TOPIC, partition)

    def _drop_partial_load(self, partition: int) -> None:
        # `load` may have added some groups before it failed; forget them with the partition.
        coordinator = self.coordinator
        for group_id in [g for g in coordinator.groups if coordinator.partition_for(g) == partition]:
            del coordinator.groups[group_id]
            coordinator.offsets.remove_all(group_id)
        if coordinator.owned_partitions is not None:
            coordinator.owned_partitions.discard(partition)

    async def on_resign_leader(self, partition: int) -> None:
        """Stop coordinating a partition's groups; their parked requests get NOT_COORDINATOR."""
        if not self.owns(partition):
            return
        await self.runtime.unload_partition(partition)
        log.info("no longer coordinating the groups of %s-%d", OFFSETS_TOPIC, partition)

    # ---- FindCoordinator ---------------------------------------------------------------------------------------

    def find_group_coordinator(self, group_id: str) -> BrokerEndpoint:
        """The broker leading the group's `__consumer_offsets` partition; CoordinatorLookupError if there is none."""
        broker = self.broker
        if broker.topics.get(OFFSETS_TOPIC) is None:
            raise CoordinatorLookupError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC} does not exist"
            )
        partition = self.coordinator.partition_for(group_id)
        leader = broker.partition_state(OFFSETS_TOPIC, partition).leader
        if leader < 0:
            raise CoordinatorLookupError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC}-{partition} has no leader"
            )
        if leader == broker.node_id and not self.owns(partition):
            # We lead it but have not loaded it (or could not): sending the client here would only earn it
            # NOT_COORDINATOR; COORDINATOR_NOT_AVAILABLE makes it ask again shortly.
            raise CoordinatorLookupError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC}-{partition} is not loaded"
            )
        for endpoint in broker.live_brokers():
            if endpoint.node_id == leader:
                return endpoint
        raise CoordinatorLookupError(
            ErrorCode.COORDINATOR_NOT_AVAILABLE,
            f"the leader {leader} of {OFFSETS_TOPIC}-{partition} is not alive",
        )

    # ---- topics ------------------------------------------------------------------------------------------------

    def on_topics_deleted(self, topics: list[str]) -> None:
        """Forget the committed offsets of deleted topics (with tombstones), soon, in the broker's nursery.

        The coordinator call and its append run in one task step, so its tombstones reach the log in order with
        every other coordinator write.
        """
        if self._nursery is None or not self.coordinator.owned_partitions:
            return
        self._nursery.start_soon(self.runtime.on_topics_deleted, topics)

    # ---- the log ------------------------------------------------------------------------------------------------

    def _log_for(self, partition: int) -> PartitionLog:
        plog = self.broker.partition_log(OFFSETS_TOPIC, partition)
        if plog is None:
            raise RuntimeError(f"no log for {OFFSETS_TOPIC}-{partition}")
        return plog

    def _leader_epoch_for(self, partition: int) -> int:
        return self.broker.leader_epoch(OFFSETS_TOPIC, partition)

    async def _after_append(self, partition: int, info: object) -> None:
        """Make the coordinator's records visible (high watermark) and durable before anyone is answered."""
        assert isinstance(info, AppendInfo)
        self.broker.on_appended(OFFSETS_TOPIC, partition, self._log_for(partition))
        await self.broker.wait_acks_all(OFFSETS_TOPIC, partition, info.last_offset, COMMIT_TIMEOUT_MS)
