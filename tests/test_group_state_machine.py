"""The classic group protocol state machine, driven synchronously with explicit times (no sleeping, no trio)."""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field, replace

import pytest

from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator, Outcome
from kbroker.coordinator.group import (
    Completion,
    Group,
    GroupConfig,
    GroupState,
    JoinRequest,
    JoinResult,
    MemberIdentity,
    Pending,
    SyncRequest,
    SyncResult,
    subscribed_topics_of,
)
from kbroker.coordinator.offsets import OffsetCommitEntry
from kbroker.coordinator.records import GroupMetadataKey, decode_group_metadata_value, decode_key
from protocol.errors import ErrorCode

E = ErrorCode
GROUP = "g"
SESSION = 10_000
REBALANCE = 30_000


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocol v0 subscription: int16 version, topics, null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


JAVA = (("range", subscription("t")), ("cooperative-sticky", subscription("t")))
LIBRDKAFKA = (("range", subscription("t")), ("roundrobin", subscription("t")))


def req(
    member_id: str = "",
    *,
    instance: str | None = None,
    client: str = "c",
    protocols: tuple[tuple[str, bytes], ...] = (("range", b"meta"),),
    session: int = SESSION,
    rebalance: int = REBALANCE,
    ptype: str = "consumer",
    version: int = 5,
) -> JoinRequest:
    return JoinRequest(
        member_id=member_id,
        group_instance_id=instance,
        client_id=client,
        client_host="/127.0.0.1",
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance,
        protocol_type=ptype,
        protocols=protocols,
        api_version=version,
    )


