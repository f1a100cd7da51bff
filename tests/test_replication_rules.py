"""The pure rules of replication, by tables: the leader's follower tracking (caught-up time, ISR shrink and expand,
high watermark), the follower's truncation rule (KIP-101 / KIP-279), the high watermark checkpoint, and the small
pieces of the cluster broker that need no processes."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest

from kbroker.cluster.etcd_metadata import metadata_url
from kbroker.common import KafkaError, TopicPartition
from kbroker.config import BrokerConfig
from kbroker.log.leader_epoch import LeaderEpochCache
from kbroker.metadata.image import BrokerRegistration, MetadataImage, PartitionState, TopicMetadata
from kbroker.metadata.topics import check_new_topic
from kbroker.replication.checkpoint import CHECKPOINT_FILE, read_checkpoint, write_checkpoint
from kbroker.replication.fetcher import TruncationStep, truncation_step
from kbroker.replication.partition_leader import UNKNOWN_OFFSET, FollowerState, PartitionLeader
from kbroker.replication.topics_tool import PartitionDescription, partition_line
from protocol.errors import ErrorCode

pytestmark = pytest.mark.timeout(30)

LAG = 5000
LIVE = frozenset({1, 2, 3})


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
    assert state.isr_proposal(100, 100, now_ms=1000 + LAG, lag_time_max_ms=LAG, live_brokers=LIVE) is None
    # Follower 3 stops fetching while the log grows: out after replica.lag.time.max.ms.
    state.record_fetch(2, 150, 150, now_ms=2000)
    assert state.isr_proposal(150, 150, now_ms=1000 + LAG, lag_time_max_ms=LAG, live_brokers=LIVE) is None
    assert state.out_of_sync(150, now_ms=1001 + LAG, lag_time_max_ms=LAG) == [3]
    assert state.isr_proposal(150, 100, now_ms=1001 + LAG, lag_time_max_ms=LAG, live_brokers=LIVE) == (1, 2)
    state.update_partition_state((1, 2), (1, 2, 3), partition_epoch=11, now_ms=7000)
    # Back, but below the high watermark: not yet.
    state.record_fetch(3, 120, 150, now_ms=7000)
    assert state.ready_to_join(150, 7000, LAG, LIVE) == []
    state.record_fetch(3, 150, 150, now_ms=7100)
    assert state.ready_to_join(150, 7100, LAG, LIVE) == [3]
    assert state.isr_proposal(150, 150, now_ms=7100, lag_time_max_ms=LAG, live_brokers=LIVE) == (1, 2, 3)


def test_a_follower_joins_only_past_the_start_of_the_leader_epoch() -> None:
    state = leader(isr=(1,), epoch_start=30)
    state.record_fetch(2, 25, 40, now_ms=1)
    # At the high watermark (20) but short of our epoch's start: it may still hold records we do not have.
    assert state.ready_to_join(20, 1, LAG, LIVE) == []
    state.record_fetch(2, 30, 40, now_ms=2)
    assert state.ready_to_join(20, 2, LAG, LIVE) == [2]


def test_a_follower_that_stopped_fetching_or_died_is_never_proposed_for_the_isr() -> None:
    """Kafka adds a follower to the ISR on its fetch, and never a fenced broker (KIP-841). On an idle partition a
    dead follower's last position still equals the high watermark: it must not be proposed again and again."""
    state = leader(isr=(1, 2), epoch_start=0)
    state.record_fetch(3, 50, 50, now_ms=1000)
    assert state.ready_to_join(50, 1000 + LAG, LAG, LIVE) == [3]
    # Not fetching for longer than replica.lag.time.max.ms: its position is stale.
    assert state.ready_to_join(50, 1001 + LAG, LAG, LIVE) == []
    # Fetching, but its registration lapsed (dead or fenced): not live.
    assert state.ready_to_join(50, 1000, LAG, {1, 2}) == []
    assert state.isr_proposal(50, 50, now_ms=1000, lag_time_max_ms=LAG, live_brokers={1, 2}) is None


