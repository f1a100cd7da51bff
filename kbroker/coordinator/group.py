"""One consumer group under the classic group protocol, as a plain synchronous state machine.

No trio, no sockets, no clock: every method takes the current time (`now_ms`) and returns its decision as data.

A JoinGroup or SyncGroup that cannot be answered yet returns `Pending(ticket)`; a later call (another member's
request, `on_tick`) answers it by returning `Completion(ticket, result)` in its `Effects`. The caller (the trio layer in
runtime.py) parks the request on its ticket and wakes it with the completion. Timers are deadlines in the group's
state: `next_deadline()` says when to call `on_tick(now_ms)` next, which expires sessions, completes a join phase at the
rebalance timeout, ends the initial rebalance delay and expires members that never sent SyncGroup.

The rules follow Kafka's classic coordinator (GroupCoordinator.scala, ClassicGroup.java); docs/groups.md lists where we
differ.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import logging
import struct
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from protocol.errors import ErrorCode

# Kafka's coordinator logs every rebalance and every removed member at INFO; so do we, so that a broker log tells why a
# group is rebalancing or a member was dropped.
log = logging.getLogger(__name__)

# The protocol type of the Java consumer and every client that speaks ConsumerProtocol. Only for such groups do we read
# the subscription bytes (to know the subscribed topics for OffsetDelete and offset expiry).
CONSUMER_PROTOCOL_TYPE = "consumer"


class GroupState(enum.Enum):
    """The value is the name Kafka uses in DescribeGroups and ListGroups."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


# The states each state may be entered from (Kafka's GroupState.validPreviousStates).
_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """The group.* broker settings, under Kafka's names in snake_case."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2_147_483_647
    # Not a setting in Kafka either: how long a new member's JoinGroup may stay parked before the member is dropped
    # (it cannot heartbeat before it knows its member id).
    new_member_join_timeout_ms: int = 300_000


# ---- requests and responses (plain values; the handlers translate protocol messages to and from these) ------------


@dataclass(frozen=True, slots=True)
class JoinRequest:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    # -1 (JoinGroup v0 has no such field) means "same as the session timeout", as Kafka does for v0.
    rebalance_timeout_ms: int
    protocol_type: str
    # (name, metadata) in the member's order of preference; metadata is opaque to us.
    protocols: tuple[tuple[str, bytes], ...]
    # The JoinGroup version: v4+ gets MEMBER_ID_REQUIRED on an empty member id, v9+ understands skip_assignment.
    api_version: int
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class JoinResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class JoinResult:
    error: ErrorCode
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    # Only the leader gets the members, with their metadata for the selected protocol.
    members: tuple[JoinResponseMember, ...] = ()


@dataclass(frozen=True, slots=True)
class SyncRequest:
    member_id: str
    group_instance_id: str | None
    generation_id: int
    # v5+ send the protocol type and name the member thinks the group uses; None for older versions.
    protocol_type: str | None
    protocol_name: str | None
    # The leader sends one (member_id, assignment) per member; followers send nothing.
    assignments: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True, slots=True)
class MemberIdentity:
    """One member in a LeaveGroup request (v0-2 have exactly one, without group_instance_id)."""

    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class LeaveMemberResult:
    member_id: str
    group_instance_id: str | None
    error: ErrorCode


@dataclass(frozen=True, slots=True)
class LeaveResult:
    """`error` is the group-level error; each member has its own in `members`."""

    error: ErrorCode
    members: tuple[LeaveMemberResult, ...] = ()

    def error_for_v0_2(self) -> ErrorCode:
        """LeaveGroup v0-2 name one member and have only the top-level error_code: the member's error goes there."""
        if self.error is not ErrorCode.NONE or not self.members:
            return self.error
        return self.members[0].error


@dataclass(frozen=True, slots=True)
class Pending:
    """The request is parked; its answer will come as a Completion with this ticket."""

    ticket: int


@dataclass(frozen=True, slots=True)
class Completion:
    ticket: int
    result: JoinResult | SyncResult


@dataclass(frozen=True, slots=True)
class Effects:
    """What a call did besides answering its own request."""

    completions: tuple[Completion, ...] = ()
    # The group's metadata changed in a way Kafka persists (new assignment, group became empty, static member
    # replaced): the coordinator must append a GroupMetadata record of the group as it is now.
    store_group: bool = False


NO_EFFECTS = Effects()

# The answer type of a call that may park: JoinResult for JoinGroup, SyncResult for SyncGroup.
R = TypeVar("R", JoinResult, SyncResult)


