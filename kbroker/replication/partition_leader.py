"""The leader's view of one partition's replication: what each follower has, who is in sync, the high watermark.

Plain synchronous state (no trio, no I/O), one object per partition per leader epoch: a new epoch starts from
scratch, as Kafka resets its remote replica states on every leadership change, so nothing a follower reported to an
earlier leader (or to us in an earlier epoch) counts.

The rules are Kafka's:
- A follower's log end offset is the offset of its latest fetch (a follower asks for the offset after the last one
  it has appended).
- A follower was *caught up* at the time of a fetch whose offset reached our log end offset then; a fetch that
  reached the log end offset of its previous fetch means it was caught up at that previous fetch's time. It is in
  sync while it was caught up within `replica.lag.time.max.ms`.
- The high watermark is the smallest log end offset over the ISR (with the followers being added by an
  AlterPartition still in flight); a follower whose log end offset is not yet known in this epoch holds it back.
- A follower out of sync for longer than `replica.lag.time.max.ms` is proposed for removal from the ISR; a follower
  outside the ISR whose log end offset has reached both the high watermark and the start of the current leader
  epoch is proposed for addition, if it is a live broker that has fetched within `replica.lag.time.max.ms` (Kafka
  expands the ISR on a follower's fetch only, and never with a fenced broker: KIP-841). The proposal only takes
  effect once the metadata store accepts it (AlterPartition).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerState:
    replica_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    log_start_offset: int = UNKNOWN_OFFSET

    def record_fetch(self, fetch_offset: int, leader_log_end_offset: int, now_ms: int) -> None:
        if fetch_offset >= leader_log_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif (
            self.last_fetch_leader_log_end_offset >= 0
            and fetch_offset >= self.last_fetch_leader_log_end_offset
        ):
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_log_end_offset
        self.last_fetch_ms = now_ms

    def is_caught_up(self, leader_log_end_offset: int, now_ms: int, lag_time_max_ms: int) -> bool:
        return (
            self.log_end_offset == leader_log_end_offset or now_ms - self.last_caught_up_ms <= lag_time_max_ms
        )


class PartitionLeader:
    """Replication state of a partition this node leads at `leader_epoch`."""

    def __init__(
        self,
        *,
        node_id: int,
        leader_epoch: int,
        epoch_start_offset: int,
        isr: Iterable[int],
        replicas: Iterable[int],
        partition_epoch: int,
        now_ms: int,
    ) -> None:
        self.node_id = node_id
        self.leader_epoch = leader_epoch
        self.epoch_start_offset = epoch_start_offset
        """Our log end offset when this epoch began: a follower that has not reached it lacks records of ours."""
        self.isr: tuple[int, ...] = tuple(isr)
        self.replicas: tuple[int, ...] = tuple(replicas)
        self.partition_epoch = partition_epoch
        self.pending_isr: tuple[int, ...] | None = None
        """The ISR of an AlterPartition in flight; only one at a time."""
        # Kafka's rule: followers in the ISR start as caught up now (they were, as far as the controller knew), the
        # others as never caught up.
        self.followers: dict[int, FollowerState] = {}
        for replica in self.replicas:
            if replica != node_id:
                self.followers[replica] = FollowerState(
                    replica, last_caught_up_ms=now_ms if replica in self.isr else 0
                )

    def record_append(self, previous_log_end_offset: int, follower_fetch_ms: Mapping[int, int]) -> None:
        """Our log end moves past `previous_log_end_offset`. A follower that had reached it was caught up as of its
        latest fetch, even if that fetch did not record this partition: an incremental fetch session skips the
        partitions it has settled (kbroker/replication/fetch_session.py). Kafka records every fetch of every
        partition, so its lastCaughtUpTime is that fetch's time; without this an idle partition's first append
        would find its followers' caught-up time as old as the idleness, and the ISR check would drop them."""
        for follower in self.followers.values():
            if follower.log_end_offset >= previous_log_end_offset:
                fetched_ms = follower_fetch_ms.get(follower.replica_id)
                if fetched_ms is not None:
                    follower.last_caught_up_ms = max(follower.last_caught_up_ms, fetched_ms)

    # ---- state from etcd ------------------------------------------------------------------------------------

    def update_partition_state(
        self, isr: Iterable[int], replicas: Iterable[int], partition_epoch: int, now_ms: int
    ) -> bool:
        """A newer partition state for our epoch (our own AlterPartition, or the controller removing a dead
        follower). Returns whether anything changed; older states (a lagging cache) are ignored."""
        if partition_epoch <= self.partition_epoch:
            return False
        self.isr = tuple(isr)
        self.partition_epoch = partition_epoch
        self.pending_isr = None
        new_replicas = tuple(replicas)
        if new_replicas != self.replicas:
            self.replicas = new_replicas
            for replica in new_replicas:
                if replica != self.node_id and replica not in self.followers:
                    self.followers[replica] = FollowerState(replica)
            for gone in set(self.followers) - set(new_replicas):
                del self.followers[gone]
        return True

    # ---- follower fetches -----------------------------------------------------------------------------------

    def is_replica(self, replica_id: int) -> bool:
        return replica_id in self.followers

    def record_fetch(
        self, replica_id: int, fetch_offset: int, leader_log_end_offset: int, now_ms: int
    ) -> None:
        self.followers[replica_id].record_fetch(fetch_offset, leader_log_end_offset, now_ms)

    def record_log_start_offset(self, replica_id: int, log_start_offset: int) -> bool:
        """A follower's log start offset, as its fetch says it; whether it changed."""
        follower = self.followers[replica_id]
        if log_start_offset < 0 or log_start_offset == follower.log_start_offset:
            return False
        follower.log_start_offset = log_start_offset
        return True

    # ---- decisions ------------------------------------------------------------------------------------------

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR that counts for the high watermark: while an expansion is in flight, the follower being added
        already holds the high watermark back (as Kafka's maximal ISR does), so that it never has to go back."""
        if self.pending_isr is None:
            return self.isr
        return self.isr + tuple(b for b in self.pending_isr if b not in self.isr)

    def high_watermark(self, leader_log_end_offset: int) -> int:
        """The smallest log end offset over the (maximal) ISR; UNKNOWN_OFFSET while an ISR follower has not
        fetched in this epoch yet."""
        hw = leader_log_end_offset
        for replica in self.maximal_isr:
            if replica == self.node_id:
                continue
            follower = self.followers.get(replica)
            if follower is None or follower.log_end_offset == UNKNOWN_OFFSET:
                return UNKNOWN_OFFSET
            hw = min(hw, follower.log_end_offset)
        return hw

    def out_of_sync(self, leader_log_end_offset: int, now_ms: int, lag_time_max_ms: int) -> list[int]:
        """ISR followers that have not been caught up for longer than lag_time_max_ms."""
        out = []
        for replica in self.isr:
            follower = self.followers.get(replica)
            if follower is not None and not follower.is_caught_up(
                leader_log_end_offset, now_ms, lag_time_max_ms
            ):
                out.append(replica)
        return out

    def ready_to_join(
        self, high_watermark: int, now_ms: int, lag_time_max_ms: int, live_brokers: Collection[int]
    ) -> list[int]:
        """Live followers outside the ISR, fetching now, that have everything the ISR has: at least the high
        watermark and the start of our epoch (so they have truncated away whatever an earlier leader wrote that we
        do not have). A follower that stopped fetching (dead, or partitioned away) is never proposed: its last
        known position may still look caught up on an idle partition."""
        return [
            replica
            for replica, follower in self.followers.items()
            if replica not in self.isr
            and replica in live_brokers
            and follower.log_end_offset != UNKNOWN_OFFSET
            and follower.log_end_offset >= high_watermark
            and follower.log_end_offset >= self.epoch_start_offset
            and now_ms - follower.last_fetch_ms <= lag_time_max_ms
        ]

    def isr_proposal(
        self,
        leader_log_end_offset: int,
        high_watermark: int,
        now_ms: int,
        lag_time_max_ms: int,
        live_brokers: Collection[int],
    ) -> tuple[int, ...] | None:
        """The ISR we should propose, or None if it is fine as it is (or a proposal is already in flight)."""
        if self.pending_isr is not None:
            return None
        out = set(self.out_of_sync(leader_log_end_offset, now_ms, lag_time_max_ms))
        joining = self.ready_to_join(high_watermark, now_ms, lag_time_max_ms, live_brokers)
        if not out and not joining:
            return None
        return tuple(b for b in self.isr if b not in out) + tuple(joining)