@dataclass
class H:
    """A coordinator with deterministic member ids and a record of every completion and record it produced."""

    delay: int = 0
    max_size: int = 2_147_483_647
    coord: GroupCoordinator = field(init=False)
    done: dict[int, JoinResult | SyncResult] = field(default_factory=dict)
    records: list[tuple[int, bytes, bytes | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        counter = itertools.count(1)
        config = CoordinatorConfig(
            group=GroupConfig(group_initial_rebalance_delay_ms=self.delay, group_max_size=self.max_size)
        )
        self.coord = GroupCoordinator(config, new_member_id=lambda prefix: f"{prefix}-{next(counter)}")

    def take(self, outcome: Outcome[object]) -> None:
        for c in outcome.completions:
            assert c.ticket not in self.done
            self.done[c.ticket] = c.result
        for partition, recs in outcome.records.items():
            self.records.extend((partition, k, v) for k, v in recs)

    def join(self, request: JoinRequest, now: int = 0, group: str = GROUP) -> JoinResult | Pending:
        out = self.coord.join_group(group, request, now)
        self.take(out)
        return out.response

    def join_id(self, request: JoinRequest, now: int = 0) -> str:
        """First JoinGroup v4+ of a dynamic member: returns the id handed out with MEMBER_ID_REQUIRED."""
        result = self.join(request, now)
        assert isinstance(result, JoinResult)
        assert result.error is E.MEMBER_ID_REQUIRED
        return result.member_id

    def sync(
        self,
        member: str,
        gen: int,
        now: int = 0,
        assignments: tuple[tuple[str, bytes], ...] = (),
        *,
        instance: str | None = None,
        ptype: str | None = None,
        pname: str | None = None,
    ) -> SyncResult | Pending:
        request = SyncRequest(
            member_id=member,
            group_instance_id=instance,
            generation_id=gen,
            protocol_type=ptype,
            protocol_name=pname,
            assignments=assignments,
        )
        out = self.coord.sync_group(GROUP, request, now)
        self.take(out)
        return out.response

    def heartbeat(self, member: str, gen: int, now: int = 0, instance: str | None = None) -> ErrorCode:
        return self.coord.heartbeat(GROUP, member, instance, gen, now).response

    def leave(self, *members: MemberIdentity, now: int = 0) -> tuple[ErrorCode, tuple[ErrorCode, ...]]:
        out = self.coord.leave_group(GROUP, members, now)
        self.take(out)
        return out.response.error, tuple(m.error for m in out.response.members)

    def commit(self, member: str, gen: int, now: int = 0, instance: str | None = None) -> ErrorCode:
        out = self.coord.commit_offsets(GROUP, member, instance, gen, [OffsetCommitEntry("t", 0, 42)], now)
        self.take(out)
        return out.response[0].error

    def tick(self, now: int) -> None:
        """Fire timers until nothing more is due at `now` (a zero delay may need a second round)."""
        for _ in range(20):
            deadline = self.coord.next_deadline()
            if deadline is None or deadline > now:
                return
            self.take(self.coord.on_tick(now))
        raise AssertionError("timers keep firing")

    def result(self, pending: JoinResult | SyncResult | Pending) -> JoinResult | SyncResult:
        if isinstance(pending, Pending):
            return self.done.pop(pending.ticket)
        return pending

    def join_result(self, pending: JoinResult | Pending) -> JoinResult:
        r = self.result(pending)
        assert isinstance(r, JoinResult)
        return r

    def sync_result(self, pending: SyncResult | Pending) -> SyncResult:
        r = self.result(pending)
        assert isinstance(r, SyncResult)
        return r

    @property
    def group(self) -> Group:
        return self.coord.groups[GROUP]

    def state(self) -> GroupState:
        return self.group.state

    def stable_group(self, *requests: JoinRequest, now: int = 0) -> tuple[list[str], int]:
        """Join every member (MEMBER_ID_REQUIRED first for dynamic v4+ ones), sync, return (member ids, generation)."""
        pendings: list[JoinResult | Pending] = []
        for r in requests:
            if r.group_instance_id is None and r.api_version >= 4 and r.member_id == "":
                member_id = self.join_id(r, now)
                r = replace(r, member_id=member_id)
            pendings.append(self.join(r, now))
        self.tick(now)
        results = [self.join_result(p) for p in pendings]
        gen = results[0].generation_id
        leader = results[0].leader
        syncs = [
            self.sync(r.member_id, gen, now, tuple((m.member_id, m.member_id.encode()) for m in r.members))
            if r.member_id == leader
            else self.sync(r.member_id, gen, now)
            for r in sorted(results, key=lambda r: r.member_id == leader)
        ]
        for s in syncs:
            assert self.sync_result(s).error is E.NONE
        assert self.state() is GroupState.STABLE
        return [r.member_id for r in results], gen


# ---- join ------------------------------------------------------------------------------------------------------------


def test_join_of_three_members_with_member_id_required() -> None:
    h = H()
    ids = [h.join_id(req(client=f"c{i}")) for i in range(3)]
    assert ids == ["c0-1", "c1-2", "c2-3"]
    assert h.state() is GroupState.EMPTY  # pending members only
    pendings = [h.join(req(i)) for i in ids]
    assert all(isinstance(p, Pending) for p in pendings)
    assert h.state() is GroupState.PREPARING_REBALANCE
    h.tick(0)
    results = [h.join_result(p) for p in pendings]
    assert h.state() is GroupState.COMPLETING_REBALANCE
    assert {r.generation_id for r in results} == {1}
    assert {r.leader for r in results} == {"c0-1"}
    assert {r.protocol_name for r in results} == {"range"}
    assert {r.protocol_type for r in results} == {"consumer"}
    # Only the leader gets the member list, with each member's metadata for the chosen protocol.
    assert [m.member_id for m in results[0].members] == ids
    assert all(m.metadata == b"meta" for m in results[0].members)
    assert results[1].members == ()
    assert results[2].members == ()


def test_sync_followers_wait_for_the_leader_then_stable() -> None:
    h = H()
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    gen = h.join_result(pa).generation_id
    h.join_result(pb)
    follower = h.sync(b, gen)
    assert isinstance(follower, Pending)
    assert h.state() is GroupState.COMPLETING_REBALANCE
    # The leader leaves a member out: it gets an empty assignment.
    leader = h.sync(a, gen, assignments=((a, b"A"),))
    assert leader == SyncResult(E.NONE, b"A", "consumer", "range")
    assert h.sync_result(follower) == SyncResult(E.NONE, b"", "consumer", "range")
    assert h.state() is GroupState.STABLE
    # The leader's SyncGroup persisted the group with its assignment.
    (_partition, key, value) = h.records[-1]
    assert decode_key(key) == GroupMetadataKey(GROUP)
    assert value is not None
    stored = decode_group_metadata_value(value)
    assert (stored.generation, stored.protocol, stored.leader) == (1, "range", a)
    assert [(m.member_id, m.assignment) for m in stored.members] == [(a, b"A"), (b, b"")]
    # A SyncGroup in Stable gets the assignment at once.
    assert h.sync(b, gen) == SyncResult(E.NONE, b"", "consumer", "range")


def test_old_join_versions_get_a_member_id_at_once() -> None:
    h = H()
    p = h.join(req(version=3))
    assert isinstance(p, Pending)
    h.tick(0)
    r = h.join_result(p)
    assert r.error is E.NONE
    assert r.member_id == "c-1"
    assert r.leader == "c-1"


def test_pending_member_expires_if_it_never_rejoins() -> None:
    h = H()
    member_id = h.join_id(req(session=SESSION))
    assert h.coord.next_deadline() == SESSION
    h.tick(SESSION)
    assert h.group.pending_members == {}
    r = h.join_result(h.join(req(member_id), now=SESSION + 1))
    assert r.error is E.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize(
    ("protocols", "expected"),
    [
        # Java's default [range, cooperative-sticky] with librdkafka's [range, roundrobin]: only range is common.
        ([JAVA, LIBRDKAFKA], "range"),
        ([LIBRDKAFKA, JAVA], "range"),
        # Two prefer sticky, one prefers range: sticky wins 2-1.
        (
            [
                (("sticky", b""), ("range", b"")),
                (("sticky", b""), ("range", b"")),
                (("range", b""), ("sticky", b"")),
            ],
            "sticky",
        ),
        # A member's vote goes to its first choice among the protocols everyone supports.
        (
            [(("x", b""), ("roundrobin", b""), ("range", b"")), (("range", b""), ("roundrobin", b""))],
            "roundrobin",
        ),
        # A 1-1 tie goes to the protocol voted first (the first member's).
        ([(("roundrobin", b""), ("range", b"")), (("range", b""), ("roundrobin", b""))], "roundrobin"),
    ],
)
def test_protocol_vote(protocols: list[tuple[tuple[str, bytes], ...]], expected: str) -> None:
    h = H()
    pendings = [h.join(req(client=f"c{i}", protocols=p, version=3)) for i, p in enumerate(protocols)]
    h.tick(0)
    results = [h.join_result(p) for p in pendings]
    assert {r.protocol_name for r in results} == {expected}
    # The leader sees each member's metadata for the chosen protocol.
    leader = results[0]
    for member, member_protocols in zip(leader.members, protocols, strict=True):
        assert member.metadata == dict(member_protocols)[expected]


@pytest.mark.parametrize(
    ("first", "second", "error"),
    [
        (req(version=3), req(version=3, ptype="connect"), E.INCONSISTENT_GROUP_PROTOCOL),
        (req(version=3), req(version=3, protocols=(("roundrobin", b""),)), E.INCONSISTENT_GROUP_PROTOCOL),
        (req(version=3), req(version=3, protocols=(("other", b""), ("range", b""))), E.NONE),
    ],
)
def test_protocol_type_and_names_must_match(
    first: JoinRequest, second: JoinRequest, error: ErrorCode
) -> None:
    h = H()
    h.join(first)
    result = h.join(second)
    if error is E.NONE:
        assert isinstance(result, Pending)
    else:
        assert result == JoinResult(error, member_id="")


def test_empty_protocol_type_or_list_is_rejected() -> None:
    h = H()
    assert h.join_result(h.join(req(version=3, ptype=""))).error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.join_result(h.join(req(version=3, protocols=()))).error is E.INCONSISTENT_GROUP_PROTOCOL


@pytest.mark.parametrize(
    ("session", "error"),
    [(5999, E.INVALID_SESSION_TIMEOUT), (6000, E.MEMBER_ID_REQUIRED), (1_800_000, E.MEMBER_ID_REQUIRED),
     (1_800_001, E.INVALID_SESSION_TIMEOUT)],
)  # fmt: skip
def test_session_timeout_bounds(session: int, error: ErrorCode) -> None:
    h = H()
    assert h.join_result(h.join(req(session=session))).error is error


def test_empty_group_id_is_invalid_for_group_membership() -> None:
    h = H()
    assert h.join_result(h.join(req(), group="")).error is E.INVALID_GROUP_ID
    assert h.coord.heartbeat("", "m", None, 1, 0).response is E.INVALID_GROUP_ID


def test_join_with_member_id_of_unknown_group() -> None:
    h = H()
    assert h.join_result(h.join(req("ghost"))) == JoinResult(E.UNKNOWN_MEMBER_ID, member_id="ghost")


def test_group_max_size() -> None:
    h = H(max_size=2)
    (a, _b), _gen = h.stable_group(req(client="a"), req(client="b"))
    # New members are turned away with their member id cleared; existing members may still rejoin.
    assert h.join_result(h.join(req(version=3))) == JoinResult(E.GROUP_MAX_SIZE_REACHED, member_id="")
    assert isinstance(h.join(req(a, protocols=(("range", b"new"),))), Pending)
    assert h.state() is GroupState.PREPARING_REBALANCE


# ---- initial delay ---------------------------------------------------------------------------------------------------


def test_initial_rebalance_delay_extends_while_members_arrive() -> None:
    h = H(delay=3000)
    pa = h.join(req(version=3, client="a"), now=0)
    assert h.coord.next_deadline() == 3000
    h.tick(2999)
    assert h.state() is GroupState.PREPARING_REBALANCE
    pb = h.join(req(version=3, client="b"), now=1000)
    h.tick(3000)  # b arrived during the delay: wait once more
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.coord.next_deadline() == 6000
    h.tick(6000)
    assert h.state() is GroupState.COMPLETING_REBALANCE
    assert h.join_result(pa).generation_id == h.join_result(pb).generation_id == 1


def test_initial_delay_is_bounded_by_the_rebalance_timeout() -> None:
    h = H(delay=3000)
    p = [h.join(req(version=3, client="a", rebalance=5000), now=0)]
    # Members keep arriving; the delay may only stretch to the rebalance timeout (plus one last delay).
    t = 0
    while h.state() is GroupState.PREPARING_REBALANCE and t < 20_000:
        t += 1000
        if h.state() is GroupState.PREPARING_REBALANCE:
            p.append(h.join(req(version=3, client=f"m{t}", rebalance=5000), now=t))
        h.tick(t)
    assert h.state() is GroupState.COMPLETING_REBALANCE
    assert t <= 6000


def test_first_rebalance_is_not_completed_before_the_delay_even_if_all_joined() -> None:
    h = H(delay=3000)
    a = h.join_id(req(client="a"))
    p = h.join(req(a))
    assert isinstance(p, Pending)
    h.tick(2999)
    assert isinstance(p, Pending)
    assert p.ticket not in h.done
    h.tick(3000)
    assert h.join_result(p).generation_id == 1


# ---- rebalances of a stable group ------------------------------------------------------------------------------------


def test_rebalance_timeout_kicks_a_member_that_does_not_rejoin() -> None:
    h = H()
    (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    # The leader rejoins (e.g. it saw new partitions): a rebalance starts.
    pa = h.join(req(a), now=1000)
    assert isinstance(pa, Pending)
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.group.join_deadline_ms == 1000 + REBALANCE
    # b keeps heartbeating (its session stays alive) but never rejoins.
    for t in range(2000, 1000 + REBALANCE, 3000):
        assert h.heartbeat(b, gen, now=t) is E.REBALANCE_IN_PROGRESS
        h.tick(t)
    h.tick(1000 + REBALANCE - 1)
    assert h.state() is GroupState.PREPARING_REBALANCE
    h.tick(1000 + REBALANCE)
    r = h.join_result(pa)
    assert (r.error, r.generation_id, r.leader, [m.member_id for m in r.members]) == (E.NONE, gen + 1, a, [a])
    assert h.heartbeat(b, gen, now=1000 + REBALANCE) is E.UNKNOWN_MEMBER_ID


def test_session_expiry_removes_a_silent_member_and_rebalances() -> None:
    h = H()
    (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    for t in range(3000, SESSION + 1, 3000):
        assert h.heartbeat(a, gen, now=t) is E.NONE
        h.tick(t)
    assert h.state() is GroupState.STABLE
    h.tick(SESSION)  # b's last sign of life was its SyncGroup at 0
    assert b not in h.group.members
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.heartbeat(a, gen, now=SESSION + 1) is E.REBALANCE_IN_PROGRESS
    # The only remaining member rejoins: the join completes at once.
    r = h.join_result(h.join(req(a), now=SESSION + 2))
    assert (r.generation_id, r.leader) == (gen + 1, a)


def test_leader_session_expiry_elects_a_new_leader() -> None:
    h = H()
    (_a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    h.heartbeat(b, gen, now=SESSION - 1)
    h.tick(SESSION)
    assert h.group.leader_id == b
    r = h.join_result(h.join(req(b), now=SESSION))
    assert r.leader == b
    assert [m.member_id for m in r.members] == [b]


def test_follower_rejoining_stable_with_same_metadata_gets_current_generation() -> None:
    h = H()
    (_a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    r = h.join_result(h.join(req(b)))
    assert (r.error, r.generation_id, r.members) == (E.NONE, gen, ())
    assert h.state() is GroupState.STABLE


def test_rejoin_with_new_metadata_rebalances_cooperatively() -> None:
    """A cooperative client's second rebalance is, for the broker, just another rebalance."""
    h = H()
    (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    for round_ in (1, 2):
        owned = b"owned%d" % round_
        pa = h.join(req(a, protocols=(("cooperative-sticky", owned), ("range", owned))), now=round_)
        pb = h.join(req(b, protocols=(("cooperative-sticky", owned), ("range", owned))), now=round_)
        ra, rb = h.join_result(pa), h.join_result(pb)
        assert ra.generation_id == rb.generation_id == gen + round_
        assert ra.protocol_name == "cooperative-sticky"
        ps = h.sync(b, ra.generation_id, now=round_)
        assert h.sync(a, ra.generation_id, now=round_, assignments=((a, b"x"), (b, b"y"))) == SyncResult(
            E.NONE, b"x", "consumer", "cooperative-sticky"
        )
        assert h.sync_result(ps).assignment == b"y"


def test_join_in_completing_rebalance_with_same_metadata_is_answered_again() -> None:
    h = H()
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    first = h.join_result(pa)
    h.join_result(pb)
    again = h.join_result(h.join(req(a)))
    assert again == first
    assert h.state() is GroupState.COMPLETING_REBALANCE


def test_rebalance_during_completing_rebalance_tells_waiting_syncs_to_rejoin() -> None:
    h = H()
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    gen = h.join_result(pa).generation_id
    h.join_result(pb)
    ps = h.sync(b, gen)
    # a changes its metadata before syncing: the rebalance starts again
    pa2 = h.join(req(a, protocols=(("range", b"v2"),)))
    assert h.sync_result(ps) == SyncResult(E.REBALANCE_IN_PROGRESS)
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert isinstance(pa2, Pending)


def test_members_that_never_sync_are_removed() -> None:
    h = H()
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    gen = h.join_result(pa).generation_id
    h.join_result(pb)
    assert h.sync(a, gen, assignments=((a, b"1"), (b, b"2"))) == SyncResult(E.NONE, b"1", "consumer", "range")
    assert h.group.sync_deadline_ms == REBALANCE  # b has the rebalance timeout to send SyncGroup
    for t in range(3000, REBALANCE, 3000):
        assert h.heartbeat(a, gen, now=t) is E.NONE
        assert h.heartbeat(b, gen, now=t) is E.NONE
        h.tick(t)
    assert h.state() is GroupState.STABLE
    h.tick(REBALANCE)
    assert b not in h.group.members
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_abandoned_join_is_answered_when_the_member_joins_again() -> None:
    h = H()
    (a, b), _gen = h.stable_group(req(client="a"), req(client="b"))
    first = h.join(req(a), now=1)
    second = h.join(req(a), now=2)
    assert isinstance(first, Pending)
    assert isinstance(second, Pending)
    assert h.result(first) == JoinResult(E.REBALANCE_IN_PROGRESS, member_id=a)
    h.join(req(b), now=3)
    assert h.join_result(second).error is E.NONE


# ---- error table: heartbeat, sync and commit in every state ----------------------------------------------------------


def _group_in(h: H, state: GroupState) -> tuple[str, str, int]:
    """Bring the group to `state` with members a (leader) and b; returns (a, b, generation of the state)."""
    if state is GroupState.EMPTY:
        (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
        h.leave(MemberIdentity(a), MemberIdentity(b))
        assert h.state() is GroupState.EMPTY
        return a, b, gen + 1
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    gen = h.join_result(pa).generation_id
    h.join_result(pb)
    if state is GroupState.COMPLETING_REBALANCE:
        return a, b, gen
    ps = h.sync(b, gen)
    h.sync(a, gen, assignments=((a, b"1"), (b, b"2")))
    h.sync_result(ps)
    if state is GroupState.STABLE:
        return a, b, gen
    h.join(req(a, protocols=(("range", b"v2"),)))
    assert h.state() is GroupState.PREPARING_REBALANCE
    return a, b, gen


# (state, who, generation offset) -> expected (heartbeat, sync, commit)
ERROR_TABLE = [
    (GroupState.STABLE, "a", 0, (E.NONE, E.NONE, E.NONE)),
    (GroupState.STABLE, "a", -1, (E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION)),
    (GroupState.STABLE, "a", 1, (E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION)),
    (GroupState.STABLE, "zz", 0, (E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID)),
    (GroupState.PREPARING_REBALANCE, "b", 0, (E.REBALANCE_IN_PROGRESS, E.REBALANCE_IN_PROGRESS, E.NONE)),
    (
        GroupState.PREPARING_REBALANCE,
        "b",
        -1,
        (E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION),
    ),
    (GroupState.COMPLETING_REBALANCE, "b", 0, (E.NONE, None, E.REBALANCE_IN_PROGRESS)),
    (
        GroupState.COMPLETING_REBALANCE,
        "b",
        -1,
        (E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION),
    ),
    (GroupState.EMPTY, "a", 0, (E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID)),
]


@pytest.mark.parametrize(("state", "who", "gen_offset", "expected"), ERROR_TABLE)
@pytest.mark.parametrize("api", ["heartbeat", "sync", "commit"])
def test_generation_and_member_checks(
    state: GroupState, who: str, gen_offset: int, expected: tuple[ErrorCode | None, ...], api: str
) -> None:
    h = H()
    a, b, gen = _group_in(h, state)
    member = {"a": a, "b": b}.get(who, who)
    g = gen + gen_offset
    if api == "heartbeat":
        got: ErrorCode | None = h.heartbeat(member, g, now=1)
        want = expected[0]
    elif api == "sync":
        result = h.sync(member, g, now=1)
        got = None if isinstance(result, Pending) else result.error  # None: parked, waiting for the leader
        want = expected[1]
    else:
        got = h.commit(member, g, now=1)
        want = expected[2]
    assert got is want


def test_sync_with_another_protocol_is_inconsistent() -> None:
    h = H()
    a, _b, gen = _group_in(h, GroupState.STABLE)
    assert h.sync_result(h.sync(a, gen, pname="roundrobin")).error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync_result(h.sync(a, gen, ptype="connect")).error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync_result(h.sync(a, gen, ptype="consumer", pname="range")).error is E.NONE


def test_simple_commit_is_refused_while_members_manage_the_group() -> None:
    h = H()
    _group_in(h, GroupState.STABLE)
    assert h.commit("", -1) is E.UNKNOWN_MEMBER_ID


# ---- leave ---------------------------------------------------------------------------------------------------------


def test_leave_of_a_follower_rebalances_the_rest() -> None:
    h = H()
    (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    assert h.leave(MemberIdentity(b), now=5) == (E.NONE, (E.NONE,))
    assert h.state() is GroupState.PREPARING_REBALANCE
    r = h.join_result(h.join(req(a), now=6))
    assert (r.generation_id, [m.member_id for m in r.members]) == (gen + 1, [a])


def test_leave_errors_per_member_and_v0_2_top_level_error() -> None:
    h = H()
    (a, _b), _gen = h.stable_group(req(client="a"), req(client="b"))
    out = h.coord.leave_group(GROUP, [MemberIdentity("nobody")], 0)
    assert out.response.error is E.NONE
    assert out.response.error_for_v0_2() is E.UNKNOWN_MEMBER_ID
    assert h.leave(MemberIdentity(a), MemberIdentity("nobody"), MemberIdentity("", "no-instance")) == (
        E.NONE,
        (E.NONE, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID),
    )
    unknown_group = h.coord.leave_group("other", [MemberIdentity("x")], 0).response
    assert unknown_group.error_for_v0_2() is E.UNKNOWN_MEMBER_ID


def test_everyone_leaves_group_becomes_empty_and_is_persisted() -> None:
    h = H()
    (a, b), gen = h.stable_group(req(client="a"), req(client="b"))
    assert h.leave(MemberIdentity(a), MemberIdentity(b), now=7) == (E.NONE, (E.NONE, E.NONE))
    assert h.state() is GroupState.EMPTY
    assert h.group.generation_id == gen + 1
    _p, key, value = h.records[-1]
    assert decode_key(key) == GroupMetadataKey(GROUP)
    assert value is not None
    stored = decode_group_metadata_value(value)
    assert (stored.protocol_type, stored.generation, stored.protocol, stored.leader, stored.members) == (
        "consumer",
        gen + 1,
        None,
        None,
        (),
    )
    assert stored.current_state_timestamp == 7


def test_leaving_pending_member_completes_the_join() -> None:
    h = H()
    (a, _b), _gen = h.stable_group(req(client="a"), req(client="b"))
    pending = h.join_id(req(client="late"))
    pa = h.join(req(a), now=1)
    h.leave(MemberIdentity(_b), now=1)
    assert isinstance(pa, Pending)
    assert pa.ticket not in h.done
    h.leave(MemberIdentity(pending), now=2)
    assert h.join_result(pa).error is E.NONE


# ---- static membership ---------------------------------------------------------------------------------------------


def test_static_member_rejoining_replaces_its_old_member_id_without_rebalance() -> None:
    h = H()
    (s, b), gen = h.stable_group(req(client="s", instance="i1"), req(client="b"))
    assert s == "i1-1"  # static member ids start with the instance id
    n_records = len(h.records)
    r = h.join_result(h.join(req(instance="i1", client="s"), now=100))
    assert r.error is E.NONE
    assert r.member_id != s
    assert r.generation_id == gen
    assert h.state() is GroupState.STABLE
    # It was the leader: an old client gets the old leader id so that it does not compute a useless assignment.
    assert r.leader == s
    assert r.members == ()
    assert h.group.leader_id == r.member_id
    # The old id is fenced, the new one works and keeps the old assignment.
    assert h.heartbeat(s, gen, now=101, instance="i1") is E.FENCED_INSTANCE_ID
    assert h.heartbeat(r.member_id, gen, now=101, instance="i1") is E.NONE
    assert h.sync_result(h.sync(r.member_id, gen, instance="i1")).assignment == s.encode()
    assert h.commit(s, gen, instance="i1") is E.FENCED_INSTANCE_ID
    assert h.result(h.join(req(s, instance="i1"))) == JoinResult(E.FENCED_INSTANCE_ID, member_id=s)
    # The new member id was persisted.
    assert len(h.records) == n_records + 1
    stored = decode_group_metadata_value(h.records[-1][2] or b"")
    assert {m.member_id for m in stored.members} == {r.member_id, b}


def test_static_leader_rejoining_with_join_v9_is_told_to_skip_assignment() -> None:
    h = H()
    (_s, b), gen = h.stable_group(req(client="s", instance="i1", version=9), req(client="b", version=9))
    r = h.join_result(h.join(req(instance="i1", client="s", version=9)))
    assert r.leader == r.member_id
    assert r.skip_assignment
    assert {m.member_id for m in r.members} == {r.member_id, b}
    assert r.generation_id == gen


def test_static_member_rejoining_with_other_protocols_triggers_a_rebalance() -> None:
    h = H()
    coop_first = (("cooperative-sticky", b""), ("range", b""))
    (_s, _b), _gen = h.stable_group(req(client="s", instance="i1"), req(client="b", protocols=coop_first))
    assert h.group.protocol_name == "range"  # s only knew range
    # s now prefers cooperative-sticky too: the group's protocol changes, which takes a rebalance.
    p = h.join(req(instance="i1", protocols=coop_first), now=1)
    assert isinstance(p, Pending)
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_static_member_is_not_removed_when_it_misses_a_rebalance() -> None:
    h = H()
    (s, b), gen = h.stable_group(req(client="s", instance="i1", session=60_000), req(client="b"))
    pb = h.join(req(b, protocols=(("range", b"v2"),)), now=1)
    h.tick(1 + REBALANCE)
    # b is answered, s (static, silent) keeps its place
    r = h.join_result(pb)
    assert r.generation_id == gen + 1
    assert s in h.group.members
    assert h.heartbeat(s, gen + 1, instance="i1", now=2 + REBALANCE) is E.NONE


def test_admin_removes_static_member_by_instance_id() -> None:
    h = H()
    (s, _b), _gen = h.stable_group(req(client="s", instance="i1"), req(client="b"))
    assert h.leave(MemberIdentity("", "i1")) == (E.NONE, (E.NONE,))
    assert s not in h.group.members
    assert "i1" not in h.group.static_members
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_static_member_with_wrong_member_id_is_fenced_on_leave_and_sync() -> None:
    h = H()
    (s, _b), gen = h.stable_group(req(client="s", instance="i1"), req(client="b"))
    assert h.leave(MemberIdentity("other", "i1")) == (E.NONE, (E.FENCED_INSTANCE_ID,))
    assert h.sync_result(h.sync("other", gen, instance="i1")).error is E.FENCED_INSTANCE_ID
    assert h.heartbeat(s, gen, instance="unknown") is E.UNKNOWN_MEMBER_ID


def test_static_member_replaced_during_completing_rebalance_restarts_the_rebalance() -> None:
    h = H()
    ps = h.join(req(client="s", instance="i1"))
    b = h.join_id(req(client="b"))
    pb = h.join(req(b))
    h.tick(0)
    gen = h.join_result(ps).generation_id
    h.join_result(pb)
    parked = h.sync(b, gen)
    p = h.join(req(instance="i1", client="s"), now=1)
    assert isinstance(p, Pending)
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.sync_result(parked).error is E.REBALANCE_IN_PROGRESS


# ---- helpers -------------------------------------------------------------------------------------------------------


def test_subscribed_topics_of_consumer_protocol_bytes() -> None:
    assert subscribed_topics_of(subscription("a", "b")) == frozenset({"a", "b"})
    assert subscribed_topics_of(b"\x00") is None
    assert subscribed_topics_of(struct.pack(">hi", 1, 1) + struct.pack(">h", 9) + b"x") is None


def test_completions_are_data() -> None:
    h = H()
    p = h.join(req(version=3))
    out = h.coord.on_tick(0)
    assert isinstance(p, Pending)
    assert out.completions == (
        Completion(
            p.ticket,
            JoinResult(
                E.NONE,
                member_id="c-1",
                generation_id=1,
                protocol_type="consumer",
                protocol_name="range",
                leader="c-1",
                members=(h.group.current_members_for_leader()),
            ),
        ),
    )


def test_member_told_to_rejoin_after_a_long_sync_wait_gets_a_fresh_session() -> None:
    """A follower parked in SyncGroup longer than its session, then sent back to rejoin, can still expire."""
    h = H()
    a, b = h.join_id(req(client="a")), h.join_id(req(client="b"))
    pa, pb = h.join(req(a)), h.join(req(b))
    h.tick(0)
    gen = h.join_result(pa).generation_id
    h.join_result(pb)
    parked = h.sync(b, gen)
    for t in range(9000, REBALANCE, 9000):  # the leader stays alive but never sends SyncGroup
        assert h.heartbeat(a, gen, now=t) is E.NONE
        h.tick(t)  # b's session deadline passes while it waits: it stays, its session is paused
    assert b in h.group.members
    h.tick(REBALANCE)  # the leader is removed for not syncing and the rebalance starts over
    assert h.sync_result(parked).error is E.REBALANCE_IN_PROGRESS
    assert h.group.members[b].heartbeat_deadline_ms == REBALANCE + SESSION
    h.tick(REBALANCE + SESSION)  # b never rejoins: its session ends
    assert b not in h.group.members