# ---- members ------------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    # Tickets of the parked JoinGroup / SyncGroup of this member, if any.
    join_ticket: int | None = None
    sync_ticket: int | None = None
    # Joined but never got a JoinGroup answer: it does not know its member id yet, so it cannot heartbeat.
    is_new: bool = False
    # When the member's session expires unless it heartbeats (or None while nothing is expected from it).
    heartbeat_deadline_ms: int | None = None

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return self.join_ticket is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_ticket is not None

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol_name:
                return metadata
        return b""

    def matches(self, protocols: Sequence[tuple[str, bytes]]) -> bool:
        """Same protocols, same metadata, same order: rejoining with these changes nothing."""
        return tuple(protocols) == self.protocols

    def vote(self, candidates: set[str]) -> str:
        """Each member votes for its most preferred protocol that every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise AssertionError(f"member {self.member_id} supports none of {sorted(candidates)}")


def random_member_id(prefix: str) -> str:
    """Kafka's format: client id (or group instance id), a dash, a random UUID."""
    return f"{prefix}-{uuid.uuid4()}"


def subscribed_topics_of(metadata: bytes) -> frozenset[str] | None:
    """The topics of a ConsumerProtocol subscription, or None if the bytes do not parse.

    Every version of the subscription starts with int16 version then the v0 topic array (int32 count, int16-length
    strings), so reading that prefix is enough whatever the version.
    """
    try:
        pos = 2
        (count,) = struct.unpack_from(">i", metadata, pos)
        pos += 4
        if count < 0:
            return None
        topics: set[str] = set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(metadata[pos : pos + length].decode("utf-8"))
            pos += length
        return frozenset(topics)
    except (struct.error, UnicodeDecodeError):
        return None


# ---- the group ------------------------------------------------------------------------------------------------------


