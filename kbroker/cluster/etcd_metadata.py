"""The metadata of a cluster node: the three interfaces of kbroker/metadata/api.py over etcd.

`kbroker serve --node-id N --metadata etcd://...` runs this instead of the single node's LocalMetadata; nothing else in
the broker differs. `run` is this node's membership: it registers the broker under a lease, campaigns for the
controller (kbroker/cluster/controller.py), and publishes every change of etcd's watch cache as an image. When the
registration is lost (etcd unreachable for a whole session timeout, or the lease lapsed), it publishes an image that
says this node is not a member (the replica manager then gives up every role at once) and joins again as a new
incarnation.

Topics are created and deleted in etcd; the controller places partitions and every node's replica manager creates or
deletes its own logs. Producer ids come from blocks reserved in etcd with a compare-and-swap counter, so they are
unique across the cluster.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial

import trio

from kbroker.cluster.etcd import EtcdError, Get, Put, RangeResult, key_absent, mod_revision_is
from kbroker.cluster.failure_detector import FailureDetector
from kbroker.cluster.member import ClusterMember, run_cluster_member
from kbroker.cluster.metadata import cancel_reassignment, elect_preferred, elect_unclean, reassign
from kbroker.cluster.store import BrokerIdInUse, LeaseExpired, MetadataStore
from kbroker.common import KafkaError, StartupError, TopicPartition
from kbroker.config import BrokerConfig
from kbroker.log.files import fsync_directory, replace_file
from kbroker.metadata.api import PREFERRED_ELECTION, ConfigChange
from kbroker.metadata.image import EMPTY_IMAGE, MetadataImage, PartitionState, TopicMetadata
from kbroker.metadata.meta_properties import write_meta_properties
from kbroker.metadata.publisher import ImagePublisher
from kbroker.metadata.topics import (
    UNKNOWN_TOPIC_MESSAGE,
    UnknownTopic,
    check_new_partitions,
    check_new_topic,
    validate_replicas,
)
from kbroker.replication.client import Connector, plaintext_connector
from kbroker.security.image import SecurityChange
from protocol.errors import ErrorCode
from protocol.primitives import ZERO_UUID

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK_SIZE = 1000
# Present while this node's data directory is new (created empty, under a node id the cluster may know from before: a
# replaced or wiped disk) and some partition state written before it registered still names it in an ISR. It
# registers with `new_log_dir` then, so that the controller never elects it from those ISRs (its log is gone). The
# file makes that survive a restart before the controller has acted.
NEW_LOG_DIR_MARKER = "new-log-dir"
# How long CreateTopics / DeleteTopics wait for the controller and this node's metadata to reflect the change.
TOPIC_CHANGE_WAIT_S = 10.0
REJOIN_BACKOFF_S = 1.0

PartitionChange = Callable[[PartitionState, MetadataImage, int], PartitionState]


def metadata_url(config: BrokerConfig) -> str:
    """etcd://HOST:PORT[,...]/CLUSTER from metadata.etcd.endpoints (which --metadata fills) and cluster.name, unless
    the endpoints name a cluster path themselves."""
    endpoints = ",".join(config.metadata_etcd_endpoints)
    url = "etcd://" + endpoints
    if "/" not in endpoints:
        url += "/" + config.cluster_name
    return url


def _unavailable(exc: EtcdError) -> KafkaError:
    return KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"cluster metadata unavailable: {exc}")


class EtcdMetadata(ImagePublisher):
    """MetadataView, TopicAdmin and ProducerIdManager of a cluster node."""

    def __init__(
        self,
        config: BrokerConfig,
        cluster_id: str,
        host: str,
        port: int,
        endpoints: Mapping[str, tuple[str, int]] | None = None,
        *,
        connect: Connector = plaintext_connector,
        new_log_dir: bool = False,
    ) -> None:
        """`connect` opens connections to other brokers' inter-broker listeners (TLS and SASL where it needs them):
        the failure detector watches its peers through them. `new_log_dir`: the data directory was created at this
        start (see NEW_LOG_DIR_MARKER)."""
        self._config = config
        self._connect = connect
        self._new_log_dir_marker = config.data_dir / NEW_LOG_DIR_MARKER
        if new_log_dir:
            replace_file(self._new_log_dir_marker, b"", fsync=True, fsync_dir=True)
        self._new_log_dir = self._new_log_dir_marker.exists()
        self._endpoints = dict(endpoints or {})
        self._node_id = config.node_id
        self._host, self._port = host, port
        self._url = metadata_url(config)
        self._session_timeout_s = max(1, -(-config.broker_session_timeout_ms // 1000))
        self._cluster_id = cluster_id
        super().__init__(dataclasses.replace(EMPTY_IMAGE, cluster_id=cluster_id))
        self._member: ClusterMember | None = None
        self._detector: FailureDetector | None = None
        self._producer_id_next = 0
        self._producer_id_end = 0
        self._producer_id_lock = trio.Lock()

    # ---- MetadataView ------------------------------------------------------------------------------------------

    async def alter_partition(
        self,
        tp: TopicPartition,
        *,
        leader_id: int,
        broker_epoch: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: Collection[int],
    ) -> PartitionState:
        store = self._store()
        try:
            return await store.alter_partition(
                tp.topic,
                tp.partition,
                leader_id=leader_id,
                broker_epoch=broker_epoch,
                leader_epoch=leader_epoch,
                partition_epoch=partition_epoch,
                new_isr=new_isr,
            )
        except EtcdError as exc:
            raise _unavailable(exc) from None

    # ---- membership --------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Be a cluster member, publishing every change, until cancelled; started once the first image with this
        node's registration is published (so the listener opens on a node that knows its roles)."""
        # The etcd client (httpx) logs every request at INFO: keepalives alone would drown the broker's log.
        logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
        started = False
        while True:
            try:
                async with trio.open_nursery() as nursery:
                    member: ClusterMember = await nursery.start(
                        partial(
                            run_cluster_member,
                            self._url,
                            self._node_id,
                            self._host,
                            self._port,
                            session_timeout=self._session_timeout_s,
                            endpoints=self._endpoints,
                            unclean_leader_election_default=self._config.unclean_leader_election_enable,
                            auto_leader_rebalance=self._config.auto_leader_rebalance_enable,
                            leader_imbalance_check_interval_s=self._config.leader_imbalance_check_interval_seconds,
                            new_log_dir=self._new_log_dir,
                        )
                    )
                    await self._adopt_cluster_id(member)
                    self._member = member
                    self._detector = FailureDetector(
                        self._node_id, partial(_end_session, member.store), connect=self._connect
                    )
                    nursery.start_soon(self._detector.run)
                    broker_epoch = member.registration.broker_epoch
                    snapshot = member.store.snapshot()
                    self._publish_snapshot(snapshot, broker_epoch)
                    if not started:
                        started = True
                        task_status.started()
                    while True:
                        snapshot = await member.store.wait_for_change(snapshot.revision)
                        self._publish_snapshot(snapshot, broker_epoch)
            except* BrokerIdInUse as group:
                raise StartupError(str(_first_leaf(group))) from None
            except* (LeaseExpired, EtcdError) as group:
                log.warning("lost the cluster registration (%s); joining again", _first_leaf(group))
            finally:
                self._detector = None
                if self._member is not None:
                    self._member = None
                    # No longer a member: every role of this incarnation is void.
                    self._publish_snapshot(self._image, -1)
            await trio.sleep(REJOIN_BACKOFF_S)

    def _publish_snapshot(self, snapshot: MetadataImage, broker_epoch: int) -> None:
        """etcd's view, as this node's incarnation (`broker_epoch`, -1 if none) sees it."""
        image = dataclasses.replace(snapshot, cluster_id=self._cluster_id, broker_epoch=broker_epoch)
        if self._detector is not None:
            self._detector.on_metadata(image)
        if self._new_log_dir and broker_epoch >= 0 and not _stale_isr_memberships(image, self._node_id):
            # No partition state from before this registration names us in sync any more: from now on our log
            # directory is an ordinary one, also across restarts.
            self._new_log_dir_marker.unlink(missing_ok=True)
            fsync_directory(self._config.data_dir)
            self._new_log_dir = False
            log.info("the new log directory holds no stale in-sync memberships any more")
        self._publish(image)

    async def _adopt_cluster_id(self, member: ClusterMember) -> None:
        """One cluster id for every node: the first node to start writes its own to etcd, the others take it."""
        store = member.store
        key = store.keys.root + b"cluster_id"
        result = await store.client.txn([key_absent(key)], [Put(key, self._cluster_id.encode())], [Get(key)])
        if result.succeeded:
            return
        current = result.responses[0]
        assert isinstance(current, RangeResult)
        if current.kvs and current.kvs[0].value.decode() != self._cluster_id:
            self._cluster_id = current.kvs[0].value.decode()
            write_meta_properties(self._config.data_dir, self._cluster_id, self._node_id)
            log.info("cluster id is %s", self._cluster_id)

    def _store(self) -> MetadataStore:
        member = self._member
        if member is None:
            raise KafkaError(
                ErrorCode.REQUEST_TIMED_OUT, "this broker is not connected to the cluster metadata"
            )
        return member.store

    # ---- TopicAdmin --------------------------------------------------------------------------------------------

    async def create_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: Mapping[str, str],
        *,
        validate_only: bool = False,
        assignments: Mapping[int, Sequence[int]] | None = None,
    ) -> TopicMetadata:
        check_new_topic(self._image, self._config, name, num_partitions, replication_factor, configs)
        if validate_only:
            await trio.lowlevel.checkpoint()
            return TopicMetadata(name, ZERO_UUID, num_partitions, replication_factor, dict(configs))
        store = self._store()
        placed = {p: tuple(replicas) for p, replicas in (assignments or {}).items()}
        try:
            record = await store.create_topic(
                name, num_partitions, replication_factor, configs, assignments=placed
            )
        except EtcdError as exc:
            raise _unavailable(exc) from None
        log.info(
            "created topic %s with %d partitions, replication factor %d",
            name,
            num_partitions,
            replication_factor,
        )
        # Answer once the controller has placed the partitions and this node knows it, so that the client's next
        # Metadata request (to any node that has caught up) shows leaders.
        image = await self.wait_for(
            lambda i: i.topic_complete(name) and i.topics[name].topic_id == record.topic_id,
            TOPIC_CHANGE_WAIT_S,
        )
        if image is not None:
            return image.topics[name]
        return record

    async def delete_topic(self, name: str) -> None:
        store = self._store()
        try:
            await store.delete_topic(name)
        except EtcdError as exc:
            raise _unavailable(exc) from None
        log.info("deleted topic %s", name)
        await self.wait_for(lambda i: name not in i.topics, TOPIC_CHANGE_WAIT_S)

    # ---- SecurityAdmin ---------------------------------------------------------------------------------------

    async def alter_security(self, change: SecurityChange) -> None:
        store = self._store()
        try:
            revision = await store.alter_security(change)
        except EtcdError as exc:
            raise _unavailable(exc) from None
        # Answer once this node enforces the change itself (the others follow as their watches deliver it).
        await self.wait_for(lambda i: i.revision >= revision, TOPIC_CHANGE_WAIT_S)

    async def create_partitions(
        self,
        name: str,
        total: int,
        assignments: Sequence[Sequence[int]] | None,
        *,
        validate_only: bool = False,
    ) -> TopicMetadata:
        placed = check_new_partitions(self._image, name, total, assignments)
        if validate_only:
            await trio.lowlevel.checkpoint()
            return dataclasses.replace(self._image.topics[name], num_partitions=total)
        store = self._store()
        try:
            record = await store.create_partitions(name, total, placed)
        except EtcdError as exc:
            raise _unavailable(exc) from None
        log.info("topic %s now has %d partitions", name, total)
        image = await self.wait_for(
            lambda i: i.topic_complete(name) and i.topics[name].num_partitions >= total, TOPIC_CHANGE_WAIT_S
        )
        return image.topics[name] if image is not None else record

    async def alter_topic_configs(
        self, name: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        if validate_only:
            topic = self._image.topics.get(name)
            if topic is None:
                raise UnknownTopic(UNKNOWN_TOPIC_MESSAGE)
            change(topic.configs)
            await trio.lowlevel.checkpoint()
            return
        store = self._store()
        try:
            record = await store.update_topic(
                name, lambda t: dataclasses.replace(t, configs=dict(change(t.configs)))
            )
        except EtcdError as exc:
            raise _unavailable(exc) from None
        log.info("topic %s configs: %s", name, dict(record.configs))

    async def alter_broker_configs(
        self, entity: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        if validate_only:
            change(self._image.broker_configs.get(entity, {}))
            await trio.lowlevel.checkpoint()
            return
        store = self._store()
        try:
            configs = await store.update_broker_configs(entity, change)
        except EtcdError as exc:
            raise _unavailable(exc) from None
        log.info("dynamic configs of %s: %s", f"broker {entity}" if entity else "every broker", configs)

    # ---- ClusterAdmin ------------------------------------------------------------------------------------------

    async def elect_leaders(
        self, election_type: int, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, KafkaError | None]:
        def elect(state: PartitionState, snapshot: MetadataImage, revision: int) -> PartitionState:
            eligible = snapshot.eligible_brokers() & snapshot.brokers_registered_before(revision)
            if election_type == PREFERRED_ELECTION:
                return elect_preferred(state, eligible)
            return elect_unclean(state, snapshot.live_brokers(), eligible)

        return await self._change_partitions(dict.fromkeys(partitions, elect))

    async def alter_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, KafkaError | None]:
        def change_for(tp: TopicPartition, target: Sequence[int] | None) -> PartitionChange:
            def change(state: PartitionState, snapshot: MetadataImage, revision: int) -> PartitionState:
                eligible = snapshot.eligible_brokers() & snapshot.brokers_registered_before(revision)
                if target is None:
                    return cancel_reassignment(state, eligible)
                validate_replicas(target, snapshot.brokers, f"partition {tp.partition}")
                if not state.reassigning and tuple(target) == state.replicas:
                    return state
                return reassign(state, target, eligible)

            return change

        changed = await self._change_partitions({tp: change_for(tp, t) for tp, t in targets.items()})
        for tp, target in targets.items():
            if changed[tp] is None:
                log.info("reassignment of %s: %s", tp, "cancelled" if target is None else list(target))
        return changed

    async def _change_partitions(
        self, changes: Mapping[TopicPartition, PartitionChange]
    ) -> dict[TopicPartition, KafkaError | None]:
        results: dict[TopicPartition, KafkaError | None] = {}
        for tp, change in changes.items():
            if not self._image.has_partition(tp.topic, tp.partition):
                results[tp] = UnknownTopic(UNKNOWN_TOPIC_MESSAGE)
                continue
            try:
                await self._store().change_partition(tp.topic, tp.partition, change)
                results[tp] = None
            except KafkaError as exc:
                results[tp] = exc
            except EtcdError as exc:
                results[tp] = _unavailable(exc)
        return results

    async def controlled_shutdown(self, timeout_s: float) -> None:
        """Mark this node's registration as shutting down, then wait until the controller has moved every leadership
        that another in-sync replica can take and taken this node out of the ISRs (see controller.py)."""
        member = self._member
        if member is None:
            return
        node = self._node_id
        try:
            if not await member.store.begin_controlled_shutdown():
                return
        except EtcdError as exc:
            log.warning("controlled shutdown: cannot tell the controller (%s); stopping anyway", exc)
            return
        log.info("controlled shutdown: waiting for the leaderships of broker %d to move", node)

        def moved(image: MetadataImage) -> bool:
            eligible = image.eligible_brokers()
            for states in image.partitions.values():
                for state in states.values():
                    if node in state.isr and any(b != node and b in eligible for b in state.isr):
                        return False
            return True

        if await self.wait_for(moved, timeout_s) is None:
            log.warning(
                "controlled shutdown: leaderships still on broker %d after %.0f s; stopping", node, timeout_s
            )
        else:
            log.info("controlled shutdown: broker %d leads nothing another replica could", node)

    # ---- ProducerIdManager -------------------------------------------------------------------------------------

    async def next_producer_id(self) -> int:
        async with self._producer_id_lock:
            if self._producer_id_next >= self._producer_id_end:
                start = await self._reserve_producer_id_block()
                self._producer_id_next, self._producer_id_end = start, start + PRODUCER_ID_BLOCK_SIZE
            producer_id = self._producer_id_next
            self._producer_id_next += 1
            return producer_id

    async def _reserve_producer_id_block(self) -> int:
        """Take the next block from the counter in etcd (compare-and-swap, so two nodes never get one block)."""
        store = self._store()
        key = store.keys.root + b"producer_id_block"
        try:
            while True:
                kv = await store.client.get(key)
                start = int(kv.value) if kv is not None else 0
                compare = mod_revision_is(key, kv.mod_revision) if kv is not None else key_absent(key)
                result = await store.client.txn(
                    [compare], [Put(key, str(start + PRODUCER_ID_BLOCK_SIZE).encode())]
                )
                if result.succeeded:
                    log.info("reserved producer ids %d-%d", start, start + PRODUCER_ID_BLOCK_SIZE - 1)
                    return start
        except EtcdError as exc:
            raise _unavailable(exc) from None


def _stale_isr_memberships(image: MetadataImage, node_id: int) -> bool:
    """Whether a partition state written before this node's registration lists it in the ISR."""
    return any(
        node_id in state.isr and image.partition_revision(topic, p) < image.broker_epoch
        for topic, states in image.partitions.items()
        for p, state in states.items()
    )


async def _end_session(store: MetadataStore, node_id: int, broker_epoch: int) -> None:
    """The failure detector's verdict: that incarnation is dead, end its session now."""
    try:
        if await store.end_session(node_id, broker_epoch):
            log.info("ended the session of broker %d (broker epoch %d)", node_id, broker_epoch)
    except EtcdError as exc:
        log.warning("could not end the session of broker %d: %s (it lapses by itself)", node_id, exc)


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (possibly nested) exception groups, for a log line that says what happened."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
