"""One transactional id's state at its coordinator, and the transitions between states (Kafka's TransactionMetadata).

    Empty ──AddPartitions──> Ongoing ──EndTxn(commit)──> PrepareCommit ──markers written──> CompleteCommit
      ^                        │ │                                                                │
      │                        │ └──EndTxn(abort), timeout, new producer──> PrepareAbort ──> CompleteAbort
      └──InitProducerId────────┴──────────────────────────────────────────────────────────────────┘
    (Empty, CompleteCommit, CompleteAbort ──expiry──> Dead: the record is deleted)

A transition is two steps. `prepare_*` checks it is legal and returns the target (`TxnTransit`), leaving the current
state in place and marking the transition pending; the coordinator writes the target to `__transaction_state` and
only once that write is acknowledged calls `complete` (or `abort_pending` if it failed). While a transition is
pending, other requests for the id get CONCURRENT_TRANSACTIONS. PrepareEpochFence is never written: it is the pending
state of an Ongoing transaction whose producer is being fenced (a timeout, or a new producer with the same id), which
goes on to PrepareAbort with the bumped epoch.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kbroker.common import TopicPartition
from protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

MAX_EPOCH = 32767  # Short.MAX_VALUE


class TxnState(enum.Enum):
    """Kafka's states, with the byte `__transaction_state` stores and the name DescribeTransactions shows."""

    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    @property
    def id(self) -> int:
        return self.value[0]

    @property
    def display_name(self) -> str:
        return self.value[1]

    @classmethod
    def from_id(cls, state_id: int) -> TxnState:
        for state in cls:
            if state.id == state_id:
                return state
        raise ValueError(f"unknown transaction state {state_id}")

    @classmethod
    def from_name(cls, name: str) -> TxnState | None:
        return next((state for state in cls if state.display_name == name), None)


_E, _O, _PC, _PA, _CC, _CA, _D, _PF = TxnState

# The states each state may be reached from (Kafka's validPreviousStates).
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    _E: frozenset({_E, _CC, _CA}),
    _O: frozenset({_O, _E, _CC, _CA}),
    _PC: frozenset({_O}),
    _PA: frozenset({_O, _PF}),
    _CC: frozenset({_PC}),
    _CA: frozenset({_PA}),
    _D: frozenset({_E, _CA, _CC}),
    _PF: frozenset({_O}),
}

PREPARED = frozenset({_PC, _PA})
COMPLETED = frozenset({_CC, _CA})


def is_epoch_exhausted(epoch: int) -> bool:
    """An epoch of Short.MAX_VALUE - 1 or more leaves no room to fence the producer: the id gets a new producer id."""
    return epoch >= MAX_EPOCH - 1


class IllegalTransition(RuntimeError):
    """A transition the state machine forbids: a bug in the coordinator, never a client's doing."""


