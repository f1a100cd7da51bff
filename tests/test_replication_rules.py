"""The pure rules of replication, by tables: the leader's follower tracking (caught-up time, ISR shrink and expand,
high watermark), the follower's truncation rule (KIP-101 / KIP-279), the high watermark checkpoint, and the small
pieces of the cluster broker that need no processes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kbroker.cluster.broker import ClusterTopics, metadata_url
from kbroker.cluster.metadata import BrokerRegistration, PartitionState, TopicRecord
from kbroker.cluster.store import ClusterSnapshot
from kbroker.config import BrokerConfig
from kbroker.log.leader_epoch import LeaderEpochCache
from kbroker.replication.checkpoint import CHECKPOINT_FILE, read_checkpoint, write_checkpoint
from kbroker.replication.fetcher import TruncationStep, truncation_step
from kbroker.replication.partition_leader import UNKNOWN_OFFSET, FollowerState, PartitionLeader
from kbroker.replication.topics_tool import PartitionDescription, partition_line
from kbroker.topics import TopicError

pytestmark = pytest.mark.timeout(30)

LAG = 5000


def leader(isr: tuple[int, ...] = (1, 2, 3), now: int = 0, epoch_start: int = 0) -> PartitionLeader:
    return PartitionLeader(
        node_id=1,
        leader_epoch=4,
        epoch_start_offset=epoch_start,
        isr=isr,
        replicas=(1, 2, 3),
        partition_epoch=10,
        now_ms=now,
    )


# ---- follower tracking ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fetches", "expected_caught_up_ms"),
    [
        # (fetch offset, leader log end, time): reaching the log end is caught up at that time
        ([(10, 10, 100)], 100),
        # behind the log end at this fetch, but at the previous fetch's log end: caught up at the previous time
        ([(5, 5, 100), (5, 8, 200)], 100),
        ([(5, 5, 100), (5, 8, 200), (8, 12, 300)], 200),
        # never reaching the log end of its previous fetch: not caught up since the first
        ([(5, 5, 100), (6, 9, 200), (7, 12, 300)], 100),
        ([(1, 9, 100), (2, 9, 200)], 0),
    ],
)
def test_last_caught_up_time(fetches: list[tuple[int, int, int]], expected_caught_up_ms: int) -> None:
    follower = FollowerState(2)
    for offset, leader_end, now in fetches:
        follower.record_fetch(offset, leader_end, now)
    assert follower.last_caught_up_ms == expected_caught_up_ms
    assert follower.log_end_offset == fetches[-1][0]


def test_high_watermark_is_the_smallest_log_end_over_the_isr() -> None:
    state = leader()
    # No follower has fetched in this epoch yet: nothing is known to be replicated.
    assert state.high_watermark(100) == UNKNOWN_OFFSET
    state.record_fetch(2, 60, 100, now_ms=1)
    assert state.high_watermark(100) == UNKNOWN_OFFSET
    state.record_fetch(3, 80, 100, now_ms=1)
    assert state.high_watermark(100) == 60
    state.record_fetch(2, 100, 100, now_ms=2)
    assert state.high_watermark(100) == 80
    state.record_fetch(3, 100, 100, now_ms=2)
    assert state.high_watermark(120) == 100


def test_a_leader_alone_in_the_isr_commits_its_log_end() -> None:
    state = leader(isr=(1,))
    assert state.high_watermark(42) == 42
    # A follower outside the ISR does not hold the high watermark back.
    state.record_fetch(2, 3, 42, now_ms=1)
    assert state.high_watermark(42) == 42


def test_a_follower_being_added_holds_the_high_watermark_back() -> None:
    state = leader(isr=(1, 2))
    state.record_fetch(2, 50, 50, now_ms=1)
    state.record_fetch(3, 40, 50, now_ms=1)
    assert state.high_watermark(50) == 50
    state.pending_isr = (1, 2, 3)
    assert state.high_watermark(50) == 40


def test_isr_shrinks_after_the_lag_time_and_grows_when_caught_up() -> None:
    state = leader(now=0, epoch_start=20)
    state.record_fetch(2, 100, 100, now_ms=1000)
    state.record_fetch(3, 100, 100, now_ms=1000)
    assert state.isr_proposal(100, 100, now_ms=1000 + LAG, lag_time_max_ms=LAG) is None
    # Follower 3 stops fetching while the log grows: out after replica.lag.time.max.ms.
    state.record_fetch(2, 150, 150, now_ms=2000)
    assert state.isr_proposal(150, 150, now_ms=1000 + LAG, lag_time_max_ms=LAG) is None
    assert state.out_of_sync(150, now_ms=1001 + LAG, lag_time_max_ms=LAG) == [3]
    assert state.isr_proposal(150, 100, now_ms=1001 + LAG, lag_time_max_ms=LAG) == (1, 2)
    state.update_partition_state((1, 2), (1, 2, 3), partition_epoch=11, now_ms=7000)
    # Back, but below the high watermark: not yet.
    state.record_fetch(3, 120, 150, now_ms=7000)
    assert state.ready_to_join(high_watermark=150) == []
    state.record_fetch(3, 150, 150, now_ms=7100)
    assert state.ready_to_join(high_watermark=150) == [3]
    assert state.isr_proposal(150, 150, now_ms=7100, lag_time_max_ms=LAG) == (1, 2, 3)


def test_a_follower_joins_only_past_the_start_of_the_leader_epoch() -> None:
    state = leader(isr=(1,), epoch_start=30)
    state.record_fetch(2, 25, 40, now_ms=1)
    # At the high watermark (20) but short of our epoch's start: it may still hold records we do not have.
    assert state.ready_to_join(high_watermark=20) == []
    state.record_fetch(2, 30, 40, now_ms=2)
    assert state.ready_to_join(high_watermark=20) == [2]


def test_one_alter_partition_at_a_time_and_stale_states_ignored() -> None:
    state = leader()
    state.pending_isr = (1, 2)
    assert state.isr_proposal(100, 0, now_ms=10**9, lag_time_max_ms=LAG) is None
    assert not state.update_partition_state((1,), (1, 2, 3), partition_epoch=9, now_ms=0)
    assert state.isr == (1, 2, 3)
    assert state.update_partition_state((1, 2), (1, 2, 3), partition_epoch=11, now_ms=0)
    # mypy keeps state.isr narrowed to (1, 2, 3) across update_partition_state()
    assert state.isr == (1, 2)  # type: ignore[comparison-overlap]
    assert state.pending_isr is None


def test_fetches_from_strangers_are_not_tracked() -> None:
    state = leader()
    assert state.is_replica(2)
    assert not state.is_replica(1)  # ourselves
    assert not state.is_replica(9)


# ---- the follower's truncation rule --------------------------------------------------------------------------


def cache_with(tmp_path: Path, entries: list[tuple[int, int]]) -> LeaderEpochCache:
    cache = LeaderEpochCache(tmp_path)
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


@pytest.mark.parametrize(
    ("ours", "log_end", "leader_answer", "expected"),
    [
        # Same latest epoch, the leader's copy ends earlier: cut to its end (KIP-101).
        ([(0, 0)], 8, (0, 5), TruncationStep(5, True)),
        # Same epoch, leader ahead: nothing to cut.
        ([(0, 0)], 8, (0, 12), TruncationStep(8, True)),
        # We were a leader in epoch 2 the new leader never saw; it answers epoch 1 ending at 15. Our epoch 1 ends
        # at 20 (where our epoch 2 began): the logs agree up to 15 only.
        ([(0, 0), (1, 10), (2, 20)], 30, (1, 15), TruncationStep(15, True)),
        # We lack the leader's epoch 1 entirely: cut where our epoch 0 ends (epoch 2 begins) and ask again (KIP-279).
        ([(0, 0), (2, 20)], 30, (1, 15), TruncationStep(20, False)),
        # The leader knows no epoch as old as ours: fall back to our high watermark (here 7).
        ([(3, 0)], 9, (-1, -1), TruncationStep(7, True)),
    ],
)
def test_truncation_step(
    tmp_path: Path,
    ours: list[tuple[int, int]],
    log_end: int,
    leader_answer: tuple[int, int],
    expected: TruncationStep,
) -> None:
    cache = cache_with(tmp_path, ours)
    assert truncation_step(leader_answer[0], leader_answer[1], cache, log_end, high_watermark=7) == expected


def test_truncation_converges_in_a_second_round(tmp_path: Path) -> None:
    cache = cache_with(tmp_path, [(0, 0), (2, 20)])
    first = truncation_step(1, 15, cache, 30, high_watermark=0)
    assert first == TruncationStep(20, False)
    cache.truncate_from_end(first.offset)
    # Asked again with epoch 0, the leader says epoch 0 ended at 10 (its epoch 1 began there).
    assert truncation_step(0, 10, cache, 20, high_watermark=0) == TruncationStep(10, True)


# ---- high watermark checkpoint -------------------------------------------------------------------------------


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    assert read_checkpoint(tmp_path) == {}
    marks = {("orders", 0): 10, ("orders", 1): 0, ("a-b.c", 12): 99}
    write_checkpoint(tmp_path, marks)
    assert read_checkpoint(tmp_path) == marks
    lines = (tmp_path / CHECKPOINT_FILE).read_text().splitlines()
    assert lines[:2] == ["0", "3"]
    assert "orders 0 10" in lines


@pytest.mark.parametrize("text", ["", "1\n0\n", "0\n2\nt 0 5\n", "0\n1\nt x 5\n"])
def test_corrupt_checkpoint_is_ignored(tmp_path: Path, text: str) -> None:
    (tmp_path / CHECKPOINT_FILE).write_text(text)
    assert read_checkpoint(tmp_path) == {}


# ---- cluster broker pieces -----------------------------------------------------------------------------------


def test_metadata_url_from_configs() -> None:
    assert (
        metadata_url(BrokerConfig({"metadata.etcd.endpoints": "127.0.0.1:2379"})) == "etcd://127.0.0.1:2379"
    )
    assert (
        metadata_url(BrokerConfig({"metadata.etcd.endpoints": "h1:2379,h2:2379", "cluster.name": "blue"}))
        == "etcd://h1:2379,h2:2379/blue"
    )
    assert metadata_url(BrokerConfig({"metadata.etcd.endpoints": "h1:2379/green"})) == "etcd://h1:2379/green"


def test_cluster_topics_follow_the_snapshot() -> None:
    topic_id = uuid.uuid4()
    record = TopicRecord("orders", topic_id, 3, 2, {"min.insync.replicas": "2"})
    snapshot = ClusterSnapshot(
        revision=5,
        brokers={1: BrokerRegistration(1, "127.0.0.1", 9092, None, 2)},
        controller=None,
        topics={"orders": record},
        topic_revisions={"orders": 3},
        partitions={"orders": {0: PartitionState(1, 0, (1,), (1, 2), 1)}},
        partition_revisions={"orders": {0: 4}},
    )
    topics = ClusterTopics()
    topics.refresh(snapshot)
    orders = topics.get("orders")
    assert orders is not None
    assert (orders.num_partitions, orders.replication_factor, orders.configs) == (
        3,
        2,
        {"min.insync.replicas": "2"},
    )
    assert topics.by_id[topic_id] is orders
    topics.refresh(snapshot)
    assert topics.get("orders") is orders  # unchanged records keep their object
    with pytest.raises(TopicError, match="already exists"):
        topics.check_new("orders")
    topics.check_new("other")


def test_partition_line_names_leader_replicas_isr_and_offline() -> None:
    p = PartitionDescription("t", 2, -1, 7, (1, 2, 3), (2,), (1, 3), 5)
    assert partition_line(p) == (
        "\tTopic: t\tPartition: 2\tLeader: none\tLeaderEpoch: 7\tReplicas: 1,2,3\tIsr: 2\tOffline: 1,3"
    )
    assert p.under_replicated
    assert p.unavailable
