"""The rules of the cluster metadata and its etcd key layout: pure state transitions (no I/O, no trio).

Everything here is plain synchronous code so the rules (who may become leader, who may change the ISR, where a
new topic's replicas go) can be tested with tables. kbroker.cluster.store applies the results to etcd with
compare-and-swap transactions. The model itself (topics, partition states, broker registrations) is
kbroker/metadata/image.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote, unquote

from kbroker.common import CodedError
from kbroker.metadata.image import NO_LEADER, BrokerRegistration, PartitionState
from kbroker.metadata.topics import InvalidPartitions, InvalidReplicationFactor
from protocol.errors import ErrorCode

# ---- errors ---------------------------------------------------------------------------------------------


class UnknownTopicOrPartition(CodedError):
    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class FencedLeaderEpoch(CodedError):
    """The proposer's leader_epoch is not the current one: it has been replaced as leader."""

    error_code = ErrorCode.FENCED_LEADER_EPOCH


class InvalidUpdateVersion(CodedError):
    """The proposer's partition_epoch is stale: the state changed since it read it (KIP-497)."""

    error_code = ErrorCode.INVALID_UPDATE_VERSION


class IneligibleReplica(CodedError):
    """A replica proposed for the ISR is not a live broker (KIP-841)."""

    error_code = ErrorCode.INELIGIBLE_REPLICA


class InvalidRequest(CodedError):
    error_code = ErrorCode.INVALID_REQUEST


class StaleBrokerEpoch(CodedError):
    """The writer's broker registration is gone or was replaced: this process is no longer that broker."""

    error_code = ErrorCode.STALE_BROKER_EPOCH


class ElectionNotNeeded(CodedError):
    error_code = ErrorCode.ELECTION_NOT_NEEDED


class PreferredLeaderNotAvailable(CodedError):
    error_code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE


class EligibleLeadersNotAvailable(CodedError):
    error_code = ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE


class NoReassignmentInProgress(CodedError):
    error_code = ErrorCode.NO_REASSIGNMENT_IN_PROGRESS


def initial_partition_state(replicas: tuple[int, ...]) -> PartitionState:
    """A new partition: the first replica (the preferred one) leads, every replica is in sync (all logs empty)."""
    return PartitionState(replicas[0], 0, replicas, replicas, 0)


# ---- key layout -----------------------------------------------------------------------------------------


class KeyLayout:
    """Where each record lives in etcd, under ``/kbroker/<cluster>/``.

    brokers/<node_id>                 BrokerRegistration, attached to the broker's lease
    controller                        ControllerRecord, attached to the controller's lease
    topics/<name>                     TopicMetadata
    partitions/<name>/<partition>     PartitionState
    scram/<mechanism>/<user>          ScramCredential (user URL-quoted)
    acls/<id>                         AclBinding
    quotas/<entity>                   client quota values of one entity (its JSON key, URL-quoted)
    broker_configs/<node_id>          a broker's dynamic configs (JSON object of strings)
    broker_configs/default            the cluster-wide dynamic broker configs
    """

    def __init__(self, cluster: str = "default") -> None:
        self.cluster = cluster.strip("/") or "default"
        self.root = f"/kbroker/{self.cluster}/".encode()
        self.brokers_prefix = self.root + b"brokers/"
        self.controller = self.root + b"controller"
        self.topics_prefix = self.root + b"topics/"
        self.partitions_prefix = self.root + b"partitions/"
        # the security metadata (kbroker/security/image.py)
        self.scram_prefix = self.root + b"scram/"
        self.acls_prefix = self.root + b"acls/"
        self.quotas_prefix = self.root + b"quotas/"
        self.broker_configs_prefix = self.root + b"broker_configs/"

    def broker(self, node_id: int) -> bytes:
        return self.brokers_prefix + str(node_id).encode()

    def topic(self, name: str) -> bytes:
        return self.topics_prefix + name.encode()

    def topic_partitions_prefix(self, name: str) -> bytes:
        return self.partitions_prefix + name.encode() + b"/"

    def partition(self, name: str, partition: int) -> bytes:
        return self.topic_partitions_prefix(name) + str(partition).encode()

    def scram(self, user: str, mechanism: str) -> bytes:
        return self.scram_prefix + mechanism.encode() + b"/" + quote(user, safe="").encode()

    def acl(self, acl_id: str) -> bytes:
        return self.acls_prefix + acl_id.encode()

    def quota(self, entity_key: str) -> bytes:
        return self.quotas_prefix + quote(entity_key, safe="").encode()

    def broker_configs(self, entity: str) -> bytes:
        """`entity`: a node id's string, or "" for the cluster-wide defaults."""
        return self.broker_configs_prefix + (entity or _DEFAULT_CONFIG_KEY).encode()

    def parse(self, key: bytes) -> tuple[str, Any] | None:
        """("broker", node_id) | ("controller", None) | ("topic", name) | ("partition", (name, p)) |
        ("scram", (user, mechanism)) | ("acl", id) | ("quota", entity key) | ("broker_configs", entity) | None."""
        if not key.startswith(self.root):
            return None
        if key == self.controller:
            return ("controller", None)
        try:
            if key.startswith(self.brokers_prefix):
                return ("broker", int(key[len(self.brokers_prefix) :]))
            if key.startswith(self.topics_prefix):
                return ("topic", key[len(self.topics_prefix) :].decode())
            if key.startswith(self.partitions_prefix):
                name, _, index = key[len(self.partitions_prefix) :].decode().rpartition("/")
                return ("partition", (name, int(index)))
            if key.startswith(self.scram_prefix):
                mechanism, _, user = key[len(self.scram_prefix) :].decode().partition("/")
                return ("scram", (unquote(user), mechanism))
            if key.startswith(self.acls_prefix):
                return ("acl", key[len(self.acls_prefix) :].decode())
            if key.startswith(self.quotas_prefix):
                return ("quota", unquote(key[len(self.quotas_prefix) :].decode()))
            if key.startswith(self.broker_configs_prefix):
                entity = key[len(self.broker_configs_prefix) :].decode()
                return ("broker_configs", "" if entity == _DEFAULT_CONFIG_KEY else entity)
        except ValueError:
            return None
        return None