@dataclass(frozen=True, slots=True)
class TxnTransit:
    """The target of a pending transition: the metadata as it will be once written."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    start_ms: int
    last_update_ms: int


class TransactionMetadata:
    def __init__(
        self,
        transactional_id: str,
        producer_id: int,
        *,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        last_producer_id: int = NO_PRODUCER_ID,
        last_producer_epoch: int = NO_PRODUCER_EPOCH,
        timeout_ms: int,
        state: TxnState = TxnState.EMPTY,
        partitions: frozenset[TopicPartition] = frozenset(),
        start_ms: int = -1,
        last_update_ms: int,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.last_producer_id = last_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.timeout_ms = timeout_ms
        self.state = state
        self.partitions: set[TopicPartition] = set(partitions)
        self.start_ms = start_ms
        self.last_update_ms = last_update_ms
        self.pending: TxnState | None = None
        self.failed_epoch_fence = False
        """An epoch fence whose write failed: the next fence reuses its epoch rather than bumping again (the bumped
        epoch was never returned to anyone)."""

    def __repr__(self) -> str:
        return (
            f"TransactionMetadata({self.transactional_id!r}, pid={self.producer_id}, epoch={self.producer_epoch}, "
            f"{self.state.display_name}, pending={self.pending and self.pending.display_name})"
        )

    @property
    def pending_transition(self) -> bool:
        return self.pending is not None

    @property
    def epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def current(self) -> TxnTransit:
        return TxnTransit(
            self.producer_id,
            self.last_producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            self.state,
            frozenset(self.partitions),
            self.start_ms,
            self.last_update_ms,
        )

    # ---- preparing transitions ---------------------------------------------------------------------------------

    def _prepare(
        self,
        state: TxnState,
        *,
        producer_id: int | None = None,
        producer_epoch: int | None = None,
        last_producer_epoch: int | None = None,
        timeout_ms: int | None = None,
        partitions: frozenset[TopicPartition] | None = None,
        start_ms: int | None = None,
        update_ms: int | None = None,
    ) -> TxnTransit:
        if self.pending is not None:
            raise IllegalTransition(f"{self}: a transition to {self.pending.display_name} is already pending")
        if self.state not in VALID_PREVIOUS[state]:
            raise IllegalTransition(f"{self}: {state.display_name} cannot follow {self.state.display_name}")
        epoch = self.producer_epoch if producer_epoch is None else producer_epoch
        if state is not TxnState.DEAD and epoch < 0:
            raise IllegalTransition(f"{self}: epoch {epoch} in {state.display_name}")
        self.pending = state
        return TxnTransit(
            producer_id=self.producer_id if producer_id is None else producer_id,
            last_producer_id=self.producer_id,
            producer_epoch=epoch,
            last_producer_epoch=self.last_producer_epoch
            if last_producer_epoch is None
            else last_producer_epoch,
            timeout_ms=self.timeout_ms if timeout_ms is None else timeout_ms,
            state=state,
            partitions=frozenset(self.partitions) if partitions is None else partitions,
            start_ms=self.start_ms if start_ms is None else start_ms,
            last_update_ms=self.last_update_ms if update_ms is None else update_ms,
        )

    def prepare_increment_epoch(
        self, timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> TxnTransit | None:
        """InitProducerId on an Empty or completed id: the next epoch (epoch 0 for a new id). With an expected epoch
        (KIP-360, a producer recovering from an error): the current one bumps it, the previous one is a retry of a
        bump that succeeded (the same epoch back), any other is fenced: None."""
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            return None
        return self._prepare(
            TxnState.EMPTY,
            producer_epoch=epoch,
            last_producer_epoch=last,
            timeout_ms=timeout_ms,
            partitions=frozenset(),
            start_ms=-1,
            update_ms=now_ms,
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, timeout_ms: int, now_ms: int, record_last_epoch: bool
    ) -> TxnTransit:
        """InitProducerId when the epochs of the current producer id are exhausted: a new producer id at epoch 0."""
        return self._prepare(
            TxnState.EMPTY,
            producer_id=new_producer_id,
            producer_epoch=0,
            last_producer_epoch=self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
            timeout_ms=timeout_ms,
            partitions=frozenset(),
            start_ms=-1,
            update_ms=now_ms,
        )

    def prepare_fence_epoch(self) -> TxnTransit:
        """Fence the producer of an Ongoing transaction (timed out, or replaced by a new producer with this id): the
        epoch goes up by one (unless an earlier fence failed to be written) and the transaction will be aborted."""
        if self.producer_epoch >= MAX_EPOCH:
            raise IllegalTransition(f"{self}: cannot fence at epoch {self.producer_epoch}")
        epoch = self.producer_epoch if self.failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(
            TxnState.PREPARE_EPOCH_FENCE, producer_epoch=epoch, last_producer_epoch=NO_PRODUCER_EPOCH
        )

    def prepare_add_partitions(self, partitions: frozenset[TopicPartition], now_ms: int) -> TxnTransit:
        start = now_ms if self.state in (TxnState.EMPTY, *COMPLETED) else self.start_ms
        return self._prepare(
            TxnState.ONGOING,
            partitions=frozenset(self.partitions) | partitions,
            start_ms=start,
            update_ms=now_ms,
        )

    def prepare_abort_or_commit(self, state: TxnState, now_ms: int) -> TxnTransit:
        return self._prepare(state, update_ms=now_ms)

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        state = TxnState.COMPLETE_COMMIT if self.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        # The decision is written: a later fence may bump the epoch again.
        self.failed_epoch_fence = False
        return self._prepare(state, partitions=frozenset(), update_ms=now_ms)

    def prepare_dead(self) -> TxnTransit:
        return self._prepare(TxnState.DEAD, partitions=frozenset())

    # ---- completing them ---------------------------------------------------------------------------------------

    def abort_pending(self) -> None:
        """The pending transition's write failed: the state stays as it was."""
        self.pending = None

    def complete(self, transit: TxnTransit) -> None:
        """The pending transition's record is written: it becomes the state."""
        if self.pending is not transit.state:
            raise IllegalTransition(
                f"{self}: completing {transit.state.display_name}, not the pending transition"
            )
        self.pending = None
        self.producer_id = transit.producer_id
        self.last_producer_id = transit.last_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.timeout_ms = transit.timeout_ms
        self.state = transit.state
        self.partitions = set(transit.partitions)
        self.start_ms = transit.start_ms
        self.last_update_ms = transit.last_update_ms