def test_one_alter_partition_at_a_time_and_stale_states_ignored() -> None:
    state = leader()
    state.pending_isr = (1, 2)
    assert state.isr_proposal(100, 0, now_ms=10**9, lag_time_max_ms=LAG, live_brokers=LIVE) is None
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
    marks = {TopicPartition("orders", 0): 10, TopicPartition("orders", 1): 0, TopicPartition("a-b.c", 12): 99}
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
    def url(**values: str) -> str:
        return metadata_url(BrokerConfig.from_properties({k.replace("_", "."): v for k, v in values.items()}))

    assert url(metadata_etcd_endpoints="127.0.0.1:2379") == "etcd://127.0.0.1:2379/default"
    assert (
        url(metadata_etcd_endpoints="h1:2379,h2:2379", cluster_name="blue") == "etcd://h1:2379,h2:2379/blue"
    )
    assert url(metadata_etcd_endpoints="h1:2379/green") == "etcd://h1:2379/green"


def test_new_topic_rules_against_an_image() -> None:
    """CreateTopics' checks, the same for a single node and a cluster: against the image of the moment."""
    config = BrokerConfig.from_properties({})
    topic = TopicMetadata("orders", uuid.uuid4(), 3, 2, {"min.insync.replicas": "2"})
    image = MetadataImage(
        revision=5,
        brokers={b: BrokerRegistration(b, "127.0.0.1", 9090 + b, None, 2) for b in (1, 2)},
        controller=None,
        topics={"orders": topic},
        topic_revisions={"orders": 3},
        partitions={"orders": {0: PartitionState(1, 0, (1,), (1, 2), 1)}},
        partition_revisions={"orders": {0: 4}},
    )
    check_new_topic(image, config, "other", 1, 2, {"retention.ms": "1000"})
    refused: list[tuple[MetadataImage, str, int, int, dict[str, str], ErrorCode]] = [
        (image, "orders", 1, 1, {}, ErrorCode.TOPIC_ALREADY_EXISTS),
        # Kafka's metric names turn '.' into '_': the two names would collide.
        (
            dataclasses.replace(image, topics={"ord.ers": topic}),
            "ord_ers",
            1,
            1,
            {},
            ErrorCode.INVALID_TOPIC_EXCEPTION,
        ),
        (image, "bad/name", 1, 1, {}, ErrorCode.INVALID_TOPIC_EXCEPTION),
        (image, "t", 0, 1, {}, ErrorCode.INVALID_PARTITIONS),
        (image, "t", 1, 0, {}, ErrorCode.INVALID_REPLICATION_FACTOR),
        (image, "t", 1, 3, {}, ErrorCode.INVALID_REPLICATION_FACTOR),
        (image, "t", 1, 1, {"no.such.config": "1"}, ErrorCode.INVALID_CONFIG),
        (image, "t", 1, 1, {"retention.ms": "-7"}, ErrorCode.INVALID_CONFIG),
    ]
    for at, name, partitions, rf, configs, code in refused:
        with pytest.raises(KafkaError) as info:
            check_new_topic(at, config, name, partitions, rf, configs)
        assert info.value.code == code, name


def test_partition_line_names_leader_replicas_isr_and_offline() -> None:
    p = PartitionDescription("t", 2, -1, 7, (1, 2, 3), (2,), (1, 3), 5)
    assert partition_line(p) == (
        "\tTopic: t\tPartition: 2\tLeader: none\tLeaderEpoch: 7\tReplicas: 1,2,3\tIsr: 2\tOffline: 1,3"
    )
    assert p.under_replicated
    assert p.unavailable


def test_a_follower_settled_in_a_fetch_session_is_caught_up_as_of_its_latest_fetch() -> None:
    """An incremental fetch session does not record a settled partition on each follower fetch; the first append
    after a long idle time must not find the followers' caught-up time as old as the idleness."""
    state = leader(now=0, epoch_start=20)
    state.record_fetch(2, 100, 100, now_ms=1000)
    state.record_fetch(3, 100, 100, now_ms=1000)
    # Idle for three lag times: both followers keep fetching (their sessions), node 3 stops at 1500 (it died).
    follower_fetch_ms = {2: 1000 + 3 * LAG, 3: 1500}
    state.record_append(100, follower_fetch_ms)  # the log end moves from 100
    now = 1000 + 3 * LAG + 1
    assert state.out_of_sync(101, now_ms=now, lag_time_max_ms=LAG) == [3]
    # Without the session times, node 2 would be as stale as node 3.
    assert state.isr_proposal(101, 100, now_ms=now, lag_time_max_ms=LAG, live_brokers=LIVE) == (1, 2)
