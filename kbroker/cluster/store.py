"""The etcd-backed cluster metadata store: broker registration, controller election, guarded writes, and a
watch-driven local cache that the broker reads synchronously.

Every write is one etcd transaction whose compares encode who may make it:
- a broker registration is created only if absent, attached to the broker's lease (it vanishes when the
  broker stops refreshing the lease); its create_revision is the broker epoch;
- the controller key is created only if absent, attached to the controller's lease; its create_revision is
  the controller epoch, and every controller write compares it, so a controller whose lease lapsed (the key is
  gone or belongs to a successor) cannot write;
- a partition state is replaced only if its mod_revision is the one the writer read (every write bumps
  partition_epoch, so this is the partition_epoch check of KIP-497), so a stale writer fails;
- a leader's ISR change also compares its own registration's create_revision with its broker epoch, so a
  broker whose lease lapsed cannot change the ISR even before the controller has reacted.

Use: ``store = MetadataStore.from_url("etcd://127.0.0.1:2379")``, then ``await nursery.start(store.run)``
(returns once the cache holds the current state), then ``store.snapshot()`` at any time.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

import trio

from kbroker.cluster.etcd import (
    Compacted,
    Compare,
    Delete,
    EtcdClient,
    EtcdError,
    EtcdUnavailable,
    Get,
    KeyValue,
    LeaseNotFound,
    Put,
    RangeResult,
    WatchResponse,
    create_revision_is,
    key_absent,
    key_present,
    mod_revision_is,
    parse_etcd_url,
    prefix_range_end,
)
from kbroker.cluster.metadata import KeyLayout, StaleBrokerEpoch, UnknownTopicOrPartition, alter_isr
from kbroker.metadata.image import (
    BrokerRegistration,
    ControllerRecord,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from kbroker.metadata.topics import (
    InvalidPartitions,
    InvalidReplicationFactor,
    TopicAlreadyExists,
    validate_topic_name,
)
from kbroker.security.acl import AclBinding
from kbroker.security.image import (
    QuotaEntity,
    SecurityChange,
    SecurityImage,
    quota_entity_from_key,
    quota_entity_key,
)
from kbroker.security.scram import ScramCredential

log = logging.getLogger(__name__)

# etcd refuses a transaction with more than --max-txn-ops (128 by default) compares or operations.
MAX_TXN_OPS = 120
_PAGE_SIZE = 1000


class LeaseExpired(Exception):
    """Our lease is gone (or could not be refreshed for a whole TTL): the registration or the controllership
    it held is lost, and this process must stop acting on it."""


class BrokerIdInUse(Exception):
    """Another live process holds the registration of this node id."""


@dataclass(frozen=True)
class PartitionWrite:
    """One controller change of a partition state, with what it must still be true for it to apply."""

    topic: str
    partition: int
    state: PartitionState
    expected_mod_revision: int
    """mod_revision of the state the change was computed from; 0 creates the partition."""
    topic_create_revision: int
    broker_epochs: Mapping[int, int] = field(default_factory=dict)
    """Brokers (e.g. a new leader) whose registration must still be the one the change was computed from."""


class MetadataStore:
    def __init__(
        self,
        client: EtcdClient,
        cluster: str = "default",
        *,
        owns_client: bool = True,
        watch_check_interval: float = 5.0,
    ) -> None:
        self.client = client
        self.keys = KeyLayout(cluster)
        self._owns_client = owns_client
        self._watch_check_interval = watch_check_interval
        self._watch_scope: trio.CancelScope | None = None
        self._cached_keys: set[bytes] = set()
        self._revision = 0
        self._brokers: dict[int, BrokerRegistration] = {}
        self._controller: ControllerRecord | None = None
        self._topics: dict[str, TopicMetadata] = {}
        self._topic_revisions: dict[str, int] = {}
        self._partitions: dict[str, dict[int, PartitionState]] = {}
        self._partition_revisions: dict[str, dict[int, int]] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._registration: tuple[BrokerRegistration, int] | None = None
        """This process's own broker registration and its lease, while registered."""
        self._dirty_topics: set[str] = set()
        self._scram: dict[tuple[str, str], ScramCredential] = {}
        self._acls: dict[str, AclBinding] = {}
        self._quotas: dict[QuotaEntity, dict[str, float]] = {}
        self._security: SecurityImage | None = None  # None: rebuild on the next snapshot()
        self._snapshot: MetadataImage | None = None  # None: rebuild on the next snapshot()
        self._last_snapshot: MetadataImage | None = None  # its unchanged topics are shared by the next one
        self._changed = trio.Event()
        self._loaded = False

    @classmethod
    def from_url(cls, url: str, *, request_timeout: float = 5.0) -> MetadataStore:
        """``etcd://HOST:PORT[,HOST:PORT...][/CLUSTER]``: the cluster name defaults to "default"."""
        endpoints, cluster = parse_etcd_url(url)
        return cls(EtcdClient(endpoints, request_timeout=request_timeout), cluster or "default")

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    # ---- the cache -----------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the current metadata, then follow etcd's changes forever. Signals started once loaded."""
        backoff = 0.1
        failures = 0
        while not self._loaded:
            try:
                await self._reload()
            except EtcdUnavailable as exc:
                # Said once (then quietly retried every 2 s at most), not at every attempt.
                log.log(
                    logging.DEBUG if failures else logging.WARNING, "cannot read etcd yet, retrying: %s", exc
                )
                failures += 1
                await trio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
        if failures:
            log.info("reached etcd after %d failed attempts", failures)
        task_status.started()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._check_watch_progress)
            await self._follow()

    async def _follow(self) -> None:
        backoff = 0.1
        while True:
            try:
                with trio.CancelScope() as self._watch_scope:
                    async with self.client.watch(
                        self.keys.root, prefix=True, start_revision=self._revision + 1
                    ) as stream:
                        backoff = 0.1
                        async for response in stream:
                            self._apply(response)
            except Compacted:
                # We fell behind etcd's history (e.g. disconnected across a compaction): read everything again.
                log.info("metadata watch compacted at revision %d; reloading", self._revision)
                await self._reload_retrying()
            except EtcdUnavailable as exc:
                log.warning("metadata watch lost (%s); resuming from revision %d", exc, self._revision + 1)
                await trio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    async def _check_watch_progress(self) -> None:
        """Restart a watch that silently stopped delivering (e.g. its endpoint is partitioned away without a
        TCP reset, which a long-lived HTTP read would wait on forever). Twice in a row, with no progress in
        between, etcd must show a change the cache lacks: a key newer than the cache, or another key count."""
        suspect_revision: int | None = None
        while True:
            await trio.sleep(self._watch_check_interval)
            try:
                newest = await self.client.range(self.keys.root, prefix=True, newest_first=True, limit=1,
                                                 keys_only=True)  # fmt: skip
                counted = await self.client.range(
                    self.keys.root, prefix=True, count_only=True, revision=newest.revision
                )
            except EtcdError:
                continue  # etcd itself is unreachable: nothing to compare with; the watch handles its own errors
            behind = self._revision < newest.revision and (
                (bool(newest.kvs) and newest.kvs[0].mod_revision > self._revision)
                or counted.count != len(self._cached_keys)
            )
            if not behind:
                suspect_revision = None
            elif suspect_revision == self._revision:
                log.warning("metadata watch stuck at revision %d; restarting it", self._revision)
                if self._watch_scope is not None:
                    self._watch_scope.cancel()
                suspect_revision = None
            else:
                suspect_revision = self._revision

    def snapshot(self) -> MetadataImage:
        """The current cached metadata. Cheap: rebuilt only after a change, and sharing unchanged topics."""
        if self._snapshot is None:
            previous = self._last_snapshot
            previous_partitions = previous.partitions if previous is not None else {}
            previous_revisions = previous.partition_revisions if previous is not None else {}
            partitions: dict[str, Mapping[int, PartitionState]] = {}
            revisions: dict[str, Mapping[int, int]] = {}
            for name, states in self._partitions.items():
                if name in self._dirty_topics or name not in previous_partitions:
                    partitions[name] = dict(states)
                    revisions[name] = dict(self._partition_revisions[name])
                else:
                    partitions[name] = previous_partitions[name]
                    revisions[name] = previous_revisions[name]
            self._snapshot = MetadataImage(
                revision=self._revision,
                brokers=dict(self._brokers),
                controller=self._controller,
                topics=dict(self._topics),
                topics_by_id={t.topic_id: t for t in self._topics.values()},
                topic_revisions=dict(self._topic_revisions),
                partitions=partitions,
                partition_revisions=revisions,
                security=self._security_image(),
                broker_configs={entity: dict(configs) for entity, configs in self._broker_configs.items()},
            )
            self._dirty_topics.clear()
            self._last_snapshot = self._snapshot
        return self._snapshot

    def _security_image(self) -> SecurityImage:
        if self._security is None:
            self._security = SecurityImage(dict(self._scram), dict(self._acls), dict(self._quotas))
        return self._security

    async def wait_for_change(self, after_revision: int) -> MetadataImage:
        """Wait until the cache is newer than ``after_revision`` (e.g. a snapshot's revision)."""
        while self._revision <= after_revision:
            await self._changed.wait()
        return self.snapshot()

    async def wait_for_revision(self, revision: int) -> MetadataImage:
        """Wait until the cache has caught up with ``revision`` (e.g. that of one's own write)."""
        return await self.wait_for_change(revision - 1)

    async def wait_until(self, predicate: Callable[[MetadataImage], bool]) -> MetadataImage:
        """Wait until the cached metadata satisfies predicate; wrap in trio.move_on_after for a deadline."""
        snapshot = self.snapshot()
        while not predicate(snapshot):
            snapshot = await self.wait_for_change(snapshot.revision)
        return snapshot

    async def _reload_retrying(self) -> None:
        backoff = 0.1
        while True:
            try:
                await self._reload()
                return
            except EtcdUnavailable as exc:
                log.warning("metadata reload failed: %s", exc)
                await trio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    async def _reload(self) -> None:
        """Read every key under the cluster root at one revision, in pages, and replace the cache."""
        end = prefix_range_end(self.keys.root)
        start = self.keys.root
        revision = 0
        kvs: list[KeyValue] = []
        while True:
            page: RangeResult = await self.client.range(start, end, revision=revision, limit=_PAGE_SIZE)
            revision = revision or page.revision
            kvs.extend(page.kvs)
            if not page.more or not page.kvs:
                break
            start = page.kvs[-1].key + b"\x00"
        self._brokers.clear()
        self._controller = None
        self._topics.clear()
        self._topic_revisions.clear()
        self._partitions.clear()
        self._partition_revisions.clear()
        self._scram.clear()
        self._acls.clear()
        self._quotas.clear()
        self._security = None
        self._broker_configs.clear()
        self._cached_keys.clear()
        self._snapshot = None
        for kv in kvs:
            self._put(kv)
        self._dirty_topics = set(self._partitions)
        self._revision = revision
        self._loaded = True
        self._notify()

    def _apply(self, response: WatchResponse) -> None:
        for event in response.events:
            if event.type == "PUT":
                self._put(event.kv)
            else:
                self._delete(event.kv.key)
            self._revision = max(self._revision, event.kv.mod_revision)
        self._revision = max(self._revision, response.revision)
        self._snapshot = None
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _put(self, kv: KeyValue) -> None:
        self._cached_keys.add(kv.key)
        parsed = self.keys.parse(kv.key)
        if parsed is None:
            return
        kind, ident = parsed
        try:
            if kind == "broker":
                self._brokers[ident] = BrokerRegistration.from_json(kv.value, kv.create_revision)
            elif kind == "controller":
                self._controller = ControllerRecord.from_json(kv.value, kv.create_revision)
            elif kind == "topic":
                self._topics[ident] = TopicMetadata.from_json(ident, kv.value)
                self._topic_revisions[ident] = kv.create_revision
            elif kind == "partition":
                name, index = ident
                self._partitions.setdefault(name, {})[index] = PartitionState.from_json(kv.value)
                self._partition_revisions.setdefault(name, {})[index] = kv.mod_revision
                self._dirty_topics.add(name)
            elif kind == "scram":
                self._scram[ident] = ScramCredential.from_json(json.loads(kv.value))
                self._security = None
            elif kind == "acl":
                self._acls[ident] = AclBinding.from_json(json.loads(kv.value))
                self._security = None
            elif kind == "quota":
                values = json.loads(kv.value)
                self._quotas[quota_entity_from_key(ident)] = {str(k): float(v) for k, v in values.items()}
                self._security = None
            elif kind == "broker_configs":
                self._broker_configs[ident] = _read_configs(kv.value)
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            # A value we cannot read must not take the broker down; it is logged and left out of the cache.
            log.error("ignoring unreadable metadata at %r: %r", kv.key, exc)

    def _delete(self, key: bytes) -> None:
        self._cached_keys.discard(key)
        parsed = self.keys.parse(key)
        if parsed is None:
            return
        kind, ident = parsed
        if kind == "broker":
            self._brokers.pop(ident, None)
        elif kind == "controller":
            self._controller = None
        elif kind == "topic":
            self._topics.pop(ident, None)
            self._topic_revisions.pop(ident, None)
        elif kind == "partition":
            name, index = ident
            states = self._partitions.get(name, {})
            states.pop(index, None)
            self._partition_revisions.get(name, {}).pop(index, None)
            if not states:
                self._partitions.pop(name, None)
                self._partition_revisions.pop(name, None)
            self._dirty_topics.add(name)
        elif kind == "scram":
            self._scram.pop(ident, None)
            self._security = None
        elif kind == "acl":
            self._acls.pop(ident, None)
            self._security = None
        elif kind == "quota":
            self._quotas.pop(quota_entity_from_key(ident), None)
            self._security = None
        elif kind == "broker_configs":
            self._broker_configs.pop(ident, None)

    # ---- leases --------------------------------------------------------------------------------------

    async def keep_alive(self, lease_id: int, ttl: int) -> None:
        """Refresh the lease every ttl/3 seconds, forever. Raises LeaseExpired when etcd says it is gone, or
        when it could not be refreshed for a whole ttl: then it may have lapsed, and acting as its holder
        would be unsafe."""
        last_refresh = trio.current_time()
        while True:
            await trio.sleep(ttl / 3)
            try:
                await self.client.lease_keepalive(lease_id)
                last_refresh = trio.current_time()
            except LeaseNotFound as exc:
                raise LeaseExpired(f"lease {lease_id:x} expired") from exc
            except EtcdUnavailable as exc:
                if trio.current_time() - last_refresh >= ttl:
                    raise LeaseExpired(f"lease {lease_id:x} not refreshed for {ttl}s") from exc
                log.warning("lease %x keepalive failed: %s", lease_id, exc)

    async def revoke_lease(self, lease_id: int) -> None:
        """Revoke a lease (deleting its keys), best effort and even while being cancelled."""
        with trio.CancelScope(shield=True), trio.move_on_after(2):
            try:
                await self.client.lease_revoke(lease_id)
            except EtcdError as exc:
                log.info("could not revoke lease %x: %s", lease_id, exc)

    async def end_session(self, node_id: int, broker_epoch: int) -> bool:
        """End the session of a broker incarnation known to be dead (kbroker/cluster/failure_detector.py): revoke
        the lease of its registration, if the registration is still that incarnation's, and the lease of the
        controller key if that key belongs to a dead incarnation of the node. Returns whether the registration was
        ended here. Safe to call from any node, several at once: only that incarnation's leases are revoked."""
        key = self.keys.broker(node_id)
        kv = await self.client.get(key)
        ended = False
        if kv is not None and kv.create_revision == broker_epoch and kv.lease:
            await self.client.lease_revoke(kv.lease)  # not an error if it lapsed (or was ended) meanwhile
            ended = True
        controller = await self.client.get(self.keys.controller)
        if controller is not None and controller.lease:
            record = ControllerRecord.from_json(controller.value, controller.create_revision)
            current = await self.client.get(key)
            # The controller key was created by the newest incarnation of the node registered before it; if that is
            # no longer registered (or was replaced since), the controller is dead.
            if record.node_id == node_id and (
                current is None or current.create_revision > controller.create_revision
            ):
                await self.client.lease_revoke(controller.lease)
        return ended

    # ---- brokers -------------------------------------------------------------------------------------

    async def register_broker(
        self,
        registration: BrokerRegistration,
        *,
        ttl: int = 10,
        revoke_on_exit: bool = True,
        task_status: trio.TaskStatus[BrokerRegistration] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Register this broker under a lease and keep the lease alive until cancelled.

        ``await nursery.start(store.register_broker, BrokerRegistration(id, host, port, rack))`` returns the
        registration with its broker_epoch. If a previous incarnation's key is still there (it crashed and its
        lease has not lapsed yet), this waits up to two TTLs for it to go, then raises BrokerIdInUse. Raises
        LeaseExpired if the lease is lost later. On cancellation the lease is revoked (a clean shutdown: the
        controller moves leadership at once) unless revoke_on_exit is False (used by tests to simulate a
        crash: the key lingers until the TTL runs out).
        """
        key = self.keys.broker(registration.node_id)
        deadline = trio.current_time() + 2 * ttl + 1
        while True:
            # A fresh lease per attempt: one granted before a long wait would lapse during it.
            lease = await self.client.lease_grant(ttl)
            registered_at = 0
            try:
                result = await self.client.txn(
                    [key_absent(key)], [Put(key, registration.to_json(), lease.id)], [Get(key)]
                )
                registered_at = result.revision if result.succeeded else 0
            finally:
                if not registered_at:
                    await self.revoke_lease(lease.id)
            if registered_at:
                break
            if trio.current_time() >= deadline:
                raise BrokerIdInUse(f"broker {registration.node_id} is registered by another live process")
            await trio.sleep(0.2)
        try:
            registered = replace(registration, broker_epoch=registered_at)
            self._registration = (registered, lease.id)
            log.info("registered broker %d with broker epoch %d", registration.node_id, registered_at)
            task_status.started(registered)
            await self.keep_alive(lease.id, ttl)
        finally:
            self._registration = None
            if revoke_on_exit:
                await self.revoke_lease(lease.id)

    async def begin_controlled_shutdown(self) -> bool:
        """Mark this process's registration as shutting down (same key, lease and broker epoch), so the controller
        moves its leaderships away. False if it is not registered (any more)."""
        if self._registration is None:
            return False
        registration, lease_id = self._registration
        key = self.keys.broker(registration.node_id)
        stopping = replace(registration, in_controlled_shutdown=True)
        result = await self.client.txn(
            [create_revision_is(key, registration.broker_epoch)], [Put(key, stopping.to_json(), lease_id)]
        )
        return result.succeeded

    # ---- the controller key --------------------------------------------------------------------------

    async def campaign(self, node_id: int, lease_id: int) -> tuple[bool, ControllerRecord | None]:
        """Try to become the controller: create the controller key, attached to lease_id, if it is absent.

        Returns (True, our record with the controller epoch) if this node won, else (False, the holder's
        record, or None if the holder's key vanished in between)."""
        key = self.keys.controller
        result = await self.client.txn(
            [key_absent(key)], [Put(key, ControllerRecord(node_id, 0).to_json(), lease_id)], [Get(key)]
        )
        if result.succeeded:
            return True, ControllerRecord(node_id, result.revision)
        current = result.responses[0]
        assert isinstance(current, RangeResult)
        if not current.kvs:
            return False, None
        return False, ControllerRecord.from_json(current.kvs[0].value, current.kvs[0].create_revision)

    def controller_fence(self, controller_epoch: int) -> Compare:
        """The compare that makes a write conditional on still being the controller of that epoch."""
        return create_revision_is(self.keys.controller, controller_epoch)

    async def write_partitions(self, controller_epoch: int, writes: Sequence[PartitionWrite]) -> bool | None:
        """The controller's partition changes in one transaction: all apply or none.

        Returns True if applied, False if some partition, topic or broker changed in the meantime (re-read and
        recompute), None if this node is no longer the controller of that epoch (stop)."""
        if not writes:
            return True
        compares = [self.controller_fence(controller_epoch)]
        puts: list[Put | Get | Delete] = []
        brokers: dict[int, int] = {}
        topics: dict[str, int] = {}
        for write in writes:
            key = self.keys.partition(write.topic, write.partition)
            compares.append(mod_revision_is(key, write.expected_mod_revision))
            topics[write.topic] = write.topic_create_revision
            brokers.update(write.broker_epochs)
            puts.append(Put(key, write.state.to_json()))
        compares += [create_revision_is(self.keys.topic(t), rev) for t, rev in topics.items()]
        compares += [create_revision_is(self.keys.broker(b), epoch) for b, epoch in brokers.items()]
        result = await self.client.txn(compares, puts, [Get(self.keys.controller)])
        if result.succeeded:
            return True
        current = result.responses[0]
        assert isinstance(current, RangeResult)
        if not current.kvs or current.kvs[0].create_revision != controller_epoch:
            return None
        return False

    # ---- topics --------------------------------------------------------------------------------------

    async def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: Mapping[str, str] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        assignments: Mapping[int, tuple[int, ...]] | None = None,
    ) -> TopicMetadata:
        """Create a topic record; the controller then places its partitions (wait with `wait_until(topic_complete)`).

        Raises InvalidTopic, InvalidPartitions, InvalidReplicationFactor (more replicas than live brokers in
        this node's view) or TopicAlreadyExists.
        """
        validate_topic_name(name)
        if partitions < 1:
            raise InvalidPartitions(f"a topic needs at least one partition, got {partitions}")
        live = len(self.snapshot().brokers)
        if replication_factor < 1 or replication_factor > live:
            raise InvalidReplicationFactor(
                f"replication factor {replication_factor} needs that many live brokers; {live} are live"
            )
        record = TopicMetadata(
            name,
            topic_id or uuid.uuid4(),
            partitions,
            replication_factor,
            dict(configs or {}),
            dict(assignments or {}),
        )
        key = self.keys.topic(name)
        result = await self.client.txn([key_absent(key)], [Put(key, record.to_json())])
        if not result.succeeded:
            raise TopicAlreadyExists(f"topic {name!r} already exists")
        return record

    async def create_partitions(
        self, name: str, total: int, assignments: Mapping[int, tuple[int, ...]] | None = None
    ) -> TopicMetadata:
        """Raise a topic's partition count (CreatePartitions); the controller places the new partitions (on
        `assignments` where given)."""

        def grow(record: TopicMetadata) -> TopicMetadata:
            if total <= record.num_partitions:
                raise InvalidPartitions(
                    f"Topic currently has {record.num_partitions} partitions, which is higher than the requested "
                    f"{total}."
                    if total < record.num_partitions
                    else f"Topic already has {record.num_partitions} partitions."
                )
            return replace(
                record, num_partitions=total, assignments={**record.assignments, **(assignments or {})}
            )

        return await self.update_topic(name, grow)

    async def update_topic(
        self, name: str, change: Callable[[TopicMetadata], TopicMetadata]
    ) -> TopicMetadata:
        """Read a topic record from etcd, apply `change` (which raises KafkaError to refuse) and write it back if
        nothing changed it meanwhile (else read and apply again). The new record."""
        key = self.keys.topic(name)
        for _attempt in range(10):
            kv = await self.client.get(key)
            if kv is None:
                raise UnknownTopicOrPartition(f"topic {name!r} does not exist")
            updated = change(TopicMetadata.from_json(name, kv.value))
            result = await self.client.txn(
                [mod_revision_is(key, kv.mod_revision)], [Put(key, updated.to_json())]
            )
            if result.succeeded:
                await self.wait_for_revision(result.revision)
                return updated
        raise EtcdUnavailable(f"the record of topic {name} kept changing; giving up", 14)

    async def update_broker_configs(
        self, entity: str, change: Callable[[Mapping[str, str]], Mapping[str, str]]
    ) -> dict[str, str]:
        """The same for the dynamic configs of a broker (`entity`: its id) or of every broker (""); an empty result
        deletes the key."""
        key = self.keys.broker_configs(entity)
        for _attempt in range(10):
            kv = await self.client.get(key)
            current = _read_configs(kv.value) if kv is not None else {}
            updated = dict(change(current))
            compare = mod_revision_is(key, kv.mod_revision) if kv is not None else key_absent(key)
            write: Put | Delete = Put(key, _dump_configs(updated)) if updated else Delete(key)
            result = await self.client.txn([compare], [write])
            if result.succeeded:
                await self.wait_for_revision(result.revision)
                return updated
        raise EtcdUnavailable(
            f"the dynamic configs of {entity or 'every broker'} kept changing; giving up", 14
        )

    async def change_partition(
        self,
        topic: str,
        partition: int,
        change: Callable[[PartitionState, MetadataImage, int], PartitionState],
    ) -> PartitionState:
        """An administrative change of one partition's state (ElectLeaders, AlterPartitionReassignments): read from
        etcd, `change(state, snapshot, the state's revision)` (KafkaError refuses), and write it if neither the
        partition nor its new leader's registration changed meanwhile (else read and judge again), as a leader's
        AlterPartition is written."""
        key = self.keys.partition(topic, partition)
        for _attempt in range(10):
            kv = await self.client.get(key)
            if kv is None:
                raise UnknownTopicOrPartition("This server does not host this topic-partition.")
            state = PartitionState.from_json(kv.value)
            snapshot = self.snapshot()
            new_state = change(state, snapshot, kv.mod_revision)
            if new_state == state:
                return state
            compares = [mod_revision_is(key, kv.mod_revision)]
            leader = snapshot.brokers.get(new_state.leader)
            if new_state.leader != state.leader and leader is not None:
                compares.append(create_revision_is(self.keys.broker(leader.node_id), leader.broker_epoch))
            result = await self.client.txn(compares, [Put(key, new_state.to_json())])
            if result.succeeded:
                await self.wait_for_revision(result.revision)
                return new_state
        raise EtcdUnavailable(f"{topic}-{partition} kept changing; giving up", 14)

    async def delete_topic(self, name: str) -> None:
        """Delete a topic record and all its partition states in one transaction."""
        key = self.keys.topic(name)
        prefix = self.keys.topic_partitions_prefix(name)
        result = await self.client.txn(
            [key_present(key)], [Delete(key), Delete(prefix, prefix_range_end(prefix))]
        )
        if not result.succeeded:
            raise UnknownTopicOrPartition(f"topic {name!r} does not exist")

    # ---- security metadata ---------------------------------------------------------------------------

    async def alter_security(self, change: SecurityChange) -> int:
        """Write one security change; returns the revision to wait for. Credentials, ACLs and quota entities are
        each their own key, so the change is a list of puts and deletes (in one transaction when it fits, else in
        several: each ACL or credential stands alone, as in Kafka, where a CreateAcls of many ACLs is not atomic
        either). Quota entities are read, changed and written back under a compare of their mod revision."""
        ops: list[tuple[list[Compare], Put | Delete]] = []
        for (user, mechanism), credential in change.scram_upserts.items():
            key = self.keys.scram(user, mechanism)
            compares = [key_absent(key)] if change.scram_only_if_absent else []
            ops.append((compares, Put(key, json.dumps(credential.to_json()).encode())))
        for user, mechanism in change.scram_deletes:
            ops.append(([], Delete(self.keys.scram(user, mechanism))))
        for acl_id, acl in change.acl_creates.items():
            ops.append(([], Put(self.keys.acl(acl_id), json.dumps(acl.to_json()).encode())))
        for acl_id in change.acl_deletes:
            ops.append(([], Delete(self.keys.acl(acl_id))))
        revision = 0
        for entity, changes in change.quota_changes.items():
            revision = max(revision, await self._alter_quota(entity, changes))
        if change.scram_only_if_absent:
            # Each credential on its own: one already there must not stop the others.
            for compares, op in ops:
                result = await self.client.txn(compares, [op])
                revision = max(revision, result.revision)
            return revision
        for start in range(0, len(ops), MAX_TXN_OPS):
            result = await self.client.txn([], [op for _, op in ops[start : start + MAX_TXN_OPS]])
            revision = max(revision, result.revision)
        return revision

    async def _alter_quota(self, entity: QuotaEntity, changes: Mapping[str, float | None]) -> int:
        key = self.keys.quota(quota_entity_key(entity))
        while True:
            kv = await self.client.get(key)
            values: dict[str, float] = json.loads(kv.value) if kv is not None else {}
            for name, value in changes.items():
                if value is None:
                    values.pop(name, None)
                else:
                    values[name] = value
            compare = mod_revision_is(key, kv.mod_revision) if kv is not None else key_absent(key)
            op: Put | Delete = Put(key, json.dumps(values).encode()) if values else Delete(key)
            result = await self.client.txn([compare], [op])
            if result.succeeded:
                return result.revision

    # ---- leader-proposed ISR changes (AlterPartition) --------------------------------------------------

    async def alter_partition(
        self,
        topic: str,
        partition: int,
        *,
        leader_id: int,
        broker_epoch: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: Collection[int],
    ) -> PartitionState:
        """A leader's ISR change, validated like AlterPartition and written only if nothing moved since.

        The state is read from etcd (not the cache) so a fresh proposal is judged against the truth. Raises
        UnknownTopicOrPartition, FencedLeaderEpoch, InvalidRequest, InvalidUpdateVersion (re-read and
        re-propose), IneligibleReplica, or StaleBrokerEpoch (this incarnation's registration is gone).
        Returns the new state (the same state if the ISR did not change).
        """
        key = self.keys.partition(topic, partition)
        leader_key = self.keys.broker(leader_id)
        for _attempt in range(5):
            kv = await self.client.get(key)
            if kv is None:
                raise UnknownTopicOrPartition(f"{topic}-{partition} does not exist")
            state = PartitionState.from_json(kv.value)
            snapshot = self.snapshot()
            brokers = snapshot.brokers
            new_state = alter_isr(
                state,
                leader_id=leader_id,
                leader_epoch=leader_epoch,
                partition_epoch=partition_epoch,
                new_isr=new_isr,
                # KIP-841: a broker in controlled shutdown may not join an ISR.
                live_brokers=snapshot.eligible_brokers(),
            )
            if new_state is state:
                return state
            compares = [mod_revision_is(key, kv.mod_revision), create_revision_is(leader_key, broker_epoch)]
            for added in set(new_state.isr) - set(state.isr):
                compares.append(create_revision_is(self.keys.broker(added), brokers[added].broker_epoch))
            result = await self.client.txn(compares, [Put(key, new_state.to_json())], [Get(leader_key)])
            if result.succeeded:
                return new_state
            current = result.responses[0]
            assert isinstance(current, RangeResult)
            if not current.kvs or current.kvs[0].create_revision != broker_epoch:
                raise StaleBrokerEpoch(f"broker {leader_id} at epoch {broker_epoch} is no longer registered")
            # The partition or an added broker changed between our read and our write: judge again.
        raise EtcdUnavailable(f"AlterPartition of {topic}-{partition} kept racing; giving up", 14)


def _read_configs(data: bytes) -> dict[str, str]:
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object of configs")
    return {str(k): str(v) for k, v in obj.items()}


def _dump_configs(configs: Mapping[str, str]) -> bytes:
    return json.dumps(dict(configs), separators=(",", ":"), sort_keys=True).encode()
