"""The transaction coordinator's state machine, as plain synchronous calls (kbroker/transaction/): InitProducerId's
epochs and fencing (KIP-360 retries, epoch exhaustion), AddPartitions, EndTxn and its retries, markers and
completion, failed writes, timeouts, expiry, loading decided transactions back, and the `__transaction_state` bytes.
"""

from __future__ import annotations

import dataclasses

import pytest

from kbroker.common import TopicPartition
from kbroker.transaction import records as rec
from kbroker.transaction.coordinator import (
    NEED_PRODUCER_ID,
    FenceThenAbort,
    MarkerJob,
    TransactionConfig,
    TransactionCoordinator,
    TxnWrite,
)
from kbroker.transaction.metadata import MAX_EPOCH, TxnState
from protocol.errors import ErrorCode as E

pytestmark = pytest.mark.timeout(30)

TX = "tx"
A, B = TopicPartition("a", 0), TopicPartition("b", 1)
TIMEOUT = 60_000


@pytest.fixture
def coordinator() -> TransactionCoordinator:
    c = TransactionCoordinator(TransactionConfig(transaction_state_log_num_partitions=1))
    c.load(0, coordinator_epoch=7, records=[], now_ms=0)
    c.active = True
    return c


def written(c: TransactionCoordinator, decision: object) -> TxnWrite:
    """Complete a write as if the log acknowledged it."""
    assert isinstance(decision, TxnWrite), decision
    assert c.complete_write(decision, E.NONE) is E.NONE
    return decision


def init(c: TransactionCoordinator, now: int = 0, expected: tuple[int, int] | None = None) -> tuple[int, int]:
    decision = c.prepare_init(TX, TIMEOUT, expected, now)
    if decision is NEED_PRODUCER_ID:
        decision = c.prepare_init(TX, TIMEOUT, expected, now, new_producer_id=100)
    w = written(c, decision)
    return w.transit.producer_id, w.transit.producer_epoch


def commit(c: TransactionCoordinator, pid: int, epoch: int, now: int = 0, commit: bool = True) -> MarkerJob:
    w = written(c, c.prepare_end(TX, pid, epoch, commit, True, now))
    job = c.begin_markers(w, now)
    assert isinstance(job, MarkerJob)
    return job


def finish(c: TransactionCoordinator, job: MarkerJob) -> None:
    for tp in list(job.pending):
        c.marker_written(job, tp)
    written(c, job.write)


def state(c: TransactionCoordinator) -> str:
    return c.describe(TX).state


def test_a_transaction_from_init_to_complete(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    assert (pid, epoch, state(c)) == (100, 0, "Empty")
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], now_ms=10))
    assert c.prepare_add_partitions(TX, pid, epoch, [A], 11) is E.NONE, "already in it: nothing to write"
    written(c, c.prepare_add_partitions(TX, pid, epoch, [B], now_ms=12))
    described = c.describe(TX)
    assert (described.state, described.partitions, described.start_ms) == ("Ongoing", (A, B), 10)
    job = commit(c, pid, epoch, now=20)
    assert (job.commit, job.pending, job.write.coordinator_epoch) == (True, {A, B}, 7)
    assert state(c) == "PrepareCommit"
    # Until the markers are written and CompleteCommit is, the id waits.
    assert c.prepare_add_partitions(TX, pid, epoch, [A], 21) is E.CONCURRENT_TRANSACTIONS
    assert c.prepare_init(TX, TIMEOUT, None, 21) is E.CONCURRENT_TRANSACTIONS
    assert c.prepare_end(TX, pid, epoch, True, True, 21) is E.CONCURRENT_TRANSACTIONS
    c.marker_written(job, A)
    assert c.describe(TX).partitions == (B,)
    finish(c, job)
    assert (state(c), c.describe(TX).partitions) == ("CompleteCommit", ())
    assert c.prepare_end(TX, pid, epoch, True, True, 30) is E.NONE, "a retried commit"
    assert c.prepare_end(TX, pid, epoch, False, True, 30) is E.INVALID_TXN_STATE


def test_end_txn_errors(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    assert c.prepare_end(TX, pid, epoch, True, True, 0) is E.INVALID_TXN_STATE, "Empty"
    assert c.prepare_end("nope", pid, epoch, True, True, 0) is E.INVALID_PRODUCER_ID_MAPPING
    assert c.prepare_end(TX, pid + 1, epoch, True, True, 0) is E.INVALID_PRODUCER_ID_MAPPING
    assert c.prepare_end(TX, pid, epoch + 1, True, True, 0) is E.PRODUCER_FENCED
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], 0))
    job = commit(c, pid, epoch, commit=False)
    assert c.prepare_end(TX, pid, epoch, False, True, 0) is E.CONCURRENT_TRANSACTIONS, (
        "its markers are pending"
    )
    finish(c, job)
    assert c.prepare_end(TX, pid, epoch, True, True, 0) is E.INVALID_TXN_STATE, "aborted: no commit"


