"""The pure rules behind the cluster's admin changes (kbroker/cluster/metadata.py, controller.py): elections asked
for, reassignments (KIP-455), a broker in controlled shutdown, the preferred-leader rebalance, explicit placement,
and the stored forms of the new fields."""

from __future__ import annotations

import uuid

import pytest

from kbroker.cluster.controller import Controller
from kbroker.cluster.metadata import (
    ElectionNotNeeded,
    EligibleLeadersNotAvailable,
    KeyLayout,
    NoReassignmentInProgress,
    PreferredLeaderNotAvailable,
    cancel_reassignment,
    complete_reassignment,
    elect_preferred,
    elect_unclean,
    reassign,
)
from kbroker.cluster.store import MetadataStore
from kbroker.common import KafkaError
from kbroker.metadata.image import (
    EMPTY_IMAGE,
    NO_LEADER,
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from kbroker.metadata.topics import InvalidReplicaAssignment, check_new_partitions, validate_replicas
from protocol.errors import ErrorCode

ALL = {1, 2, 3, 4}


def state(
    leader: int, isr: tuple[int, ...], replicas: tuple[int, ...] = (1, 2, 3), **more: tuple[int, ...]
) -> PartitionState:
    return PartitionState(leader, 5, isr, replicas, 9, **more)


# ---- ElectLeaders ----------------------------------------------------------------------------------------------


def test_preferred_election_moves_leadership_to_the_first_replica() -> None:
    elected = elect_preferred(state(2, (1, 2, 3)), ALL)
    assert (elected.leader, elected.leader_epoch, elected.isr, elected.partition_epoch) == (
        1,
        6,
        (1, 2, 3),
        10,
    )


@pytest.mark.parametrize(
    ("before", "eligible", "error"),
    [
        (state(1, (1, 2, 3)), ALL, ElectionNotNeeded),
        (state(2, (2, 3)), ALL, PreferredLeaderNotAvailable),  # not in the ISR
        (state(2, (1, 2, 3)), {2, 3}, PreferredLeaderNotAvailable),  # not live (or shutting down)
    ],
)
def test_preferred_election_refused(
    before: PartitionState, eligible: set[int], error: type[KafkaError]
) -> None:
    with pytest.raises(error):
        elect_preferred(before, eligible)


def test_unclean_election() -> None:
    offline = state(NO_LEADER, (1,))
    # An in-sync replica first (in replica order), if one is live.
    assert elect_unclean(state(NO_LEADER, (3, 2)), {1, 2, 3}, {1, 2, 3}).leader == 2
    # Else any live replica, alone in the ISR.
    elected = elect_unclean(offline, {3}, {3})
    assert (elected.leader, elected.isr) == (3, (3,))
    with pytest.raises(ElectionNotNeeded):
        elect_unclean(state(2, (2,)), {2, 3}, {2, 3})
    with pytest.raises(EligibleLeadersNotAvailable):
        elect_unclean(offline, set(), set())


# ---- reassignments ----------------------------------------------------------------------------------------------


def test_a_reassignment_adds_then_drops() -> None:
    started = reassign(state(1, (1, 2, 3)), [4, 2, 3], ALL)
    assert (started.replicas, started.adding_replicas, started.removing_replicas) == (
        (4, 2, 3, 1),
        (4,),
        (1,),
    )
    # (as Kafka's merged replica list: the target first, so cancelling keeps the target's order of what stays)
    assert (started.leader, started.isr, started.target_replicas, started.original_replicas) == (
        1,
        (1, 2, 3),
        (4, 2, 3),
        (2, 3, 1),
    )
    assert complete_reassignment(started, ALL) is None, "replica 4 is not in sync yet"
    caught_up = PartitionState(1, 5, (1, 2, 3, 4), started.replicas, 11, (4,), (1,))
    done = complete_reassignment(caught_up, ALL)
    assert done is not None
    # The dropped leader hands over to the first target replica in the ISR.
    assert (done.replicas, done.isr, done.leader, done.leader_epoch, done.reassigning) == (
        (4, 2, 3),
        (2, 3, 4),
        4,
        6,
        False,
    )


def test_a_reassignment_the_isr_covers_completes_at_once() -> None:
    dropped = reassign(state(1, (1, 2, 3)), [2, 3], ALL)
    assert (dropped.replicas, dropped.isr, dropped.leader, dropped.reassigning) == ((2, 3), (2, 3), 2, False)
    reordered = reassign(state(1, (1, 2, 3)), [3, 2, 1], ALL)
    assert (reordered.replicas, reordered.leader, reordered.reassigning) == ((3, 2, 1), 1, False)


def test_a_reassignment_replaces_the_one_in_progress_and_can_be_cancelled() -> None:
    first = reassign(state(1, (1, 2, 3)), [4, 2, 3], ALL)
    second = reassign(first, [1, 2, 4], ALL)
    assert (second.replicas, second.adding_replicas, second.removing_replicas) == ((1, 2, 4, 3), (4,), (3,))
    back = cancel_reassignment(second, ALL)
    assert (back.replicas, back.isr, back.leader, back.reassigning) == ((1, 2, 3), (1, 2, 3), 1, False)
    cancelled = cancel_reassignment(first, ALL)
    assert (sorted(cancelled.replicas), cancelled.leader, cancelled.reassigning) == ([1, 2, 3], 1, False)
    with pytest.raises(NoReassignmentInProgress):
        cancel_reassignment(back, ALL)


@pytest.mark.parametrize("replicas", [[], [1, 1], [1, 9]])
def test_manual_assignments_are_checked(replicas: list[int]) -> None:
    with pytest.raises(InvalidReplicaAssignment):
        validate_replicas(replicas, ALL, "partition 0")


def test_new_partitions_are_checked() -> None:
    image = _image(
        {1: False, 2: False}, {"t": ((1, 2), 1)}, topics={"t": TopicMetadata("t", uuid.uuid4(), 1, 2)}
    )
    assert check_new_partitions(image, "t", 3, [[1, 2], [2, 1]]) == {1: (1, 2), 2: (2, 1)}
    assert check_new_partitions(image, "t", 2, None) == {}
    for total, assignments, code in (
        (1, None, ErrorCode.INVALID_PARTITIONS),
        (3, [[1, 2]], ErrorCode.INVALID_REPLICA_ASSIGNMENT),
        (2, [[1]], ErrorCode.INVALID_REPLICA_ASSIGNMENT),
        (2, [[1, 7]], ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ):
        with pytest.raises(KafkaError) as raised:
            check_new_partitions(image, "t", total, assignments)
        assert raised.value.code == code
    with pytest.raises(KafkaError) as unknown:
        check_new_partitions(image, "u", 2, None)
    assert unknown.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


# ---- the controller: controlled shutdown, rebalance, explicit placement --------------------------------------------


def _image(
    brokers: dict[int, bool],
    partitions: dict[str, tuple[tuple[int, ...], int]],
    *,
    states: dict[str, PartitionState] | None = None,
    topics: dict[str, TopicMetadata] | None = None,
) -> MetadataImage:
    """Brokers registered at revision 1 (True: in controlled shutdown); partition states written at revision 10."""
    topics = topics or {
        name: TopicMetadata(name, uuid.uuid4(), 1, len(replicas))
        for name, (replicas, _) in partitions.items()
    }
    states = states or {
        name: state(leader, replicas, replicas) for name, (replicas, leader) in partitions.items()
    }
    return MetadataImage(
        revision=20,
        brokers={
            b: BrokerRegistration(b, "h", 9000 + b, None, 1, in_controlled_shutdown=stopping)
            for b, stopping in brokers.items()
        },
        controller=None,
        topics=topics,
        topic_revisions=dict.fromkeys(topics, 2),
        partitions={name: {0: s} for name, s in states.items()},
        partition_revisions={name: {0: 10} for name in states},
    )


def _next(image: MetadataImage, name: str) -> PartitionState | None:
    return Controller.next_state(image, image.partitions[name][0], 10, False)


def test_controlled_shutdown_moves_leaderships_and_leaves_the_isrs() -> None:
    image = _image({1: True, 2: False, 3: False}, {"led": ((1, 2, 3), 1), "followed": ((2, 1, 3), 2)})
    moved = _next(image, "led")
    assert moved is not None
    assert (moved.leader, moved.leader_epoch, moved.isr) == (2, 6, (2, 3))
    shrunk = _next(image, "followed")
    assert shrunk is not None
    assert (shrunk.leader, shrunk.leader_epoch, shrunk.isr) == (2, 5, (2, 3))


def test_controlled_shutdown_keeps_a_leadership_no_one_else_can_take() -> None:
    image = _image({1: True, 2: False}, {"alone": ((1,), 1)})
    assert _next(image, "alone") in (None, image.partitions["alone"][0])


def test_a_stopping_broker_may_not_join_an_isr() -> None:
    image = _image({1: False, 2: True}, {"t": ((1, 2), 1)})
    assert image.eligible_brokers() == {1}


def test_rebalance_elects_preferred_leaders_in_sync_and_eligible() -> None:
    image = _image(
        {1: False, 2: False, 3: True},
        {},
        states={
            "back-to-1": state(2, (1, 2, 3)),
            "preferred-out-of-sync": state(2, (2, 3)),
            "preferred-stopping": state(1, (1, 2, 3), (3, 1, 2)),
            "already": state(1, (1, 2, 3)),
        },
        topics={
            n: TopicMetadata(n, uuid.uuid4(), 1, 3)
            for n in ("back-to-1", "preferred-out-of-sync", "preferred-stopping", "already")
        },
    )
    store = MetadataStore.__new__(MetadataStore)
    writes = list(Controller(store, 1).rebalance_due(image))
    assert [(w.topic, w.state.leader) for w in writes] == [("back-to-1", 1)]


def test_explicit_assignments_place_new_partitions() -> None:
    topic = TopicMetadata("t", uuid.uuid4(), 2, 2, assignments={0: (3, 1), 1: (2, 3)})
    image = _image({1: False, 2: False, 3: False}, {}, states={}, topics={"t": topic})
    store = MetadataStore.__new__(MetadataStore)
    writes = {w.partition: w.state for w in Controller(store, 1).changes_due(image)}
    assert {p: (s.leader, s.replicas) for p, s in writes.items()} == {0: (3, (3, 1)), 1: (2, (2, 3))}


# ---- stored forms ---------------------------------------------------------------------------------------------------


def test_json_round_trips_of_the_new_fields() -> None:
    reassigning = PartitionState(1, 2, (1, 2), (4, 2, 1), 3, (4,), (1,))
    assert PartitionState.from_json(reassigning.to_json()) == reassigning
    assert b"adding" not in state(1, (1,)).to_json(), "an idle partition's stored form is unchanged"
    topic = TopicMetadata("t", uuid.uuid4(), 2, 2, {"retention.ms": "1"}, {0: (1, 2), 1: (2, 1)})
    assert TopicMetadata.from_json("t", topic.to_json()) == topic
    stopping = BrokerRegistration(1, "h", 1, None, 7, {"EXTERNAL": ("x", 2)}, in_controlled_shutdown=True)
    assert BrokerRegistration.from_json(stopping.to_json(), 7) == stopping
    assert stopping.incarnation == BrokerRegistration(1, "h", 1, None, 7, {"EXTERNAL": ("x", 2)}).incarnation
    keys = KeyLayout("c")
    assert keys.parse(keys.broker_configs("")) == ("broker_configs", "")
    assert keys.parse(keys.broker_configs("3")) == ("broker_configs", "3")
    assert EMPTY_IMAGE.dynamic_broker_configs(1) == {}
