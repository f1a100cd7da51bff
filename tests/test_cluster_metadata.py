"""The pure metadata model: elections, ISR changes, placement, key layout, JSON round trips."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TypedDict

import pytest

from kbroker.cluster.controller import Controller
from kbroker.cluster.metadata import (
    FencedLeaderEpoch,
    IneligibleReplica,
    InvalidRequest,
    InvalidUpdateVersion,
    KeyLayout,
    elect_leader,
    expand_isr,
    initial_partition_state,
    leader_offline,
    place_partition,
    place_replicas,
    remove_from_isr,
    shrink_isr,
)
from kbroker.common import KafkaError
from kbroker.metadata.image import (
    NO_LEADER,
    BrokerRegistration,
    ControllerRecord,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from kbroker.metadata.topics import (
    InvalidPartitions,
    InvalidReplicationFactor,
    InvalidTopic,
    validate_topic_name,
)
from protocol.errors import ErrorCode

pytestmark = pytest.mark.timeout(60)


def state(
    leader: int, isr: tuple[int, ...], replicas: tuple[int, ...] = (1, 2, 3), epoch: int = 5
) -> PartitionState:
    return PartitionState(leader=leader, leader_epoch=epoch, isr=isr, replicas=replicas, partition_epoch=10)


# ---- elections


@pytest.mark.parametrize(
    ("before", "live", "unclean", "leader", "isr"),
    [
        # the leader died: the first replica (assignment order) in the ISR that is live leads
        (state(1, (1, 2, 3)), {2, 3}, False, 2, (2, 3)),
        (state(1, (1, 3, 2)), {2, 3}, False, 2, (3, 2)),
        # a live replica outside the ISR is not eligible for a clean election
        (state(1, (1, 3)), {2, 3}, False, 3, (3,)),
        # the preferred replica wins when it is back in the ISR and live
        (state(2, (2, 1)), {1, 2}, False, 1, (2, 1)),
        # unclean: nobody in the ISR is live, the first live replica takes over alone
        (state(1, (1,)), {2, 3}, True, 2, (2,)),
        # unclean allowed but a clean choice exists: the clean choice is taken
        (state(1, (1, 3)), {2, 3}, True, 3, (3,)),
    ],
)
def test_elect_leader(
    before: PartitionState, live: set[int], unclean: bool, leader: int, isr: tuple[int, ...]
) -> None:
    after = elect_leader(before, live, unclean)
    assert after is not None
    assert after.leader == leader
    assert after.isr == isr
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1
    assert after.replicas == before.replicas


@pytest.mark.parametrize(
    ("before", "live"),
    [
        (state(1, (1,)), {2, 3}),  # the only in-sync replica is dead, unclean not allowed
        (state(1, (1, 2, 3)), set()),  # nobody is live
        (state(1, (1, 2)), {4}),  # a live broker that is no replica
    ],
)
def test_elect_leader_none_eligible(before: PartitionState, live: set[int]) -> None:
    assert elect_leader(before, live, False) is None


def test_elect_leader_unclean_nobody_live() -> None:
    assert elect_leader(state(1, (1,)), set(), True) is None


def test_leader_offline_keeps_last_isr_and_fences() -> None:
    before = state(1, (1,))
    after = leader_offline(before)
    assert after.leader == NO_LEADER
    assert after.isr == (1,)
    assert after.leader_epoch == 6
    assert after.partition_epoch == 11
    # when broker 1 returns, it can be elected cleanly
    back = elect_leader(after, {1, 2, 3}, False)
    assert back is not None
    assert back.leader == 1
    assert back.leader_epoch == 7


def test_leader_offline_drops_brokers_back_on_an_empty_disk() -> None:
    before = state(1, (1, 2))
    after = leader_offline(before, lost={2})
    assert (after.leader, after.isr, after.leader_epoch) == (NO_LEADER, (1,), 6)
    again = leader_offline(after, lost={1})
    assert (again.isr, again.leader_epoch) == ((), 6)  # already offline: an ISR change only
    assert leader_offline(again, lost={1}) is again  # nothing to do: no write


def image_of(brokers: dict[int, BrokerRegistration], state: PartitionState, revision: int) -> MetadataImage:
    topic = TopicMetadata("t", uuid.uuid4(), 1, 3)
    return MetadataImage(
        revision=revision + 10,
        brokers=brokers,
        controller=None,
        topics={"t": topic},
        topic_revisions={"t": 1},
        partitions={"t": {0: state}},
        partition_revisions={"t": {0: revision}},
    )


@pytest.mark.parametrize(
    ("new_log_dir", "leader", "isr"),
    [(False, 1, (1,)), (True, NO_LEADER, (2,))],
    ids=["restarted with its log: elected", "back on an empty disk: not elected, out of the ISR"],
)
def test_controller_never_elects_an_isr_member_back_on_an_empty_disk(
    new_log_dir: bool, leader: int, isr: tuple[int, ...]
) -> None:
    """The leader (2) is dead; ISR member 1 restarted since the state was written (broker epoch 100 > revision 50).
    With its log it is elected (the fallback to restarted ISR members); on a new log directory it is not, and it
    leaves the ISR so that no later state can pass it off as in sync."""
    before = PartitionState(2, 5, (2, 1), (2, 1, 3), 10)
    brokers = {1: BrokerRegistration(1, "h", 1, broker_epoch=100, new_log_dir=new_log_dir)}
    after = Controller.next_state(image_of(brokers, before, 50), before, 50, unclean=False)
    assert after is not None
    assert (after.leader, after.isr) == (leader, isr)
    # Unclean election may still take it (the topic accepted losing data).
    unclean = Controller.next_state(image_of(brokers, before, 50), before, 50, unclean=True)
    assert unclean is not None
    assert unclean.leader == 1


def test_remove_from_isr() -> None:
    before = state(1, (1, 2, 3))
    after = remove_from_isr(before, {3})
    assert after.isr == (1, 2)
    assert after.leader_epoch == before.leader_epoch  # an ISR change does not fence the leader
    assert after.partition_epoch == 11
    assert remove_from_isr(before, {4}) is before  # nothing to do: no write
    assert remove_from_isr(before, {1}) is before  # the leader is handled by an election
    offline = leader_offline(state(1, (1, 2)))
    assert remove_from_isr(offline, {2}) is offline


# ---- AlterPartition (leader-proposed ISR changes)


def test_shrink_isr() -> None:
    before = state(1, (1, 2, 3))
    after = shrink_isr(before, leader_id=1, leader_epoch=5, partition_epoch=10, out_of_sync={3})
    assert after.isr == (1, 2)
    assert after.partition_epoch == 11
    assert after.leader_epoch == 5


def test_expand_isr() -> None:
    before = state(1, (1, 2))
    after = expand_isr(
        before, leader_id=1, leader_epoch=5, partition_epoch=10, caught_up=3, live_brokers={1, 2, 3}
    )
    assert after.isr == (1, 2, 3)
    assert after.partition_epoch == 11
    same = expand_isr(
        before, leader_id=1, leader_epoch=5, partition_epoch=10, caught_up=2, live_brokers={1, 2}
    )
    assert same is before


class ExpandIsrArgs(TypedDict):
    leader_id: int
    leader_epoch: int
    partition_epoch: int
    caught_up: int
    live_brokers: set[int]


class ExpandIsrOverrides(TypedDict, total=False):
    leader_id: int
    leader_epoch: int
    partition_epoch: int
    caught_up: int
    live_brokers: set[int]


@pytest.mark.parametrize(
    ("kwargs", "error", "code"),
    [
        ({"leader_epoch": 4}, FencedLeaderEpoch, ErrorCode.FENCED_LEADER_EPOCH),
        ({"leader_epoch": 6}, FencedLeaderEpoch, ErrorCode.FENCED_LEADER_EPOCH),
        ({"leader_id": 2}, InvalidRequest, ErrorCode.INVALID_REQUEST),
        ({"partition_epoch": 9}, InvalidUpdateVersion, ErrorCode.INVALID_UPDATE_VERSION),
        ({"caught_up": 4, "live_brokers": {1, 2, 4}}, InvalidRequest, ErrorCode.INVALID_REQUEST),
        ({"caught_up": 3, "live_brokers": {1, 2}}, IneligibleReplica, ErrorCode.INELIGIBLE_REPLICA),
    ],
)
def test_expand_isr_refused(kwargs: ExpandIsrOverrides, error: type[KafkaError], code: ErrorCode) -> None:
    args: ExpandIsrArgs = {
        "leader_id": 1,
        "leader_epoch": 5,
        "partition_epoch": 10,
        "caught_up": 3,
        "live_brokers": {1, 2, 3},
        **kwargs,
    }
    with pytest.raises(error) as info:
        expand_isr(state(1, (1, 2)), **args)
    assert info.value.code == code


def test_shrink_isr_cannot_drop_the_leader() -> None:
    with pytest.raises(InvalidRequest):
        shrink_isr(state(1, (1, 2)), leader_id=1, leader_epoch=5, partition_epoch=10, out_of_sync={1})


def test_shrink_isr_by_stale_partition_epoch() -> None:
    with pytest.raises(InvalidUpdateVersion):
        shrink_isr(state(1, (1, 2)), leader_id=1, leader_epoch=5, partition_epoch=9, out_of_sync={2})


# ---- placement


def test_placement_respects_replication_factor_and_prefers_first() -> None:
    brokers = [1, 2, 3, 4, 5]
    assignment = place_replicas("orders", 50, 3, brokers)
    assert sorted(assignment) == list(range(50))
    for replicas in assignment.values():
        assert len(replicas) == 3
        assert len(set(replicas)) == 3
        assert set(replicas) <= set(brokers)
    # deterministic: any node computes the same thing, whatever the order of its broker list
    assert place_replicas("orders", 50, 3, list(reversed(brokers))) == assignment
    # initial state: the first replica leads
    assert initial_partition_state(assignment[0]).leader == assignment[0][0]


def test_placement_invalid() -> None:
    with pytest.raises(InvalidReplicationFactor) as info:
        place_replicas("t", 3, 4, [1, 2, 3])
    assert info.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    with pytest.raises(InvalidReplicationFactor):
        place_replicas("t", 3, 0, [1, 2, 3])
    with pytest.raises(InvalidPartitions):
        place_replicas("t", 0, 1, [1, 2, 3])


def test_placement_is_balanced() -> None:
    brokers = list(range(1, 7))
    leaders: Counter[int] = Counter()
    replicas: Counter[int] = Counter()
    for topic in ("a", "b", "c", "d"):
        for assigned in place_replicas(topic, 300, 3, brokers).values():
            leaders[assigned[0]] += 1
            replicas.update(assigned)
    # 1200 partitions over 6 brokers: 200 leaders and 600 replicas each on average
    assert all(140 <= leaders[b] <= 260 for b in brokers), leaders
    assert all(500 <= replicas[b] <= 700 for b in brokers), replicas


def test_placement_is_stable_when_a_broker_is_added() -> None:
    before = place_replicas("events", 1000, 3, [1, 2, 3, 4, 5])
    after = place_replicas("events", 1000, 3, [1, 2, 3, 4, 5, 6])
    moved = 0
    leaders_moved = 0
    for p in before:
        if before[p] != after[p]:
            moved += 1
            # only the newcomer displaces anyone; the survivors keep their relative order
            assert 6 in after[p]
            survivors = [b for b in after[p] if b != 6]
            assert survivors == [b for b in before[p] if b in survivors]
        if before[p][0] != after[p][0]:
            leaders_moved += 1
            assert after[p][0] == 6
    # expected: 3/6 of partitions get the new broker somewhere, 1/6 get it as leader
    assert moved < 1000 * 3 / 6 * 1.2
    assert leaders_moved < 1000 / 6 * 1.3


def test_placement_is_stable_when_a_broker_is_removed() -> None:
    before = place_replicas("events", 500, 2, [1, 2, 3, 4, 5])
    after = place_replicas("events", 500, 2, [1, 2, 3, 4])
    for p in before:
        if 5 not in before[p]:
            assert after[p] == before[p]


def test_placement_spreads_racks() -> None:
    brokers = [
        BrokerRegistration(1, "h", 1, "r1"),
        BrokerRegistration(2, "h", 2, "r1"),
        BrokerRegistration(3, "h", 3, "r2"),
        BrokerRegistration(4, "h", 4, "r2"),
        BrokerRegistration(5, "h", 5, "r3"),
    ]
    rack = {b.node_id: b.rack for b in brokers}
    for p in range(100):
        replicas = place_partition("racked", p, 3, brokers)
        assert len({rack[b] for b in replicas}) == 3


# ---- layout and JSON


def test_key_layout() -> None:
    keys = KeyLayout("c1")
    assert keys.broker(3) == b"/kbroker/c1/brokers/3"
    assert keys.controller == b"/kbroker/c1/controller"
    assert keys.topic("a.b") == b"/kbroker/c1/topics/a.b"
    assert keys.partition("a.b", 12) == b"/kbroker/c1/partitions/a.b/12"
    assert keys.parse(keys.broker(3)) == ("broker", 3)
    assert keys.parse(keys.controller) == ("controller", None)
    assert keys.parse(keys.topic("t")) == ("topic", "t")
    assert keys.parse(keys.partition("t", 7)) == ("partition", ("t", 7))
    assert keys.parse(b"/kbroker/other/brokers/3") is None
    assert keys.parse(b"/kbroker/c1/brokers/x") is None
    assert KeyLayout("/nested/c/").root == b"/kbroker/nested/c/"


def test_json_round_trips() -> None:
    broker = BrokerRegistration(2, "127.0.0.1", 9092, None, 17)
    assert BrokerRegistration.from_json(broker.to_json(), 17) == broker
    assert b"new_log_dir" not in broker.to_json()
    fresh = BrokerRegistration(2, "127.0.0.1", 9092, None, 17, new_log_dir=True)
    assert BrokerRegistration.from_json(fresh.to_json(), 17) == fresh
    topic = TopicMetadata("t", uuid.uuid4(), 3, 2, {"unclean.leader.election.enable": "true"})
    assert TopicMetadata.from_json("t", topic.to_json()) == topic
    assert topic.unclean_leader_election()
    assert not TopicMetadata("t", uuid.uuid4(), 1, 1).unclean_leader_election()
    partition = PartitionState(1, 4, (1, 2), (1, 2, 3), 9)
    assert PartitionState.from_json(partition.to_json()) == partition
    assert ControllerRecord.from_json(ControllerRecord(3, 99).to_json(), 99) == ControllerRecord(3, 99)


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a b", "x" * 250])
def test_invalid_topic_names(name: str) -> None:
    with pytest.raises(InvalidTopic):
        validate_topic_name(name)


def test_valid_topic_name() -> None:
    validate_topic_name("orders.v1_-X")