_DEFAULT_CONFIG_KEY = "default"


# ---- leader election and ISR changes --------------------------------------------------------------------


def elect_leader(
    state: PartitionState, live_brokers: Collection[int], unclean_allowed: bool
) -> PartitionState | None:
    """Pick a new leader, or None if no replica may lead (the partition is then offline).

    Clean election takes the first replica, in assignment order (so the preferred replica first), that is both
    in the ISR and live: only ISR members are known to have every committed record. Dead brokers leave the ISR.
    Unclean election (only if the topic allows it) falls back to the first live replica, which may lack
    committed records; the ISR is then that replica alone. Both bump leader_epoch, so followers and clients of
    the old leader are fenced, and partition_epoch.

    The caller decides when an election is due; this always chooses afresh (it may re-choose the old leader
    when that one is live and in the ISR, e.g. after it restarted).
    """
    live = set(live_brokers)
    isr = set(state.isr)
    for replica in state.replicas:
        if replica in isr and replica in live:
            new_isr = tuple(b for b in state.isr if b in live)
            return _changed(state, leader=replica, leader_epoch=state.leader_epoch + 1, isr=new_isr)
    if unclean_allowed:
        for replica in state.replicas:
            if replica in live:
                return _changed(state, leader=replica, leader_epoch=state.leader_epoch + 1, isr=(replica,))
    return None


def leader_offline(state: PartitionState, lost: Collection[int] = ()) -> PartitionState:
    """No eligible leader: leader becomes NO_LEADER (bumping leader_epoch to fence the old one). The ISR is kept
    as the last known set of in-sync replicas, so the first of them to come back can be elected cleanly, except
    the `lost` ones: back on an empty log directory, they no longer have what made them in sync (and keeping them
    would let a later state, written after their return, pass them off as in sync). The ISR may end up empty: then
    only an unclean election can give the partition a leader, its data being gone."""
    isr = tuple(b for b in state.isr if b not in lost)
    if state.leader == NO_LEADER:
        return state if isr == state.isr else _changed(state, isr=isr)
    return _changed(state, leader=NO_LEADER, leader_epoch=state.leader_epoch + 1, isr=isr)


def remove_from_isr(state: PartitionState, brokers: Collection[int]) -> PartitionState:
    """The controller's removal of dead or restarted followers from the ISR. The leader stays (an election
    handles a dead leader), and an offline partition keeps its last known ISR."""
    if state.leader == NO_LEADER:
        return state
    gone = set(brokers) - {state.leader}
    new_isr = tuple(b for b in state.isr if b not in gone)
    if new_isr == state.isr:
        return state
    return _changed(state, isr=new_isr)