class Group:
    def __init__(
        self,
        group_id: str,
        config: GroupConfig,
        *,
        tickets: Iterator[int] | None = None,
        new_member_id: Callable[[str], str] = random_member_id,
    ) -> None:
        self.group_id = group_id
        self.config = config
        self.state = GroupState.EMPTY
        self.previous_state = GroupState.EMPTY
        # When the group entered its current state (GroupMetadataValue.currentStateTimestamp); the retention of an
        # empty group's offsets counts from here. None for a group only ever used to store offsets.
        self.state_timestamp_ms: int | None = None
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        # Insertion order matters: when the leader goes, the oldest remaining member leads.
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}  # group_instance_id -> member_id
        # Member ids handed out with MEMBER_ID_REQUIRED, with the deadline by which they must rejoin.
        self.pending_members: dict[str, int] = {}
        # Members that got their JoinGroup answer but have not sent SyncGroup yet.
        self.pending_sync_members: set[str] = set()
        # The topics the members subscribe to (consumer protocol only), None when unknown.
        self.subscribed_topics: frozenset[str] | None = None
        # Timers.
        self.join_deadline_ms: int | None = None
        # During the initial rebalance of an empty group: (current delay, rebalance time still unused).
        self.initial_delay: tuple[int, int] | None = None
        self.new_member_added = False
        self.sync_deadline_ms: int | None = None
        self._tickets = tickets if tickets is not None else itertools.count(1)
        self._new_member_id = new_member_id
        # Effects gathered during the current call.
        self._completions: list[Completion] = []
        self._store_group = False

    # ---- queries -----------------------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def has_all_members_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join for m in self.members.values())

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join)

    def rebalance_timeout_ms(self) -> int:
        """The group waits as long as its most patient member."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def can_rebalance(self) -> bool:
        return self.state in _VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def candidate_protocols(self) -> set[str]:
        """The protocols every member supports."""
        members = list(self.members.values())
        if not members:
            return set()
        common = {name for name, _ in members[0].protocols}
        for member in members[1:]:
            common &= {name for name, _ in member.protocols}
        return common

    def supports_protocols(self, protocol_type: str, protocols: Sequence[tuple[str, bytes]]) -> bool:
        if self.state is GroupState.EMPTY:
            return protocol_type != "" and len(protocols) > 0
        names = {name for name, _ in protocols}
        return self.protocol_type == protocol_type and bool(names & self.candidate_protocols())

    def select_protocol(self) -> str:
        """The protocol with the most votes. Ties go to the protocol voted first (Kafka leaves them to hash order)."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            name = member.vote(candidates)
            votes[name] = votes.get(name, 0) + 1
        best = max(votes.values())
        return next(name for name, count in votes.items() if count == best)

    def current_members_for_leader(self) -> tuple[JoinResponseMember, ...]:
        return tuple(
            JoinResponseMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        )

    def is_subscribed_to(self, topic: str) -> bool:
        """Whether members consume the topic. Unknown subscriptions of a consumer group count as subscribed."""
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def next_deadline(self) -> int | None:
        deadlines = [d for d in (self.join_deadline_ms, self.sync_deadline_ms) if d is not None]
        deadlines.extend(self.pending_members.values())
        deadlines.extend(
            m.heartbeat_deadline_ms for m in self.members.values() if m.heartbeat_deadline_ms is not None
        )
        return min(deadlines, default=None)

    # ---- JoinGroup ---------------------------------------------------------------------------------------------

    def join(self, req: JoinRequest, now_ms: int) -> tuple[JoinResult | Pending, Effects]:
        """Session timeout bounds and the group id are checked by the coordinator before it gets here."""
        ticket = next(self._tickets)
        if req.rebalance_timeout_ms < 0:
            req = dataclasses.replace(req, rebalance_timeout_ms=req.session_timeout_ms)
        result: JoinResult | None
        if not self._accept_joining_member(req.member_id):
            # Also sheds an existing member that is not part of the ongoing rebalance: the group is over capacity.
            if req.member_id in self.members:
                self._remove_member(
                    req.member_id, ErrorCode.UNKNOWN_MEMBER_ID, "the group is at its maximum size"
                )
                self._maybe_complete_join_after_removal(now_ms, "a member over the maximum size was removed")
            result = JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id="")
        elif req.member_id == "":
            result = self._join_new_member(req, ticket, now_ms)
        else:
            result = self._join_existing_member(req, ticket, now_ms)
        return self._answer(ticket, result)

    def _accept_joining_member(self, member_id: str) -> bool:
        if self.state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        if self.state is GroupState.PREPARING_REBALANCE:
            # Counting the members already rejoined (not the group size, which may exceed a lowered maximum) kicks
            # out the last members to rejoin.
            member = self.members.get(member_id)
            if member is not None and member.awaiting_join:
                return True
            return self.num_awaiting_join() < self.config.group_max_size
        return member_id in self.members or self.size < self.config.group_max_size

    def _join_new_member(self, req: JoinRequest, ticket: int, now_ms: int) -> JoinResult | None:
        if self.state is GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id="")
        if not self.supports_protocols(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id="")
        if req.group_instance_id is not None:
            new_id = self._new_member_id(req.group_instance_id)
            old_id = self.static_members.get(req.group_instance_id)
            if old_id is not None:
                return self._replace_static_member(req, old_id, new_id, ticket, now_ms)
            self._add_member(new_id, req, ticket, now_ms)
            return None
        new_id = self._new_member_id(req.client_id)
        if req.api_version >= 4:
            # Hand the id out and wait for the member to come back with it, so that a client retrying a timed-out
            # JoinGroup does not leave an orphan member behind (KIP-394).
            self.pending_members[new_id] = now_ms + req.session_timeout_ms
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=new_id)
        self._add_member(new_id, req, ticket, now_ms)
        return None

    def _join_existing_member(self, req: JoinRequest, ticket: int, now_ms: int) -> JoinResult | None:
        member_id = req.member_id
        if self.state is GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=member_id)
        if not self.supports_protocols(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        if member_id in self.pending_members and req.group_instance_id is None:
            self._add_member(member_id, req, ticket, now_ms)
            return None
        error = self.validate_member(member_id, req.group_instance_id)
        if error is not ErrorCode.NONE:
            return JoinResult(error, member_id=member_id)
        member = self.members[member_id]
        if self.state is GroupState.PREPARING_REBALANCE:
            self._update_member(member, req, ticket)
            self._maybe_prepare_rebalance_or_complete_join(now_ms, f"member {member_id} rejoined")
            return None
        if self.state is GroupState.COMPLETING_REBALANCE:
            if member.matches(req.protocols):
                # The member lost our JoinGroup answer: give it again.
                return self._join_result(member_id)
            self._update_member(member, req, ticket)
            self._maybe_prepare_rebalance_or_complete_join(
                now_ms, f"member {member_id} rejoined with other protocols"
            )
            return None
        if self.state is GroupState.STABLE:
            if self.is_leader(member_id) or not member.matches(req.protocols):
                # A rejoining leader forces a rebalance: it is how a leader reacts to changes that are not in the
                # metadata, like new partitions of a subscribed topic.
                self._update_member(member, req, ticket)
                self._maybe_prepare_rebalance_or_complete_join(
                    now_ms,
                    f"member {member_id} rejoined"
                    + (" as the leader" if self.is_leader(member_id) else " with other protocols"),
                )
                return None
            return self._join_result(member_id, with_members=False)
        # Empty: no member can be known here; make it start over.
        return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)

    def _join_result(self, member_id: str, *, with_members: bool = True) -> JoinResult:
        members = self.current_members_for_leader() if with_members and self.is_leader(member_id) else ()
        return JoinResult(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader=self.leader_id or "",
            members=members,
        )

    def _add_member(self, member_id: str, req: JoinRequest, ticket: int, now_ms: int) -> None:
        member = Member(
            member_id=member_id,
            group_instance_id=req.group_instance_id,
            client_id=req.client_id,
            client_host=req.client_host,
            rebalance_timeout_ms=req.rebalance_timeout_ms,
            session_timeout_ms=req.session_timeout_ms,
            protocol_type=req.protocol_type,
            protocols=tuple(req.protocols),
            join_ticket=ticket,
            is_new=True,
            # A new member cannot heartbeat and a parked JoinGroup hides a dead client: bound how long it may wait.
            heartbeat_deadline_ms=now_ms + self.config.new_member_join_timeout_ms,
        )
        if self.state is GroupState.PREPARING_REBALANCE and self.previous_state is GroupState.EMPTY:
            self.new_member_added = True
        if not self.members:
            self.protocol_type = req.protocol_type
        if self.leader_id is None:
            self.leader_id = member_id
        self.members[member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member_id
        self.pending_members.pop(member_id, None)
        self._maybe_prepare_rebalance_or_complete_join(now_ms, f"member {member_id} joined")

    def _update_member(self, member: Member, req: JoinRequest, ticket: int | None) -> None:
        member.protocols = tuple(req.protocols)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        if member.join_ticket is not None and ticket is not None:
            # A client has one JoinGroup in flight at a time; an older one still parked was abandoned by its client.
            self._complete(member.join_ticket, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
        member.join_ticket = ticket

    def _replace_static_member(
        self, req: JoinRequest, old_id: str, new_id: str, ticket: int, now_ms: int
    ) -> JoinResult | None:
        """A static member came back with no member id: it takes over the old member's place under a new id."""
        assert req.group_instance_id is not None
        current_leader = self.leader_id or ""
        old = self.members.pop(old_id)
        # Whoever still uses the old id is a zombie duplicate of this instance: fence it right away.
        if old.join_ticket is not None:
            self._complete(old.join_ticket, JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id=old_id))
        if old.sync_ticket is not None:
            self._complete(old.sync_ticket, SyncResult(ErrorCode.FENCED_INSTANCE_ID))
        member = Member(
            member_id=new_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=old.protocols,
            assignment=old.assignment,
        )
        self.members[new_id] = member
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[req.group_instance_id] = new_id
        if old_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_id)
            self.pending_sync_members.add(new_id)
        member.heartbeat_deadline_ms = now_ms + req.session_timeout_ms

        if self.state is GroupState.STABLE:
            self._update_member(member, req, None)
            if self.protocol_name == self.select_protocol():
                # Nothing the assignment depends on changed: no rebalance, just persist the new member id.
                self._store_group = True
                if req.api_version >= 9:
                    is_leader = self.is_leader(new_id)
                    return JoinResult(
                        ErrorCode.NONE,
                        member_id=new_id,
                        generation_id=self.generation_id,
                        protocol_type=self.protocol_type,
                        protocol_name=self.protocol_name,
                        leader=self.leader_id or "",
                        skip_assignment=is_leader,
                        members=self.current_members_for_leader() if is_leader else (),
                    )
                # Older clients would compute a new assignment if they saw themselves as leader, and a Stable group
                # would not pass it on; returning the old leader id makes the member act as a follower.
                return JoinResult(
                    ErrorCode.NONE,
                    member_id=new_id,
                    generation_id=self.generation_id,
                    protocol_type=self.protocol_type,
                    protocol_name=self.protocol_name,
                    leader=current_leader,
                )
            member.join_ticket = ticket
            self._prepare_rebalance(
                now_ms,
                f"static member {req.group_instance_id} rejoined with protocols that change the group's choice",
            )
            return None
        self._update_member(member, req, ticket)
        if self.state is GroupState.COMPLETING_REBALANCE:
            # The leader may already be assigning partitions to the old member id: start over.
            self._prepare_rebalance(
                now_ms, f"static member {req.group_instance_id} rejoined while the leader was assigning"
            )
        else:
            self._maybe_complete_join_phase(now_ms)
        return None

    # ---- rebalance ---------------------------------------------------------------------------------------------

    def _transition_to(self, state: GroupState, now_ms: int) -> None:
        assert self.state in _VALID_PREVIOUS[state], f"{self.group_id}: {self.state} -> {state}"
        self.previous_state = self.state
        self.state = state
        self.state_timestamp_ms = now_ms

    def _maybe_prepare_rebalance_or_complete_join(self, now_ms: int, reason: str) -> None:
        if self.can_rebalance():
            self._prepare_rebalance(now_ms, reason)
        else:
            self._maybe_complete_join_phase(now_ms)

    def _maybe_complete_join_phase(self, now_ms: int) -> None:
        # The initial rebalance of an empty group only ends when its delay runs out.
        if (
            self.state is GroupState.PREPARING_REBALANCE
            and self.has_all_members_joined()
            and self.previous_state is not GroupState.EMPTY
        ):
            self._complete_join(now_ms)

    def _prepare_rebalance(self, now_ms: int, reason: str) -> None:
        log.info(
            "preparing to rebalance group %s in state %s with old generation %d: %s",
            self.group_id,
            self.state.value,
            self.generation_id,
            reason,
        )
        if self.state is GroupState.COMPLETING_REBALANCE:
            # Members waiting for their assignment must rejoin instead.
            self._reset_and_propagate_assignment(ErrorCode.REBALANCE_IN_PROGRESS, now_ms)
        self.pending_sync_members.clear()
        self.sync_deadline_ms = None
        initial = self.state is GroupState.EMPTY
        self._transition_to(GroupState.PREPARING_REBALANCE, now_ms)
        if initial:
            # Give other members of a starting application a chance to join the same generation.
            delay = self.config.group_initial_rebalance_delay_ms
            self.initial_delay = (delay, max(self.rebalance_timeout_ms() - delay, 0))
            self.new_member_added = False
            self.join_deadline_ms = now_ms + delay
        elif self.has_all_members_joined():
            self._complete_join(now_ms)
        else:
            self.initial_delay = None
            self.join_deadline_ms = now_ms + self.rebalance_timeout_ms()

    def _on_join_deadline(self, now_ms: int) -> None:
        if self.initial_delay is not None:
            delay, remaining = self.initial_delay
            if self.new_member_added and remaining != 0:
                # Someone joined during the delay: wait once more, within the rebalance timeout.
                self.new_member_added = False
                next_delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
                self.initial_delay = (next_delay, max(remaining - delay, 0))
                self.join_deadline_ms = now_ms + next_delay
                return
        self._complete_join(now_ms)

    def _complete_join(self, now_ms: int) -> None:
        self.join_deadline_ms = None
        self.initial_delay = None
        # Dynamic members that did not rejoin in time are gone; static members keep their place.
        for member in [m for m in self.members.values() if not m.awaiting_join and not m.is_static]:
            self._remove_member(
                member.member_id, ErrorCode.UNKNOWN_MEMBER_ID, "it did not rejoin within the rebalance"
            )
        if self.state is GroupState.DEAD:
            return
        if not self._maybe_elect_new_joined_leader() and self.members:
            # Only absent static members are left: wait another rebalance timeout for them (or their sessions).
            self.join_deadline_ms = now_ms + self.rebalance_timeout_ms()
            return
        self._init_next_generation(now_ms)
        if self.state is GroupState.EMPTY:
            self._store_group = True
            return
        for member in self.members.values():
            if member.join_ticket is not None:
                self._complete(member.join_ticket, self._join_result(member.member_id))
                member.join_ticket = None
            member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
            member.is_new = False
            self.pending_sync_members.add(member.member_id)
        # Members that never send SyncGroup would block the group forever.
        self.sync_deadline_ms = now_ms + self.rebalance_timeout_ms()

    def _maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join:
            return True
        for member in self.members.values():
            if member.awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    def _init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self._compute_subscribed_topics()
            self._transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
            log.info(
                "stabilized group %s generation %d (protocol %s) with %d members",
                self.group_id,
                self.generation_id,
                self.protocol_name,
                len(self.members),
            )
        else:
            self.protocol_name = None
            self._compute_subscribed_topics()
            self._transition_to(GroupState.EMPTY, now_ms)
            log.info("group %s with generation %d is now empty", self.group_id, self.generation_id)
        self.pending_sync_members.clear()

    def _compute_subscribed_topics(self) -> None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            self.subscribed_topics = None
            return
        if not self.members:
            self.subscribed_topics = frozenset()
            return
        if self.protocol_name is None:
            self.subscribed_topics = None
            return
        topics: set[str] = set()
        for member in self.members.values():
            member_topics = subscribed_topics_of(member.metadata(self.protocol_name))
            if member_topics is None:
                self.subscribed_topics = None
                return
            topics |= member_topics
        self.subscribed_topics = frozenset(topics)

    def _reset_and_propagate_assignment(self, error: ErrorCode, now_ms: int) -> None:
        for member in self.members.values():
            member.assignment = b""
        self._propagate_assignment(error, now_ms)

    def _propagate_assignment(self, error: ErrorCode, now_ms: int) -> None:
        ok = error is ErrorCode.NONE
        for member in self.members.values():
            if member.sync_ticket is None:
                continue
            self._complete(
                member.sync_ticket,
                SyncResult(
                    error,
                    assignment=member.assignment,
                    protocol_type=self.protocol_type if ok else None,
                    protocol_name=self.protocol_name if ok else None,
                ),
            )
            member.sync_ticket = None
            # Sessions did not run while the member waited for its answer (error or not): start counting now.
            member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms

    # ---- SyncGroup ---------------------------------------------------------------------------------------------

    def sync(self, req: SyncRequest, now_ms: int) -> tuple[SyncResult | Pending, Effects]:
        ticket = next(self._tickets)
        return self._answer(ticket, self._sync(req, ticket, now_ms))

    def _sync(self, req: SyncRequest, ticket: int, now_ms: int) -> SyncResult | None:
        if self.state is GroupState.DEAD:
            return SyncResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        error = self.validate_member(req.member_id, req.group_instance_id)
        if error is not ErrorCode.NONE:
            return SyncResult(error)
        if req.generation_id != self.generation_id:
            return SyncResult(ErrorCode.ILLEGAL_GENERATION)
        if _inconsistent(req.protocol_type, self.protocol_type) or _inconsistent(
            req.protocol_name, self.protocol_name
        ):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if self.state is GroupState.EMPTY:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if self.state is GroupState.PREPARING_REBALANCE:
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        member = self.members[req.member_id]
        self._remove_pending_sync_member(req.member_id)
        if self.state is GroupState.STABLE:
            member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
            return SyncResult(ErrorCode.NONE, member.assignment, self.protocol_type, self.protocol_name)
        # CompletingRebalance: park until the leader's assignment arrives.
        if member.sync_ticket is not None:
            self._complete(member.sync_ticket, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        member.sync_ticket = ticket
        if self.is_leader(req.member_id):
            given = dict(req.assignments)
            for m in self.members.values():
                # Members the leader left out get an empty assignment.
                m.assignment = given.get(m.member_id, b"")
            self._store_group = True
            self._propagate_assignment(ErrorCode.NONE, now_ms)
            self._transition_to(GroupState.STABLE, now_ms)
            log.info(
                "assignment received from leader %s for group %s generation %d",
                req.member_id,
                self.group_id,
                self.generation_id,
            )
        return None

    def _remove_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members.discard(member_id)
        if not self.pending_sync_members:
            self.sync_deadline_ms = None

    # ---- Heartbeat ---------------------------------------------------------------------------------------------

    def heartbeat(
        self, member_id: str, group_instance_id: str | None, generation_id: int, now_ms: int
    ) -> ErrorCode:
        if self.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self.validate_member(member_id, group_instance_id)
        if error is not ErrorCode.NONE:
            return error
        if generation_id != self.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if self.state is GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        member = self.members[member_id]
        member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
        if self.state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        # CompletingRebalance counts as alive too: clients heartbeat between their JoinGroup and SyncGroup answers.
        return ErrorCode.NONE

    # ---- LeaveGroup --------------------------------------------------------------------------------------------

    def leave(self, members: Sequence[MemberIdentity], now_ms: int) -> tuple[LeaveResult, Effects]:
        if self.state is GroupState.DEAD:
            return LeaveResult(ErrorCode.COORDINATOR_NOT_AVAILABLE), NO_EFFECTS
        results: list[LeaveMemberResult] = []
        removed_any = False
        for identity in members:
            error = self._leave_one(identity)
            removed_any |= error is ErrorCode.NONE
            results.append(LeaveMemberResult(identity.member_id, identity.group_instance_id, error))
        if removed_any:
            if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(now_ms, "members left")
            elif self.state is GroupState.PREPARING_REBALANCE:
                self._maybe_complete_join_phase(now_ms)
        return LeaveResult(ErrorCode.NONE, tuple(results)), self._drain()

    def _leave_one(self, identity: MemberIdentity) -> ErrorCode:
        if identity.member_id == "":
            # An admin removing a static member by its instance id alone (KIP-345).
            if identity.group_instance_id is not None and identity.group_instance_id in self.static_members:
                self._remove_member(
                    self.static_members[identity.group_instance_id],
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"static instance {identity.group_instance_id} removed by LeaveGroup",
                )
                return ErrorCode.NONE
            return ErrorCode.UNKNOWN_MEMBER_ID
        if identity.member_id in self.pending_members and identity.group_instance_id is None:
            del self.pending_members[identity.member_id]
            return ErrorCode.NONE
        error = self.validate_member(identity.member_id, identity.group_instance_id)
        if error is ErrorCode.NONE:
            self._remove_member(identity.member_id, ErrorCode.UNKNOWN_MEMBER_ID, "it sent LeaveGroup")
        return error

    # ---- OffsetCommit ------------------------------------------------------------------------------------------

    def validate_offset_commit(
        self, member_id: str, group_instance_id: str | None, generation_id: int, now_ms: int
    ) -> ErrorCode:
        """Whether a commit may go ahead; a member's commit also counts as a heartbeat."""
        if self.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and self.state is GroupState.EMPTY:
            # The admin client, or a consumer that assigns partitions itself and only stores offsets here.
            return ErrorCode.NONE
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self.validate_member(member_id, group_instance_id)
            if error is not ErrorCode.NONE:
                return error
            if generation_id != self.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        else:
            # A commit without member id and generation (v0, or a manual-assign consumer) while the group is
            # managed by members would overwrite their progress.
            return ErrorCode.UNKNOWN_MEMBER_ID
        if self.state is GroupState.COMPLETING_REBALANCE:
            # The member has its new generation but not its assignment yet; make it finish the rebalance first.
            return ErrorCode.REBALANCE_IN_PROGRESS
        member = self.members[member_id]
        member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
        return ErrorCode.NONE

    def validate_txn_offset_commit(
        self, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        """Whether a TxnOffsetCommit may go ahead (KIP-447): a producer that names no member may commit whatever the
        group's state; one that names a member and generation (a consumer's group metadata) must be current."""
        if self.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self.validate_member(member_id, group_instance_id)
            if error is not ErrorCode.NONE:
                return error
            if generation_id != self.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        return ErrorCode.NONE

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode:
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if known != member_id:
                # Another process took over this instance id: this one is a zombie.
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ErrorCode.NONE

    # ---- timers ------------------------------------------------------------------------------------------------

    def on_tick(self, now_ms: int) -> Effects:
        """Fire every timer due at `now_ms`. Each timer fires at most once per call, so a zero timeout cannot loop."""
        fired: set[tuple[int, str]] = set()
        while True:
            due = self._earliest_due(now_ms, fired)
            if due is None:
                break
            kind, key = due
            fired.add(due)
            if kind == 0:
                self._on_pending_member_expired(key, now_ms)
            elif kind == 1:
                self._on_session_expired(key, now_ms)
            elif kind == 2:
                self._on_sync_deadline(now_ms)
            else:
                self._on_join_deadline(now_ms)
        return self._drain()

    def _earliest_due(self, now_ms: int, fired: set[tuple[int, str]]) -> tuple[int, str] | None:
        # (deadline, kind, key); at equal deadlines sessions go before the sync and join timers.
        candidates: list[tuple[int, int, str]] = [(d, 0, mid) for mid, d in self.pending_members.items()]
        candidates.extend(
            (m.heartbeat_deadline_ms, 1, m.member_id)
            for m in self.members.values()
            if m.heartbeat_deadline_ms is not None
        )
        if self.sync_deadline_ms is not None:
            candidates.append((self.sync_deadline_ms, 2, ""))
        if self.join_deadline_ms is not None:
            candidates.append((self.join_deadline_ms, 3, ""))
        due = sorted(c for c in candidates if c[0] <= now_ms and (c[1], c[2]) not in fired)
        if not due:
            return None
        return due[0][1], due[0][2]

    def _on_pending_member_expired(self, member_id: str, now_ms: int) -> None:
        # It never came back with the id we gave it.
        self.pending_members.pop(member_id, None)
        if self.state is GroupState.PREPARING_REBALANCE and self.has_all_members_joined():
            self._complete_join(now_ms)

    def _on_session_expired(self, member_id: str, now_ms: int) -> None:
        member = self.members[member_id]
        if not member.is_new and (member.awaiting_join or member.awaiting_sync):
            # A parked request is proof of life; the rebalance and sync timers bound the wait instead.
            member.heartbeat_deadline_ms = None
            return
        timeout = self.config.new_member_join_timeout_ms if member.is_new else member.session_timeout_ms
        self._remove_member(
            member_id, ErrorCode.UNKNOWN_MEMBER_ID, f"no heartbeat or request within {timeout} ms"
        )
        self._maybe_complete_join_after_removal(now_ms, f"member {member_id} expired")

    def _maybe_complete_join_after_removal(self, now_ms: int, reason: str) -> None:
        if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(now_ms, reason)
        elif self.state is GroupState.PREPARING_REBALANCE and self.has_all_members_joined():
            self._complete_join(now_ms)

    def _on_sync_deadline(self, now_ms: int) -> None:
        self.sync_deadline_ms = None
        if (
            self.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)
            or not self.pending_sync_members
        ):
            return
        for member_id in sorted(self.pending_sync_members):
            self._remove_member(
                member_id, ErrorCode.UNKNOWN_MEMBER_ID, "it sent no SyncGroup within the rebalance timeout"
            )
        self._prepare_rebalance(now_ms, "members did not sync in time")

    # ---- removal and death -------------------------------------------------------------------------------------

    def _remove_member(self, member_id: str, error: ErrorCode, reason: str) -> None:
        log.info(
            "removing member %s from group %s at generation %d: %s",
            member_id,
            self.group_id,
            self.generation_id,
            reason,
        )
        member = self.members.pop(member_id)
        # A member removed while its JoinGroup is parked (e.g. a new member timing out) learns it must start over.
        if member.join_ticket is not None:
            self._complete(member.join_ticket, JoinResult(error, member_id=""))
        if member.sync_ticket is not None:
            self._complete(member.sync_ticket, SyncResult(error))
        if (
            member.group_instance_id is not None
            and self.static_members.get(member.group_instance_id) == member_id
        ):
            del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.discard(member_id)

    def mark_dead(self, now_ms: int, error: ErrorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE) -> Effects:
        """The group is deleted or its partition unloaded: answer every parked request with `error`."""
        for member in self.members.values():
            if member.join_ticket is not None:
                self._complete(member.join_ticket, JoinResult(error, member_id=member.member_id))
                member.join_ticket = None
            if member.sync_ticket is not None:
                self._complete(member.sync_ticket, SyncResult(error))
                member.sync_ticket = None
        self._transition_to(GroupState.DEAD, now_ms)
        self.join_deadline_ms = None
        self.sync_deadline_ms = None
        self.initial_delay = None
        self.pending_members.clear()
        for member in self.members.values():
            member.heartbeat_deadline_ms = None
        return self._drain()

    # ---- loading -----------------------------------------------------------------------------------------------

    def restore(
        self,
        *,
        generation_id: int,
        protocol_type: str | None,
        protocol_name: str | None,
        leader_id: str | None,
        state_timestamp_ms: int | None,
        members: Sequence[Member],
        now_ms: int,
    ) -> None:
        """Rebuild the group from its last GroupMetadata record: Stable with its members, or Empty."""
        self.generation_id = generation_id
        self.protocol_type = protocol_type or None
        self.protocol_name = protocol_name
        self.state_timestamp_ms = state_timestamp_ms
        self.members = {}
        self.static_members = {}
        for member in members:
            # Sessions start over: members that really left will time out.
            member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
            self.members[member.member_id] = member
            if member.group_instance_id is not None:
                self.static_members[member.group_instance_id] = member.member_id
        self.leader_id = leader_id if leader_id in self.members else next(iter(self.members), None)
        self.state = GroupState.STABLE if self.members else GroupState.EMPTY
        self.previous_state = self.state
        self._compute_subscribed_topics()

    # ---- effects plumbing --------------------------------------------------------------------------------------

    def _complete(self, ticket: int, result: JoinResult | SyncResult) -> None:
        self._completions.append(Completion(ticket, result))

    def _drain(self) -> Effects:
        if not self._completions and not self._store_group:
            return NO_EFFECTS
        effects = Effects(tuple(self._completions), self._store_group)
        self._completions = []
        self._store_group = False
        return effects

    def _answer(self, ticket: int, result: R | None) -> tuple[R | Pending, Effects]:
        """The caller's answer: given directly, taken from this call's completions, or parked under its ticket."""
        if result is not None:
            return result, self._drain()
        for i, completion in enumerate(self._completions):
            if completion.ticket == ticket:
                del self._completions[i]
                own: R = completion.result  # type: ignore[assignment]
                return own, self._drain()
        return Pending(ticket), self._drain()


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