def test_a_new_producer_fences_the_old_one_and_aborts_its_transaction(
    coordinator: TransactionCoordinator,
) -> None:
    c = coordinator
    pid, epoch = init(c)
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], 0))
    fence = c.prepare_init(TX, TIMEOUT, None, 5)
    assert fence == FenceThenAbort(TX, pid, epoch + 1)
    # The abort under the bumped epoch (what the service does next), then the answer is CONCURRENT_TRANSACTIONS.
    abort = written(c, c.prepare_end(TX, pid, epoch + 1, False, False, 5))
    assert abort.epoch_fence
    job = c.begin_markers(abort, 5)
    assert isinstance(job, MarkerJob)
    assert (job.commit, job.producer_epoch) == (False, epoch + 1)
    finish(c, job)
    # The new producer's retry: a second bump. The old producer is fenced everywhere.
    assert init(c, now=6) == (pid, epoch + 2)
    assert c.prepare_add_partitions(TX, pid, epoch, [A], 7) is E.PRODUCER_FENCED
    assert c.prepare_end(TX, pid, epoch, True, True, 7) is E.PRODUCER_FENCED


def test_a_failed_fence_write_does_not_bump_twice(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], 0))
    fence = c.prepare_init(TX, TIMEOUT, None, 5)
    assert isinstance(fence, FenceThenAbort)
    abort = c.prepare_end(TX, pid, fence.producer_epoch, False, False, 5)
    assert isinstance(abort, TxnWrite)
    assert c.complete_write(abort, E.NOT_ENOUGH_REPLICAS) is E.COORDINATOR_NOT_AVAILABLE
    assert state(c) == "Ongoing"
    again = c.prepare_init(TX, TIMEOUT, None, 6)
    assert again == FenceThenAbort(TX, pid, fence.producer_epoch), "the unwritten epoch is reused"


def test_kip_360_retries_and_fencing(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    assert init(c, expected=(pid, epoch)) == (pid, epoch + 1), "a producer recovering bumps its epoch"
    assert init(c, expected=(pid, epoch)) == (pid, epoch + 1), "the same request again: a retry, same epoch"
    assert c.prepare_init(TX, TIMEOUT, (pid, epoch + 7), 0) is E.PRODUCER_FENCED
    assert c.prepare_init(TX, TIMEOUT, (pid + 50, 0), 0) is E.PRODUCER_FENCED


def test_an_exhausted_epoch_rotates_the_producer_id(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    init(c)
    md = c.partitions[0].txns[TX]
    md.producer_epoch = MAX_EPOCH - 1
    assert c.prepare_init(TX, TIMEOUT, None, 0) is NEED_PRODUCER_ID
    rotated = written(c, c.prepare_init(TX, TIMEOUT, None, 0, new_producer_id=555))
    assert (rotated.transit.producer_id, rotated.transit.producer_epoch) == (555, 0)


def test_init_checks(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    assert c.prepare_init("", TIMEOUT, None, 0) is E.INVALID_REQUEST
    assert c.prepare_init(TX, 0, None, 0) is E.INVALID_TRANSACTION_TIMEOUT
    assert c.prepare_init(TX, 900_001, None, 0) is E.INVALID_TRANSACTION_TIMEOUT
    c.unload(0)
    assert c.prepare_init(TX, TIMEOUT, None, 0) is E.NOT_COORDINATOR


def test_timed_out_transactions_are_fenced_and_aborted(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], now_ms=1000))
    assert c.fence_timed_out(1000 + TIMEOUT) == []
    [fence] = c.fence_timed_out(1001 + TIMEOUT)
    assert fence == FenceThenAbort(TX, pid, epoch + 1)
    job = c.begin_markers(written(c, c.prepare_end(TX, pid, epoch + 1, False, False, 2000 + TIMEOUT)), 0)
    assert isinstance(job, MarkerJob)
    finish(c, job)
    assert (state(c), c.describe(TX).producer_epoch) == ("CompleteAbort", epoch + 1)
    assert c.prepare_end(TX, pid, epoch, True, True, 0) is E.PRODUCER_FENCED


def test_idle_ids_expire(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    init(c, now=1000)
    expiration = c.config.transactional_id_expiration_ms
    assert c.expire_ids(1000 + expiration - 1) == []
    [tombstone] = c.expire_ids(1000 + expiration)
    assert tombstone.record() == (rec.key_bytes(TX), None)
    written(c, tombstone)
    assert c.describe(TX).error is E.TRANSACTIONAL_ID_NOT_FOUND


def test_a_failed_write_changes_nothing(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    add = c.prepare_add_partitions(TX, pid, epoch, [A], 0)
    assert isinstance(add, TxnWrite)
    assert c.complete_write(add, E.NOT_LEADER_OR_FOLLOWER) is E.NOT_COORDINATOR
    assert state(c) == "Empty"
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], 0))