def alter_isr(
    state: PartitionState,
    *,
    leader_id: int,
    leader_epoch: int,
    partition_epoch: int,
    new_isr: Collection[int],
    live_brokers: Collection[int],
) -> PartitionState:
    """Validate a leader's proposed ISR as the controller validates AlterPartition (KIP-497, KIP-841).

    The proposal is refused if the proposer is not the leader at leader_epoch (FENCED_LEADER_EPOCH or
    INVALID_REQUEST), if partition_epoch is stale (INVALID_UPDATE_VERSION: the leader must re-read and
    re-propose), if the ISR would not contain the leader or names a non-replica (INVALID_REQUEST), or if it adds
    a broker that is not live (INELIGIBLE_REPLICA). Returns the state unchanged if the ISR is the same.
    """
    if leader_epoch != state.leader_epoch:
        raise FencedLeaderEpoch(f"leader_epoch {leader_epoch} is not the current {state.leader_epoch}")
    if leader_id != state.leader:
        raise InvalidRequest(f"broker {leader_id} is not the leader ({state.leader})")
    if partition_epoch != state.partition_epoch:
        raise InvalidUpdateVersion(
            f"partition_epoch {partition_epoch} is not the current {state.partition_epoch}"
        )
    proposed = tuple(dict.fromkeys(new_isr))  # drop duplicates, keep the proposer's order
    if leader_id not in proposed:
        raise InvalidRequest(f"the ISR {list(proposed)} must contain the leader {leader_id}")
    strangers = [b for b in proposed if b not in state.replicas]
    if strangers:
        raise InvalidRequest(f"brokers {strangers} are not replicas {list(state.replicas)}")
    live = set(live_brokers)
    ineligible = [b for b in proposed if b not in state.isr and b not in live]
    if ineligible:
        raise IneligibleReplica(f"brokers {ineligible} are not live")
    if set(proposed) == set(state.isr):
        return state
    return _changed(state, isr=proposed)


def shrink_isr(
    state: PartitionState,
    *,
    leader_id: int,
    leader_epoch: int,
    partition_epoch: int,
    out_of_sync: Collection[int],
) -> PartitionState:
    """The leader removes followers that fell behind (replica.lag.time.max.ms)."""
    removed = set(out_of_sync)
    if leader_id in removed:
        raise InvalidRequest("the leader cannot remove itself from the ISR")
    new_isr = [b for b in state.isr if b not in removed]
    return alter_isr(state, leader_id=leader_id, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
                     new_isr=new_isr, live_brokers=())  # fmt: skip


def expand_isr(
    state: PartitionState,
    *,
    leader_id: int,
    leader_epoch: int,
    partition_epoch: int,
    caught_up: int,
    live_brokers: Collection[int],
) -> PartitionState:
    """The leader adds a follower that has caught up to the high watermark."""
    new_isr = [*state.isr, caught_up] if caught_up not in state.isr else list(state.isr)
    return alter_isr(state, leader_id=leader_id, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
                     new_isr=new_isr, live_brokers=live_brokers)  # fmt: skip


# ---- elections asked for (ElectLeaders, the controller's rebalance) and reassignments (KIP-455) -------------------


def elect_preferred(state: PartitionState, eligible: Collection[int]) -> PartitionState:
    """ElectLeaders PREFERRED (and auto.leader.rebalance.enable): the first replica leads, if it is in the ISR and
    eligible (live, not shutting down). ELECTION_NOT_NEEDED if it leads already, PREFERRED_LEADER_NOT_AVAILABLE if
    it may not."""
    preferred = state.replicas[0]
    if state.leader == preferred:
        raise ElectionNotNeeded("Leader election not needed for topic partition.")
    if preferred not in state.isr or preferred not in eligible:
        raise PreferredLeaderNotAvailable(
            f"Failed to elect leader for partition: preferred replica {preferred} is not "
            + ("in the ISR." if preferred not in state.isr else "a live broker.")
        )
    return _changed(state, leader=preferred, leader_epoch=state.leader_epoch + 1)


def elect_unclean(state: PartitionState, live: Collection[int], eligible: Collection[int]) -> PartitionState:
    """ElectLeaders UNCLEAN: a partition without a live leader gets one, from the ISR if any member is eligible, else
    any live replica (which may lack committed records). ELECTION_NOT_NEEDED while the leader is live,
    ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is."""
    if state.leader != NO_LEADER and state.leader in live:
        raise ElectionNotNeeded("Leader election not needed for topic partition.")
    elected = elect_leader(state, eligible, False) or elect_leader(state, eligible, True)
    if elected is None:
        raise EligibleLeadersNotAvailable("Failed to elect leader for partition: no replica is live.")
    return elected


def reassign(state: PartitionState, target: Sequence[int], eligible: Collection[int]) -> PartitionState:
    """Start a reassignment to `target` (AlterPartitionReassignments), replacing one in progress: the replicas become
    the target followed by the original replicas it drops (Kafka's order, so the target's first replica is the
    preferred leader), the new ones start outside the ISR and catch up as followers. A target the ISR already covers
    (a reordering, or only dropping replicas) completes at once."""
    original = state.original_replicas
    target = tuple(target)
    adding = tuple(b for b in target if b not in original)
    removing = tuple(b for b in original if b not in target)
    replicas = target + removing
    isr = tuple(b for b in state.isr if b in replicas)
    changed = _changed(
        state, replicas=replicas, isr=isr or state.isr, adding_replicas=adding, removing_replicas=removing
    )
    if changed.leader not in replicas:
        # The leader was being added by the reassignment this one replaces.
        changed = elect_leader(replace(changed, isr=isr), eligible, False) or leader_offline(changed)
    return complete_reassignment(changed, eligible) or changed


