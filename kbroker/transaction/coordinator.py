"""The transaction coordinator: every transactional id of the `__transaction_state` partitions this node leads, and
one synchronous method per decision (Kafka's TransactionCoordinator and TransactionStateManager).

Nothing here waits. A request's method either answers at once (an error code, or NONE when there is nothing to
change) or returns what must happen next: a `TxnWrite` (a transition to write to `__transaction_state`; the
service writes it and calls `complete_write`), `NEED_PRODUCER_ID` (call again with a fresh producer id), a
`FenceThenAbort` (the id's open transaction must be aborted under a bumped epoch first), or, once a commit or abort
is written, a `MarkerJob` (the markers to write on every partition of the transaction, then the Complete state).
The service (kbroker/transaction/service.py) does the writing, the waiting and the timers.

Each loaded partition has a coordinator epoch: the leader epoch of our leadership of it. Markers carry it, so a
partition leader refuses the markers of a coordinator that has lost its partition (TRANSACTION_COORDINATOR_FENCED),
and a write that completes after the partition moved away is void (NOT_COORDINATOR).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kbroker.common import TopicPartition
from kbroker.transaction import records as rec
from kbroker.transaction.metadata import (
    COMPLETED,
    PREPARED,
    IllegalTransition,
    TransactionMetadata,
    TxnState,
    TxnTransit,
    is_epoch_exhausted,
)
from protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class TransactionConfig:
    """The broker settings the coordinator reads (Kafka's names, dots as underscores)."""

    transaction_state_log_num_partitions: int = 50
    transaction_max_timeout_ms: int = 900_000
    transactional_id_expiration_ms: int = 604_800_000


@dataclass(slots=True)
class TxnPartition:
    """A loaded `__transaction_state` partition: its coordinator epoch and its transactional ids."""

    coordinator_epoch: int
    txns: dict[str, TransactionMetadata] = field(default_factory=dict)


@dataclass(slots=True)
class TxnWrite:
    """A pending transition of one transactional id, to be written to its `__transaction_state` partition."""

    partition: int
    coordinator_epoch: int
    metadata: TransactionMetadata
    transit: TxnTransit
    epoch_fence: bool = False
    """The transition aborts the transaction of a producer being fenced (its epoch was bumped in memory)."""

    def record(self) -> rec.Record:
        return rec.record(self.metadata.transactional_id, self.transit)


class NeedProducerId:
    """The answer needs a producer id the coordinator does not have: allocate one and ask again."""


NEED_PRODUCER_ID = NeedProducerId()


@dataclass(frozen=True, slots=True)
class FenceThenAbort:
    """InitProducerId found the id's transaction open: abort it under the bumped epoch (not returned to anyone),
    then answer CONCURRENT_TRANSACTIONS, so the producer asks again and gets the epoch after it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int


@dataclass(slots=True)
class MarkerJob:
    """A decided transaction: write its markers on `pending`, then write `complete` (CompleteCommit/Abort)."""

    write: TxnWrite
    commit: bool
    producer_id: int
    producer_epoch: int
    pending: set[TopicPartition]
    fenced: set[TopicPartition] = field(default_factory=set)
    """Partitions that refused the marker as stale (an older producer or coordinator epoch): the job stops."""

    @property
    def transactional_id(self) -> str:
        return self.write.metadata.transactional_id


@dataclass(frozen=True, slots=True)
class TxnDescription:
    """DescribeTransactions' answer for one id; an error leaves the other fields 0, as Kafka's answer does."""

    transactional_id: str
    error: ErrorCode
    state: str = ""
    producer_id: int = 0
    producer_epoch: int = 0
    timeout_ms: int = 0
    start_ms: int = 0
    partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class TxnListing:
    transactional_id: str
    producer_id: int
    state: str


def append_error(code: ErrorCode) -> ErrorCode:
    """What a client hears when a `__transaction_state` write failed with `code` (Kafka's mapping)."""
    if code in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


class TransactionCoordinator:
    def __init__(self, config: TransactionConfig | None = None) -> None:
        self.config = config or TransactionConfig()
        self.partitions: dict[int, TxnPartition] = {}
        self.active = False
        """False until the service knows `__transaction_state`: ListTransactions answers COORDINATOR_NOT_AVAILABLE."""

    def partition_for(self, transactional_id: str) -> int:
        return rec.transaction_partition_for(
            transactional_id, self.config.transaction_state_log_num_partitions
        )

    def _owner(self, transactional_id: str) -> tuple[int, TxnPartition] | ErrorCode:
        partition = self.partition_for(transactional_id)
        owned = self.partitions.get(partition)
        if owned is None:
            return ErrorCode.NOT_COORDINATOR
        return partition, owned

    def transactions(self) -> Iterator[TransactionMetadata]:
        for owned in self.partitions.values():
            yield from owned.txns.values()

    # ---- InitProducerId ----------------------------------------------------------------------------------------

    def prepare_init(
        self,
        transactional_id: str,
        timeout_ms: int,
        expected: tuple[int, int] | None,
        now_ms: int,
        new_producer_id: int | None = None,
    ) -> ErrorCode | TxnWrite | NeedProducerId | FenceThenAbort:
        """InitProducerId with a transactional id. `expected` is the (producer id, epoch) of KIP-360's v3+ request,
        None when the producer sends none."""
        if transactional_id == "":
            return ErrorCode.INVALID_REQUEST
        if not 0 < timeout_ms <= self.config.transaction_max_timeout_ms:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT
        owner = self._owner(transactional_id)
        if isinstance(owner, ErrorCode):
            return owner
        partition, owned = owner
        md = owned.txns.get(transactional_id)
        if md is None:
            if new_producer_id is None:
                return NEED_PRODUCER_ID
            md = TransactionMetadata(
                transactional_id, new_producer_id, timeout_ms=timeout_ms, last_update_ms=now_ms
            )
            owned.txns[transactional_id] = md
            new_producer_id = None
        if md.pending_transition:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if expected is not None and not (
            md.producer_epoch < 0
            or expected[0] == md.producer_id
            or (expected[0] == md.last_producer_id and is_epoch_exhausted(expected[1]))
        ):
            return ErrorCode.PRODUCER_FENCED
        if md.state in PREPARED:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if md.state is TxnState.ONGOING:
            fence = md.prepare_fence_epoch()
            return FenceThenAbort(transactional_id, fence.producer_id, fence.producer_epoch)
        if md.state not in (TxnState.EMPTY, *COMPLETED):
            raise IllegalTransition(f"{md}: InitProducerId in state {md.state.display_name}")
        if md.epoch_exhausted and (expected is None or expected[1] == md.producer_epoch):
            if new_producer_id is None:
                return NEED_PRODUCER_ID
            transit = md.prepare_producer_id_rotation(
                new_producer_id, timeout_ms, now_ms, expected is not None
            )
        else:
            maybe = md.prepare_increment_epoch(timeout_ms, None if expected is None else expected[1], now_ms)
            if maybe is None:
                return ErrorCode.PRODUCER_FENCED
            transit = maybe
        return TxnWrite(partition, owned.coordinator_epoch, md, transit)

    # ---- AddPartitionsToTxn / AddOffsetsToTxn --------------------------------------------------------------------

    def _producer_check(
        self, transactional_id: str, producer_id: int, producer_epoch: int
    ) -> tuple[int, TxnPartition, TransactionMetadata] | ErrorCode:
        if transactional_id == "":
            return ErrorCode.INVALID_REQUEST
        owner = self._owner(transactional_id)
        if isinstance(owner, ErrorCode):
            return owner
        partition, owned = owner
        md = owned.txns.get(transactional_id)
        if md is None or md.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if md.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        return partition, owned, md

    def prepare_add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        now_ms: int,
    ) -> ErrorCode | TxnWrite:
        """Add partitions to the producer's transaction, beginning it if need be (NONE: they are in it already)."""
        checked = self._producer_check(transactional_id, producer_id, producer_epoch)
        if isinstance(checked, ErrorCode):
            return checked
        partition, owned, md = checked
        if md.pending_transition or md.state in PREPARED:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        added = frozenset(partitions)
        if md.state is TxnState.ONGOING and added <= md.partitions:
            return ErrorCode.NONE
        return TxnWrite(partition, owned.coordinator_epoch, md, md.prepare_add_partitions(added, now_ms))

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """KIP-890: are these partitions in the producer's ongoing transaction? (AddPartitionsToTxn verify_only, a
        partition leader asking before it lets a batch begin a transaction.) TRANSACTION_ABORTABLE for those that
        are not."""
        wanted = list(partitions)
        checked = self._producer_check(transactional_id, producer_id, producer_epoch)
        if isinstance(checked, ErrorCode):
            return dict.fromkeys(wanted, checked)
        _, _, md = checked
        if md.state in PREPARED:
            return dict.fromkeys(wanted, ErrorCode.CONCURRENT_TRANSACTIONS)
        ongoing = md.state is TxnState.ONGOING
        return {
            tp: ErrorCode.NONE if ongoing and tp in md.partitions else ErrorCode.TRANSACTION_ABORTABLE
            for tp in wanted
        }

    # ---- EndTxn ------------------------------------------------------------------------------------------------

    def prepare_end(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        from_client: bool,
        now_ms: int,
    ) -> ErrorCode | TxnWrite:
        """EndTxn (or the coordinator's own abort of a fenced producer's transaction, `from_client` False): write
        PrepareCommit / PrepareAbort. NONE for a retry of an end already complete."""
        if transactional_id == "":
            return ErrorCode.INVALID_REQUEST
        owner = self._owner(transactional_id)
        if isinstance(owner, ErrorCode):
            return owner
        partition, owned = owner
        md = owned.txns.get(transactional_id)
        if md is None or md.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        # Strict for clients (they never bump the epoch); the coordinator's own abort comes with the bumped one.
        if (from_client and producer_epoch != md.producer_epoch) or producer_epoch < md.producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        fencing = md.pending is TxnState.PREPARE_EPOCH_FENCE
        if md.pending_transition and not (fencing and not commit and not from_client):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        state = md.state
        if state is TxnState.ONGOING:
            if fencing:
                # The fence becomes this abort, under the bumped epoch.
                md.pending = None
                md.producer_epoch = producer_epoch
                md.last_producer_epoch = -1
            target = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
            transit = md.prepare_abort_or_commit(target, now_ms)
            return TxnWrite(partition, owned.coordinator_epoch, md, transit, epoch_fence=fencing)
        if state is TxnState.COMPLETE_COMMIT:
            return ErrorCode.NONE if commit else ErrorCode.INVALID_TXN_STATE
        if state is TxnState.COMPLETE_ABORT:
            return ErrorCode.NONE if not commit else ErrorCode.INVALID_TXN_STATE
        if state is TxnState.PREPARE_COMMIT:
            return ErrorCode.CONCURRENT_TRANSACTIONS if commit else ErrorCode.INVALID_TXN_STATE
        if state is TxnState.PREPARE_ABORT:
            return ErrorCode.CONCURRENT_TRANSACTIONS if not commit else ErrorCode.INVALID_TXN_STATE
        if state is TxnState.EMPTY:
            return ErrorCode.INVALID_TXN_STATE
        raise IllegalTransition(f"{md}: EndTxn in state {state.display_name}")

    def begin_markers(self, write: TxnWrite, now_ms: int) -> ErrorCode | MarkerJob:
        """PrepareCommit/PrepareAbort is written (`write`): the markers may go out. The Complete state is prepared
        now, so the id refuses everything but retries until the markers are written."""
        md = write.metadata
        if not self._still_owned(write):
            return ErrorCode.NOT_COORDINATOR
        if md.producer_id != write.transit.producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if md.producer_epoch != write.transit.producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if md.pending_transition:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if md.state not in PREPARED:
            return ErrorCode.INVALID_TXN_STATE
        return self._marker_job(write.partition, write.coordinator_epoch, md, now_ms)

    def _marker_job(
        self, partition: int, coordinator_epoch: int, md: TransactionMetadata, now_ms: int
    ) -> MarkerJob:
        commit = md.state is TxnState.PREPARE_COMMIT
        pending = set(md.partitions)
        producer_id, producer_epoch = md.producer_id, md.producer_epoch
        complete = TxnWrite(partition, coordinator_epoch, md, md.prepare_complete(now_ms))
        return MarkerJob(complete, commit, producer_id, producer_epoch, pending)

    def marker_written(self, job: MarkerJob, tp: TopicPartition) -> None:
        """One partition has its marker: DescribeTransactions stops listing it."""
        job.pending.discard(tp)
        md = job.write.metadata
        if md.state in PREPARED:
            md.partitions.discard(tp)

    # ---- completing writes -------------------------------------------------------------------------------------

    def _still_owned(self, write: TxnWrite) -> bool:
        owned = self.partitions.get(write.partition)
        return (
            owned is not None
            and owned.coordinator_epoch == write.coordinator_epoch
            and owned.txns.get(write.metadata.transactional_id) is write.metadata
        )

    def complete_write(self, write: TxnWrite, error: ErrorCode) -> ErrorCode:
        """The write of `write` ended with `error` (NONE: acknowledged). Returns what the client hears."""
        md = write.metadata
        if not self._still_owned(write):
            # The partition moved (or was reloaded): its new coordinator has the log; this state is gone.
            return ErrorCode.NOT_COORDINATOR
        if error is not ErrorCode.NONE:
            if write.epoch_fence:
                md.failed_epoch_fence = True
            md.abort_pending()
            return append_error(error)
        md.complete(write.transit)
        if md.state is TxnState.DEAD:
            del self.partitions[write.partition].txns[md.transactional_id]
        return ErrorCode.NONE

    # ---- timers ------------------------------------------------------------------------------------------------

    def fence_timed_out(self, now_ms: int) -> list[FenceThenAbort]:
        """Ongoing transactions older than their timeout: each producer is fenced (epoch bumped) and its transaction
        is to be aborted (transaction.abort.timed.out.transaction.cleanup.interval.ms)."""
        out = []
        for md in self.transactions():
            if (
                md.state is TxnState.ONGOING
                and not md.pending_transition
                and md.start_ms + md.timeout_ms < now_ms
            ):
                fence = md.prepare_fence_epoch()
                out.append(FenceThenAbort(md.transactional_id, fence.producer_id, fence.producer_epoch))
        return out

    def expire_ids(self, now_ms: int) -> list[TxnWrite]:
        """Transactional ids idle for transactional.id.expiration.ms with no transaction: their tombstones."""
        out = []
        for partition, owned in self.partitions.items():
            for md in owned.txns.values():
                if (
                    md.state in (TxnState.EMPTY, *COMPLETED)
                    and not md.pending_transition
                    and md.last_update_ms <= now_ms - self.config.transactional_id_expiration_ms
                ):
                    out.append(TxnWrite(partition, owned.coordinator_epoch, md, md.prepare_dead()))
        return out

    # ---- DescribeTransactions / ListTransactions ----------------------------------------------------------------

    def describe(self, transactional_id: str) -> TxnDescription:
        if not self.active:
            return TxnDescription(transactional_id, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if transactional_id == "":
            return TxnDescription(transactional_id, ErrorCode.INVALID_REQUEST)
        owner = self._owner(transactional_id)
        if isinstance(owner, ErrorCode):
            return TxnDescription(transactional_id, owner)
        md = owner[1].txns.get(transactional_id)
        if md is None or md.state is TxnState.DEAD:
            return TxnDescription(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        return TxnDescription(
            transactional_id,
            ErrorCode.NONE,
            md.state.display_name,
            md.producer_id,
            md.producer_epoch,
            md.timeout_ms,
            md.start_ms,
            tuple(sorted(md.partitions)),
        )

    def list_transactions(
        self, states: Iterable[str], producer_ids: Iterable[int], duration_ms: int, now_ms: int
    ) -> tuple[ErrorCode, list[TxnListing], list[str]]:
        """(error, listings, unknown state names). Empty filters mean all; a duration >= 0 keeps transactions that
        have run at least that long."""
        wanted_states = set(states)
        unknown = sorted(name for name in wanted_states if TxnState.from_name(name) is None)
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, [], unknown
        if unknown and wanted_states <= set(unknown):
            return ErrorCode.NONE, [], unknown
        wanted_pids = set(producer_ids)
        listings = [
            TxnListing(md.transactional_id, md.producer_id, md.state.display_name)
            for md in self.transactions()
            if md.state is not TxnState.DEAD
            and (not wanted_states or md.state.display_name in wanted_states)
            and (not wanted_pids or md.producer_id in wanted_pids)
            and (duration_ms < 0 or now_ms - md.start_ms >= duration_ms)
        ]
        return ErrorCode.NONE, listings, unknown

    # ---- loading -----------------------------------------------------------------------------------------------

    def load(
        self, partition: int, coordinator_epoch: int, records: Iterable[rec.Record], now_ms: int
    ) -> list[MarkerJob]:
        """Become the coordinator of a `__transaction_state` partition: its ids from its records. Transactions found
        decided (PrepareCommit/PrepareAbort) but not completed are finished: their markers are (re)written."""
        owned = TxnPartition(coordinator_epoch, rec.load(records))
        self.partitions[partition] = owned
        return [
            self._marker_job(partition, coordinator_epoch, md, now_ms)
            for md in owned.txns.values()
            if md.state in PREPARED
        ]

    def unload(self, partition: int) -> None:
        self.partitions.pop(partition, None)