def test_a_write_completing_after_the_partition_moved_is_void(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    add = c.prepare_add_partitions(TX, pid, epoch, [A], 0)
    assert isinstance(add, TxnWrite)
    c.load(0, coordinator_epoch=8, records=[], now_ms=0)  # reloaded at a new epoch meanwhile
    assert c.complete_write(add, E.NONE) is E.NOT_COORDINATOR


def test_verification_answers(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    written(c, c.prepare_add_partitions(TX, pid, epoch, [A], 0))
    assert c.verify_partitions(TX, pid, epoch, [A, B]) == {A: E.NONE, B: E.TRANSACTION_ABORTABLE}
    assert c.verify_partitions(TX, pid, epoch + 1, [A]) == {A: E.PRODUCER_FENCED}
    commit(c, pid, epoch)
    assert c.verify_partitions(TX, pid, epoch, [A]) == {A: E.CONCURRENT_TRANSACTIONS}


def test_loading_finishes_decided_transactions(coordinator: TransactionCoordinator) -> None:
    c = coordinator
    pid, epoch = init(c)
    add = written(c, c.prepare_add_partitions(TX, pid, epoch, [A, B], 0))
    prepared = written(c, c.prepare_end(TX, pid, epoch, True, True, 0))
    log = [add.record(), prepared.record()]
    restarted = TransactionCoordinator(TransactionConfig(transaction_state_log_num_partitions=1))
    restarted.active = True
    [job] = restarted.load(0, coordinator_epoch=9, records=log, now_ms=50)
    assert (job.commit, job.pending, job.producer_id, job.producer_epoch) == (True, {A, B}, pid, epoch)
    assert job.write.coordinator_epoch == 9
    finish(restarted, job)
    assert restarted.describe(TX).state == "CompleteCommit"
    # An id left Ongoing stays Ongoing (its producer decides, or the timeout does).
    again = TransactionCoordinator(TransactionConfig(transaction_state_log_num_partitions=1))
    assert again.load(0, 1, [add.record()], 0) == []
    assert again.describe(TX).state == ""
    again.active = True
    assert again.describe(TX).state == "Ongoing"


def test_record_bytes_are_kafkas() -> None:
    """TransactionLogKey v0 and TransactionLogValue v0 as Kafka 3.x writes them."""
    key = rec.key_bytes("tx")
    assert key == b"\x00\x00" + b"\x00\x02tx"
    coordinator = TransactionCoordinator(TransactionConfig(transaction_state_log_num_partitions=1))
    coordinator.load(0, 0, [], 0)
    write = coordinator.prepare_init("tx", 60_000, None, 5, new_producer_id=3)
    assert isinstance(write, TxnWrite)
    value = rec.value_bytes(write.transit)
    assert value == (
        b"\x00\x00"  # version
        + (3).to_bytes(8, "big")  # producer id
        + (0).to_bytes(2, "big")  # epoch
        + (60_000).to_bytes(4, "big")  # timeout
        + b"\x00"  # Empty
        + b"\xff\xff\xff\xff"  # partitions: null when Empty
        + (5).to_bytes(8, "big")  # last update
        + (-1).to_bytes(8, "big", signed=True)  # start
    )
    parsed = rec.parse_value(value)
    assert (parsed.producer_id, parsed.state, parsed.partitions) == (3, TxnState.EMPTY, frozenset())
    ongoing = rec.value_bytes(
        dataclasses.replace(write.transit, state=TxnState.ONGOING, partitions=frozenset({A, B}))
    )
    # Partitions by topic: [topic string, [partition int32]]
    assert (
        ongoing[17:-16]
        == b"\x00\x00\x00\x02"
        + b"\x00\x01a\x00\x00\x00\x01\x00\x00\x00\x00"
        + b"\x00\x01b\x00\x00\x00\x01\x00\x00\x00\x01"
    )
    assert rec.parse_value(ongoing).partitions == frozenset({A, B})