def cancel_reassignment(state: PartitionState, eligible: Collection[int]) -> PartitionState:
    """Go back to the replicas before the reassignment; the replicas it was adding leave. NO_REASSIGNMENT_IN_PROGRESS
    if there is none."""
    if not state.reassigning:
        raise NoReassignmentInProgress()  # with no message, as Kafka
    original = state.original_replicas
    isr = tuple(b for b in state.isr if b in original)
    reverted = _changed(
        state, replicas=original, isr=isr or state.isr, adding_replicas=(), removing_replicas=()
    )
    if reverted.leader not in original:
        reverted = elect_leader(replace(reverted, isr=isr), eligible, False) or leader_offline(reverted)
    return reverted


def complete_reassignment(state: PartitionState, eligible: Collection[int]) -> PartitionState | None:
    """The controller finishes a reassignment once every target replica is in the ISR: the replicas become the
    target, the dropped ones leave the ISR (and delete their logs), and a dropped leader hands over to the first
    target replica in the ISR. None while it is not ready (or there is none)."""
    if not state.reassigning:
        return None
    target = state.target_replicas
    if not set(target) <= set(state.isr):
        return None
    isr = tuple(b for b in state.isr if b in target)
    done = _changed(state, replicas=target, isr=isr, adding_replicas=(), removing_replicas=())
    if done.leader not in target:
        leader = next((b for b in target if b in eligible), target[0])
        done = replace(done, leader=leader, leader_epoch=state.leader_epoch + 1)
    return done


def _changed(state: PartitionState, **changes: Any) -> PartitionState:
    return replace(state, partition_epoch=state.partition_epoch + 1, **changes)


# ---- replica placement ----------------------------------------------------------------------------------


def rendezvous_weight(topic: str, partition: int, node_id: int) -> int:
    """A stable pseudo-random weight per (topic, partition, broker). blake2b, not hash(): Python salts str
    hashes per process, and every node must compute the same placement."""
    digest = hashlib.blake2b(f"{topic}\x00{partition}\x00{node_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def place_partition(
    topic: str, partition: int, replication_factor: int, live_brokers: Iterable[int | BrokerRegistration]
) -> tuple[int, ...]:
    """The replicas of one partition by rendezvous (highest-random-weight) hashing: the brokers with the
    highest weights, the highest first (the preferred leader).

    Each partition's choice depends only on its own weights, so adding a broker moves a replica only where the
    new broker out-weighs one of the chosen ones (about replication_factor / brokers of the partitions), and
    removing a broker moves only the replicas it held. When brokers have racks, one replica per rack is chosen
    first (in weight order), then the rest by weight.
    """
    racks: dict[int, str | None] = {}
    for broker in live_brokers:
        if isinstance(broker, BrokerRegistration):
            racks[broker.node_id] = broker.rack
        else:
            racks.setdefault(broker, None)
    if replication_factor < 1 or replication_factor > len(racks):
        raise InvalidReplicationFactor(
            f"replication factor {replication_factor} needs that many live brokers; {len(racks)} are live"
        )
    ranked = sorted(racks, key=lambda b: (rendezvous_weight(topic, partition, b), b), reverse=True)
    chosen: list[int] = []
    if any(rack is not None for rack in racks.values()):
        seen_racks: set[str | None] = set()
        for broker in ranked:
            if len(chosen) == replication_factor:
                break
            if racks[broker] not in seen_racks:
                seen_racks.add(racks[broker])
                chosen.append(broker)
    for broker in ranked:
        if len(chosen) == replication_factor:
            break
        if broker not in chosen:
            chosen.append(broker)
    return tuple(chosen)


def place_replicas(
    topic: str,
    partitions: int | Iterable[int],
    replication_factor: int,
    live_brokers: Iterable[int | BrokerRegistration],
) -> dict[int, tuple[int, ...]]:
    """Replica assignment for partitions ``range(partitions)`` (or the given partition indexes)."""
    brokers = list(live_brokers)
    if isinstance(partitions, int):
        if partitions < 1:
            raise InvalidPartitions(f"a topic needs at least one partition, got {partitions}")
        partitions = range(partitions)
    return {p: place_partition(topic, p, replication_factor, brokers) for p in partitions}
