"""The controller: one node at a time, elected through a lease on etcd's controller key, keeps partition
leadership and ISRs consistent with the live brokers and places the partitions of new topics.

It is level-triggered: on every change of the cached metadata it compares each partition with the live
brokers and writes what is due, instead of reacting to individual events. That makes a newly elected
controller, or one that missed changes while etcd was unreachable, converge the same way.

What is due, per partition (state last written at etcd revision ``rev``):
- a broker is *failed* for this partition if it is not registered, or registered after ``rev`` (it restarted
  since the state was written, so it may have lost what the state says it had, as Kafka's controller treats a
  changed broker epoch);
- a failed leader (or no leader) is replaced by elect_leader: first from the ISR members that have not
  failed; failing that from the ISR members that restarted with their logs (not those that came back on a new,
  empty log directory: a replaced or wiped disk, which their registration says); failing that, only if the
  topic allows unclean election, from any live replica; otherwise the partition goes offline (leader -1) and
  keeps its last ISR, so that the first of those to come back with its log is elected cleanly;
- failed followers leave the ISR; returning brokers are not added back (the leader does that, through
  AlterPartition, once they have caught up);
- a broker in controlled shutdown (SIGTERM: its registration says so) may not lead or stay in an ISR: each of its
  leaderships moves to another in-sync replica that is not shutting down (one it leads alone stays), and it leaves
  every ISR, as KRaft's controller does for a broker whose heartbeat asks to shut down;
- a reassignment (AlterPartitionReassignments) completes once every target replica is in the ISR;
- missing partitions of a topic (a new topic, or CreatePartitions) are placed on the replicas the topic record
  assigns them (an explicit assignment), else by rendezvous hashing over the live brokers; the first replica leads.

With `auto.leader.rebalance.enable`, every `leader.imbalance.check.interval.seconds` the controller also moves each
leadership back to its preferred replica (the first) where that replica is in the ISR and eligible. As KRaft's
controller, it balances every such partition; `leader.imbalance.per.broker.percentage` is not consulted.

Every write compares the controller key's create_revision with this controller's epoch, so a controller whose
lease lapsed cannot overwrite its successor's decisions.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping

import trio

from kbroker.cluster.etcd import EtcdError, EtcdUnavailable
from kbroker.cluster.metadata import (
    complete_reassignment,
    elect_leader,
    elect_preferred,
    initial_partition_state,
    leader_offline,
    place_replicas,
    remove_from_isr,
)
from kbroker.cluster.store import MAX_TXN_OPS, LeaseExpired, MetadataStore, PartitionWrite
from kbroker.common import KafkaError
from kbroker.metadata.image import NO_LEADER, MetadataImage, PartitionState
from kbroker.metadata.topics import InvalidReplicationFactor

log = logging.getLogger(__name__)


class Controller:
    """Run one per broker process: ``nursery.start_soon(Controller(store, node_id).run)`` after the store's
    cache is running. Each campaigns for the controller key; the winner controls until its lease lapses."""

    def __init__(
        self,
        store: MetadataStore,
        node_id: int,
        *,
        lease_ttl: int = 10,
        retry_interval: float = 1.0,
        unclean_leader_election_default: bool = False,
        auto_leader_rebalance: bool = False,
        leader_imbalance_check_interval_s: float = 300.0,
    ) -> None:
        self.store = store
        self.node_id = node_id
        self.lease_ttl = lease_ttl
        self.retry_interval = retry_interval
        self.unclean_leader_election_default = unclean_leader_election_default
        """unclean.leader.election.enable of the broker's static config; the cluster-wide dynamic value wins."""
        self.auto_leader_rebalance = auto_leader_rebalance
        self.leader_imbalance_check_interval_s = leader_imbalance_check_interval_s
        self.controller_epoch: int | None = None
        """The epoch while this node is the active controller, else None."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        backoff = 0.1
        while True:
            try:
                await self._campaign_once()
                backoff = 0.1
            except EtcdUnavailable as exc:
                log.warning("controller %d: etcd unavailable: %s", self.node_id, exc)
                await trio.sleep(backoff)
                backoff = min(2 * backoff, 2.0)

    async def _campaign_once(self) -> None:
        lease = await self.store.client.lease_grant(self.lease_ttl)
        try:
            won, record = await self.store.campaign(self.node_id, lease.id)
            if not won or record is None:
                await self.store.revoke_lease(lease.id)
                if record is not None:
                    # Wait for the holder's key to go (its lease lapsed or was revoked). Catch up with its
                    # creation first, or a lagging cache would show no controller and make us spin.
                    holder_epoch = record.controller_epoch
                    await self.store.wait_for_revision(holder_epoch)
                    await self.store.wait_until(
                        lambda s: s.controller is None or s.controller.controller_epoch != holder_epoch
                    )
                return
            log.info("node %d is the controller, epoch %d", self.node_id, record.controller_epoch)
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._hold_lease, lease.id, scope)
                    await self._control(record.controller_epoch)
        finally:
            self.controller_epoch = None
            await self.store.revoke_lease(lease.id)

    async def _hold_lease(self, lease_id: int, scope: trio.CancelScope) -> None:
        try:
            await self.store.keep_alive(lease_id, self.lease_ttl)
        except LeaseExpired as exc:
            log.warning("controller %d lost its lease: %s", self.node_id, exc)
        finally:
            scope.cancel()

    async def _control(self, epoch: int) -> None:
        # Act only on a cache that includes our own controller key, so we never decide on older state.
        snapshot = await self.store.wait_for_revision(epoch)
        self.controller_epoch = epoch
        next_rebalance = trio.current_time() + self.leader_imbalance_check_interval_s
        settled: MetadataImage | None = None
        while True:
            rebalance = self.auto_leader_rebalance and trio.current_time() >= next_rebalance
            if rebalance:
                next_rebalance = trio.current_time() + self.leader_imbalance_check_interval_s
            try:
                outcome = await self.reconcile(snapshot, epoch, rebalance=rebalance, since=settled)
            except EtcdError as exc:
                log.warning("controller %d: write failed: %s", self.node_id, exc)
                outcome = False
            if outcome is None:
                log.warning("controller %d: fenced, epoch %d is over", self.node_id, epoch)
                return
            # Every change this snapshot called for is written: the next one needs a look only at what moved since.
            settled = snapshot if outcome else None
            wake_at = next_rebalance if self.auto_leader_rebalance else math.inf
            if not outcome:
                # A compare failed (our cache lagged) or etcd hiccuped: retry on the next change, or soon.
                wake_at = min(wake_at, trio.current_time() + self.retry_interval)
            with trio.move_on_at(wake_at):
                await self.store.wait_for_change(snapshot.revision)
            snapshot = self.store.snapshot()

    async def reconcile(
        self,
        snapshot: MetadataImage,
        epoch: int,
        *,
        rebalance: bool = False,
        since: MetadataImage | None = None,
    ) -> bool | None:
        """Write every change due in this snapshot (with `rebalance`, the preferred leader elections too). True: all
        written (or nothing due); False: some writes lost a race and must be recomputed from newer metadata; None:
        fenced (no longer the controller). `since`: an earlier snapshot whose changes were all written
        (`changes_due`)."""
        writes = list(self.changes_due(snapshot, since))
        if rebalance:
            changed = {(w.topic, w.partition) for w in writes}
            writes += [w for w in self.rebalance_due(snapshot) if (w.topic, w.partition) not in changed]
        all_written = True
        for batch in _batches(writes):
            outcome = await self.store.write_partitions(epoch, batch)
            if outcome is None:
                return None
            if outcome:
                continue
            # One stale partition spoils a batch: write the rest one by one.
            for write in batch:
                single = await self.store.write_partitions(epoch, [write])
                if single is None:
                    return None
                all_written = all_written and single
        return all_written

    def changes_due(
        self, snapshot: MetadataImage, since: MetadataImage | None = None
    ) -> Iterator[PartitionWrite]:
        """The partition writes this snapshot calls for (pure: no I/O). With `since`, an earlier snapshot all of whose
        due writes were made, and the same brokers and unclean default: only the topics and partitions whose state
        changed after it are looked at (the rest still call for nothing: what is due is a function of the brokers,
        the topic and the partition's own state). A rolling restart of 10,000 partitions moves thousands of ISRs one
        at a time; each then costs what it changed, not a pass over every partition."""
        unclean_default = self.unclean_default(snapshot)
        if since is not None and (
            since.brokers != snapshot.brokers or self.unclean_default(since) != unclean_default
        ):
            since = None
        for name, topic in snapshot.topics.items():
            topic_revision = snapshot.topic_revisions[name]
            states = snapshot.partitions.get(name, {})
            unchanged: Mapping[int, PartitionState] = {}
            if since is not None and since.topics.get(name) is topic:
                previous = since.partitions.get(name)
                if previous is states:
                    continue
                unchanged = previous or {}
            missing = [p for p in range(topic.num_partitions) if p not in states]
            if missing:
                assignment = {p: topic.assignments[p] for p in missing if p in topic.assignments}
                unassigned = [p for p in missing if p not in assignment]
                try:
                    assignment.update(
                        place_replicas(name, unassigned, topic.replication_factor, snapshot.brokers.values())
                    )
                except InvalidReplicationFactor as exc:
                    log.warning("cannot place partitions of %s yet: %s", name, exc)
                for p, replicas in assignment.items():
                    state = initial_partition_state(replicas)
                    if state.leader not in snapshot.brokers:
                        # An explicit assignment naming a broker that is down right now: no leader until the
                        # controller elects one of the live replicas (next_state).
                        state = leader_offline(state)
                    epochs = {
                        b: snapshot.brokers[b].broker_epoch for b in (state.leader,) if b in snapshot.brokers
                    }
                    yield PartitionWrite(name, p, state, 0, topic_revision, epochs)
            unclean = topic.unclean_leader_election(unclean_default)
            for p, state in states.items():
                if unchanged.get(p) is state:
                    continue
                revision = snapshot.partition_revision(name, p)
                new_state = self.next_state(snapshot, state, revision, unclean)
                if new_state is None or new_state == state:
                    continue
                epochs = {}
                if new_state.leader != NO_LEADER:
                    epochs[new_state.leader] = snapshot.brokers[new_state.leader].broker_epoch
                yield PartitionWrite(name, p, new_state, revision, topic_revision, epochs)

    def unclean_default(self, snapshot: MetadataImage) -> bool:
        """unclean.leader.election.enable for topics without their own: the cluster-wide dynamic value, else the
        static one."""
        value = snapshot.broker_configs.get("", {}).get("unclean.leader.election.enable")
        if value is None:
            return self.unclean_leader_election_default
        return value.strip().lower() == "true"

    @staticmethod
    def next_state(
        snapshot: MetadataImage, state: PartitionState, revision: int, unclean: bool
    ) -> PartitionState | None:
        """What the controller makes of one partition (None: nothing to do)."""
        live = snapshot.live_brokers()
        unchanged = snapshot.brokers_registered_before(revision)
        eligible = unchanged & snapshot.eligible_brokers()
        if state.leader == NO_LEADER or state.leader not in unchanged:
            # An ISR member back on an empty disk would lead with an empty log, and its followers would truncate
            # everything the ISR acknowledged to match it.
            lost = snapshot.brokers_with_new_log_dirs_since(revision)
            elected = (
                elect_leader(state, eligible, False)
                or elect_leader(state, unchanged, False)
                or elect_leader(state, live - lost, unclean)
                or (elect_leader(state, live, True) if unclean else None)
            )
            if elected is not None:
                return complete_reassignment(elected, eligible) or elected
            offline = leader_offline(state, lost)
            return None if offline is state else offline
        if state.leader not in eligible:
            # Controlled shutdown: another in-sync replica takes over (the ISR then leaves the stopping broker out).
            others = [b for b in state.isr if b != state.leader and b in eligible]
            if others:
                moved = elect_leader(state, eligible, False)
                if moved is not None:
                    return complete_reassignment(moved, eligible) or moved
        failed = [b for b in state.isr if b not in eligible]
        shrunk = remove_from_isr(state, failed)
        return complete_reassignment(shrunk, eligible) or shrunk

    def rebalance_due(self, snapshot: MetadataImage) -> Iterator[PartitionWrite]:
        """Preferred leader elections for auto.leader.rebalance.enable: every partition led by another replica than
        its preferred one, where the preferred one is in the ISR and eligible (pure: no I/O)."""
        eligible = snapshot.eligible_brokers()
        for name, states in snapshot.partitions.items():
            topic_revision = snapshot.topic_revisions.get(name)
            if topic_revision is None:
                continue
            for p, state in states.items():
                if state.leader in (NO_LEADER, state.replicas[0]) or state.reassigning:
                    continue
                revision = snapshot.partition_revision(name, p)
                if state.replicas[0] not in snapshot.brokers_registered_before(revision):
                    continue
                try:
                    elected = elect_preferred(state, eligible)
                except KafkaError:
                    continue
                epochs = {elected.leader: snapshot.brokers[elected.leader].broker_epoch}
                yield PartitionWrite(name, p, elected, revision, topic_revision, epochs)


def _batches(writes: list[PartitionWrite]) -> Iterator[list[PartitionWrite]]:
    """Group writes so that no transaction exceeds etcd's limit on compares and operations."""
    batch: list[PartitionWrite] = []
    compares = 1
    for write in writes:
        cost = 2 + len(write.broker_epochs)
        if batch and (compares + cost > MAX_TXN_OPS or len(batch) + 1 > MAX_TXN_OPS):
            yield batch
            batch, compares = [], 1
        batch.append(write)
        compares += cost
    if batch:
        yield batch
