"""Random sequences of requests and clock ticks against one group: the state machine's invariants always hold,
every parked request is answered exactly once, and a group left alone drains to Empty.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator, Outcome
from kbroker.coordinator.group import (
    Group,
    GroupConfig,
    GroupState,
    JoinRequest,
    JoinResult,
    MemberIdentity,
    Pending,
    SyncRequest,
    SyncResult,
)
from kbroker.coordinator.offsets import OffsetCommitEntry
from protocol.errors import ErrorCode

PROTOCOLS = [
    (("range", b"a"),),
    (("range", b"b"), ("roundrobin", b"b")),
    (("roundrobin", b"c"), ("range", b"c")),
]
CLIENTS = ["c0", "c1", "c2", "c3"]
INSTANCES = [None, None, "i0", "i1"]

op = st.one_of(
    st.tuples(st.just("join_new"), st.integers(0, 3), st.sampled_from([3, 5, 9]), st.integers(0, 2)),
    st.tuples(st.just("join_flow"), st.integers(0, 3), st.sampled_from([5, 9]), st.integers(0, 2)),
    st.tuples(st.just("join_flow"), st.integers(0, 3), st.sampled_from([5, 9]), st.integers(0, 2)),
    st.tuples(st.just("everyone_syncs"), st.integers(-1, 0)),
    st.tuples(st.just("everyone_syncs"), st.just(0)),
    st.tuples(st.just("rejoin"), st.integers(0, 7), st.integers(0, 2)),
    st.tuples(st.just("sync"), st.integers(0, 7), st.integers(-1, 1)),
    st.tuples(st.just("heartbeat"), st.integers(0, 7), st.integers(-1, 1)),
    st.tuples(st.just("commit"), st.integers(0, 7), st.integers(-1, 1)),
    st.tuples(st.just("leave"), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("tick"), st.sampled_from([0, 1, 999, 3000, 10_000, 30_001])),
)


@dataclass
class Model:
    coord: GroupCoordinator
    now: int = 0
    known: list[tuple[str, str | None]] = field(
        default_factory=list
    )  # (member id, instance id) seen in answers
    parked: set[int] = field(default_factory=set)
    answered: set[int] = field(default_factory=set)
    last_generation: int = 0

    def take(self, outcome: Outcome[object]) -> None:
        for c in outcome.completions:
            assert c.ticket in self.parked, f"ticket {c.ticket} answered twice or never parked"
            self.parked.discard(c.ticket)
            self.answered.add(c.ticket)
            self.learn(c.result)
        response = outcome.response
        if isinstance(response, Pending):
            self.parked.add(response.ticket)
        elif isinstance(response, JoinResult | SyncResult):
            self.learn(response)

    def learn(self, result: object) -> None:
        if isinstance(result, JoinResult) and result.member_id:
            instance = None
            group = self.coord.groups.get("g")
            if group is not None and result.member_id in group.members:
                instance = group.members[result.member_id].group_instance_id
            if (result.member_id, instance) not in self.known:
                self.known.append((result.member_id, instance))

    def member(self, i: int) -> tuple[str, str | None]:
        """Indexes 0-3 pick a current member, 4-7 any member id ever seen (maybe long gone)."""
        group = self.coord.groups.get("g")
        current = [(mem.member_id, mem.group_instance_id) for mem in group.members.values()] if group else []
        if i < 4 and current:
            return current[i % len(current)]
        return self.known[i % len(self.known)] if self.known else ("nobody", None)

    def generation(self, offset: int) -> int:
        group = self.coord.groups.get("g")
        return (group.generation_id if group else 0) + offset


def join_request(member_id: str, client: int, version: int, protocols: int) -> JoinRequest:
    return JoinRequest(
        member_id=member_id,
        group_instance_id=INSTANCES[client] if member_id == "" else None,
        client_id=CLIENTS[client],
        client_host="/h",
        session_timeout_ms=6000 + 1000 * client,
        rebalance_timeout_ms=10_000 + 5000 * client,
        protocol_type="consumer",
        protocols=PROTOCOLS[protocols],
        api_version=version,
    )


def check_invariants(m: Model) -> None:
    group: Group | None = m.coord.groups.get("g")
    if group is None:
        assert not m.parked
        return
    members = group.members
    if group.state is GroupState.EMPTY:
        assert not members
    assert (group.leader_id is None) == (not members)
    assert group.leader_id is None or group.leader_id in members
    for instance, member_id in group.static_members.items():
        assert members[member_id].group_instance_id == instance
    assert all(m.group_instance_id is None or group.static_members[m.group_instance_id] == m.member_id
               for m in members.values())  # fmt: skip
    assert group.pending_sync_members <= set(members)
    if group.state is GroupState.PREPARING_REBALANCE:
        assert group.join_deadline_ms is not None, "a rebalance with no deadline could wait forever"
    if group.state is GroupState.COMPLETING_REBALANCE:
        assert group.sync_deadline_ms is not None, "waiting for SyncGroup with no deadline"
    for member in members.values():
        # Every member can still go: either its session runs or a rebalance/sync timer will answer it.
        assert member.heartbeat_deadline_ms is not None or member.awaiting_join or member.awaiting_sync
        if member.awaiting_join:
            assert group.state is GroupState.PREPARING_REBALANCE
        if member.awaiting_sync:
            assert group.state is GroupState.COMPLETING_REBALANCE
    held = {t for mem in members.values() for t in (mem.join_ticket, mem.sync_ticket) if t is not None}
    assert held == m.parked, "every parked request is held by exactly its member"
    assert group.generation_id >= m.last_generation
    m.last_generation = group.generation_id


def apply(m: Model, step: tuple[object, ...]) -> None:
    kind = step[0]
    coord = m.coord
    if kind == "join_new":
        _, client, version, protocols = step
        assert isinstance(client, int)
        assert isinstance(version, int)
        assert isinstance(protocols, int)
        m.take(coord.join_group("g", join_request("", client, version, protocols), m.now))
    elif kind == "join_flow":
        # What a v4+ client does: JoinGroup, then again with the member id of MEMBER_ID_REQUIRED.
        _, client, version, protocols = step
        assert isinstance(client, int)
        assert isinstance(version, int)
        assert isinstance(protocols, int)
        out = coord.join_group("g", join_request("", client, version, protocols), m.now)
        m.take(out)
        first = out.response
        if isinstance(first, JoinResult) and first.error is ErrorCode.MEMBER_ID_REQUIRED:
            m.take(coord.join_group("g", join_request(first.member_id, client, version, protocols), m.now))
    elif kind == "everyone_syncs":
        # Each member sends SyncGroup, the leader last, with one assignment per member.
        _, offset = step
        assert isinstance(offset, int)
        group = coord.groups.get("g")
        if group is not None:
            leader = group.leader_id
            order = sorted(group.members.values(), key=lambda mem: mem.member_id == leader)
            assignments = tuple((mid, mid.encode()) for mid in group.members)
            for mem in order:
                sync = SyncRequest(
                    mem.member_id, mem.group_instance_id, m.generation(offset), None, None, assignments
                )
                m.take(coord.sync_group("g", sync, m.now))
    elif kind == "rejoin":
        _, i, protocols = step
        assert isinstance(i, int)
        assert isinstance(protocols, int)
        member_id, instance = m.member(i)
        rejoin = replace(join_request(member_id, 0, 5, protocols), group_instance_id=instance)
        m.take(coord.join_group("g", rejoin, m.now))
    elif kind == "sync":
        _, i, offset = step
        assert isinstance(i, int)
        assert isinstance(offset, int)
        member_id, instance = m.member(i)
        group = coord.groups.get("g")
        assignments = tuple((mid, mid.encode()) for mid in (group.members if group else ()))
        sync = SyncRequest(member_id, instance, m.generation(offset), None, None, assignments)
        m.take(coord.sync_group("g", sync, m.now))
    elif kind == "heartbeat":
        _, i, offset = step
        assert isinstance(i, int)
        assert isinstance(offset, int)
        member_id, instance = m.member(i)
        m.take(coord.heartbeat("g", member_id, instance, m.generation(offset), m.now))
    elif kind == "commit":
        _, i, offset = step
        assert isinstance(i, int)
        assert isinstance(offset, int)
        member_id, instance = m.member(i)
        entries = [OffsetCommitEntry("t", 0, m.now)]
        m.take(coord.commit_offsets("g", member_id, instance, m.generation(offset), entries, m.now))
    elif kind == "leave":
        _, i, by_instance = step
        assert isinstance(i, int)
        member_id, instance = m.member(i)
        identity = (
            MemberIdentity("", instance) if by_instance and instance else MemberIdentity(member_id, instance)
        )
        m.take(coord.leave_group("g", [identity], m.now))
    else:
        _, dt = step
        assert isinstance(dt, int)
        m.now += dt
        m.take(coord.on_tick(m.now))


@settings(max_examples=500, deadline=None)
@given(st.lists(op, max_size=50), st.sampled_from([0, 3000]), st.sampled_from([2, 100]))
def test_random_sequences_keep_invariants_and_drain(
    steps: list[tuple[object, ...]], delay: int, max_size: int
) -> None:
    counter = itertools.count(1)
    config = CoordinatorConfig(
        group=GroupConfig(group_initial_rebalance_delay_ms=delay, group_max_size=max_size)
    )
    m = Model(GroupCoordinator(config, new_member_id=lambda p: f"{p}-{next(counter)}"))
    for step in steps:
        apply(m, step)
        check_invariants(m)
    # Left alone, every parked request is answered and every member's session ends.
    for _ in range(10):
        m.now += 400_000
        m.take(m.coord.on_tick(m.now))
        check_invariants(m)
    assert not m.parked
    group = m.coord.groups.get("g")
    assert group is None or (group.state is GroupState.EMPTY and not group.members)
