"""The purgatory: parked requests are woken by their own partitions only.

First the mechanism alone (a wake reaches exactly the requests watching that partition; a wake that comes before the
wait is not lost), then in a broker running in process: a long-poll fetch parked on one partition is not woken by
appends to another and is answered by an append to its own; an acks=-1 produce on a replicated partition parks until
its follower's fetch moves the high watermark past it, and appends to its partition do not wake it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from kbroker.replication.purgatory import Purgatory
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch
from tests.inprocess import call, running_broker, wait_until
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def counting(done: Callable[[], bool], calls: list[int]) -> Callable[[], bool]:
    def check() -> bool:
        calls.append(1)
        return done()

    return check


@pytest.mark.trio
async def test_a_wake_reaches_only_the_requests_watching_that_partition() -> None:
    purgatory = Purgatory()
    ready = {A: False, B: False}
    checks: dict[TopicPartition, list[int]] = {A: [], B: []}
    results: dict[TopicPartition, bool] = {}

    async def park(tp: TopicPartition) -> None:
        results[tp] = await purgatory.wait_until(
            [tp], counting(lambda: ready[tp], checks[tp]), trio.current_time() + 60
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(park, A)
        nursery.start_soon(park, B)
        await trio.testing.wait_all_tasks_blocked()
        assert (purgatory.watching(A), purgatory.watching(B)) == (1, 1)
        assert checks == {A: [1], B: [1]}  # each checked once when it parked
        for _ in range(100):
            purgatory.wake(A)  # A moved, but not far enough
            await trio.testing.wait_all_tasks_blocked()
        assert (len(checks[A]), len(checks[B])) == (101, 1)
        ready[B] = True
        purgatory.wake(B)
        await trio.testing.wait_all_tasks_blocked()
        assert results == {B: True}
        assert (len(checks[A]), len(checks[B])) == (101, 2)
        ready[A] = True
        purgatory.wake(A)
    assert results == {A: True, B: True}


@pytest.mark.trio
async def test_a_wake_while_a_request_checks_is_not_lost() -> None:
    """A partition may move while a woken request is still checking (between two waits): that wake must count."""
    purgatory = Purgatory()
    calls: list[int] = []

    def check() -> bool:
        calls.append(1)
        if len(calls) == 2:
            purgatory.wake(A)  # moved again during this check
        return len(calls) == 3

    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.wait_until, [A], check, trio.current_time() + 60)
        await trio.testing.wait_all_tasks_blocked()
        assert len(calls) == 1
        purgatory.wake(A)
        with trio.fail_after(5):
            await trio.testing.wait_all_tasks_blocked()
    assert len(calls) == 3
    assert purgatory.watching(A) == 0


@pytest.mark.trio
async def test_the_deadline_ends_a_wait_with_a_last_check() -> None:
    purgatory = Purgatory()
    assert not await purgatory.wait_until([A], lambda: False, trio.current_time() + 0.05)
    assert purgatory.watching(A) == 0


@pytest.mark.trio
async def test_park_says_whether_anything_it_watches_moved(autojump_clock: trio.abc.Clock) -> None:
    purgatory = Purgatory()
    calls: list[int] = []
    # Nothing woke it: no last check at the deadline, and it says nothing moved (a long poll answers with its read).
    assert await purgatory.park([A], counting(lambda: False, calls), trio.current_time() + 1) == (
        False,
        False,
    )
    assert calls == [1]
    moved: list[tuple[bool, bool]] = []

    async def park() -> None:
        moved.append(await purgatory.park([A, B], counting(lambda: False, calls), trio.current_time() + 1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(park)
        await trio.testing.wait_all_tasks_blocked()
        purgatory.wake(B)
    assert moved == [(False, True)]
    assert purgatory.watching(A) == purgatory.watching(B) == 0


@pytest.mark.trio
async def test_the_expiration_reaper_ends_each_wait_at_its_own_deadline(
    autojump_clock: trio.abc.Clock,
) -> None:
    """With the reaper running, parked requests hold no deadline of their own: it expires each when its deadline
    comes, whether that is before the one it sleeps until (it sleeps less) or after, and a request woken before its
    deadline is answered at once."""
    purgatory = Purgatory()
    ended: dict[str, tuple[float, bool]] = {}
    start = trio.current_time()

    async def park(name: str, tp: TopicPartition, after_s: float, done: Callable[[], bool]) -> None:
        completed = await purgatory.wait_until([tp], done, start + after_s)
        ended[name] = (trio.current_time() - start, completed)

    async with trio.open_nursery() as reaper:
        reaper.start_soon(purgatory.run_expiration_reaper)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(park, "late", A, 30.0, lambda: False)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(park, "early", A, 0.5, lambda: False)  # before the reaper's sleep ends
            ready = [False]
            nursery.start_soon(park, "woken", B, 10.0, lambda: ready[0])
            await trio.testing.wait_all_tasks_blocked()
            ready[0] = True
            purgatory.wake(B)
        reaper.cancel_scope.cancel()
    assert ended["woken"] == (0.0, True)
    assert ended["early"] == (0.5, False)
    assert ended["late"] == (30.0, False)
    assert purgatory.watching(A) == purgatory.watching(B) == 0


@pytest.mark.trio
async def test_the_reaper_forgets_requests_answered_before_their_deadline(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Thousands of requests parked with a long deadline and answered at once (acks=-1 produces, fetches that
    get records): the reaper's heap keeps only a bounded number of their entries."""
    purgatory = Purgatory()

    async def one_request() -> bool:
        ready = False

        async def answer() -> None:
            nonlocal ready
            await trio.testing.wait_all_tasks_blocked()
            ready = True
            purgatory.wake(A)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            return await purgatory.wait_until([A], lambda: ready, trio.current_time() + 30)

    async with trio.open_nursery() as reaper:
        reaper.start_soon(purgatory.run_expiration_reaper)
        await trio.testing.wait_all_tasks_blocked()
        for _ in range(5000):
            assert await one_request()
        assert len(purgatory._timeouts) <= 130
        reaper.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_reaper_that_stops_expires_every_parked_request() -> None:
    """The broker stops (the reaper is cancelled with the replica manager): nothing stays parked on a deadline
    nobody would see."""
    purgatory = Purgatory()
    results: list[bool] = []

    async def park() -> None:
        results.append(await purgatory.wait_until([A], lambda: False, trio.current_time() + 3600))

    async with trio.open_nursery() as nursery, trio.open_nursery() as reaper:
        reaper.start_soon(purgatory.run_expiration_reaper)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(park)
        await trio.testing.wait_all_tasks_blocked()
        assert purgatory.watching(A) == 1
        reaper.cancel_scope.cancel()
    assert results == [False]
    assert purgatory.watching(A) == 0


def fetch(tp: TopicPartition, offset: int, max_wait_ms: int) -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            FetchTopic(
                topic=tp.topic,
                partitions=[
                    FetchPartition(partition=tp.partition, fetch_offset=offset, partition_max_bytes=1 << 20)
                ],
            )
        ],
    )


def produce(tp: TopicPartition, acks: int) -> ProduceRequest:
    batch = bytes(build_batch([Record(0, 0, b"k", b"v")]))
    return ProduceRequest(
        acks=acks,
        timeout_ms=30_000,
        topic_data=[
            TopicProduceData(
                name=tp.topic, partition_data=[PartitionProduceData(index=tp.partition, records=batch)]
            )
        ],
    )


@pytest.mark.trio
async def test_a_parked_fetch_is_woken_by_its_own_partition_only(tmp_path: Path) -> None:
    async with running_broker(tmp_path / "data") as broker:
        await broker.metadata.create_topic("t", 2, 1, {})
        purgatory = broker.replicas.purgatory
        answers: list[int] = []

        async def consumer() -> None:
            response = await call(broker, fetch(A, 0, max_wait_ms=30_000), 12)
            answers.append(len(response.responses[0].partitions[0].records or b""))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(consumer)
            await wait_until(lambda: purgatory.watching(A) == 1)
            wakes = purgatory.wakes
            for _ in range(50):
                assert (await call(broker, produce(B, 1), 9)).responses[0].partition_responses[
                    0
                ].error_code == 0
            assert purgatory.wakes == wakes  # 50 appends elsewhere: not one wake of the parked fetch
            assert answers == []
            await call(broker, produce(A, 1), 9)
            # Answered by that append, not by its 30 s max_wait_ms running out.
            await wait_until(lambda: bool(answers), timeout_s=5)
        assert len(answers) == 1
        assert answers[0] > 0
        assert purgatory.wakes == wakes + 1
        assert purgatory.watching(A) == 0


def two_brokers(config: BrokerConfig) -> MemoryMetadata:
    return MemoryMetadata(config, {0: ("127.0.0.1", 9092), 1: ("127.0.0.1", 9)})


async def follower_fetch(broker: Broker, tp: TopicPartition, offset: int) -> None:
    request = fetch(tp, offset, max_wait_ms=0)
    request.replica_id = 1
    response = await call(broker, request, 12)
    assert response.responses[0].partitions[0].error_code == ErrorCode.NONE


@pytest.mark.trio
async def test_an_acks_all_produce_parks_until_the_follower_has_the_batch(tmp_path: Path) -> None:
    async with running_broker(tmp_path / "data", metadata=two_brokers) as broker:
        await broker.metadata.create_topic("t", 2, 2, {})
        purgatory = broker.replicas.purgatory
        await follower_fetch(broker, A, 0)
        answers: list[int] = []

        async def producer() -> None:
            response = await call(broker, produce(A, -1), 9)
            answers.append(response.responses[0].partition_responses[0].error_code)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(producer)
            await wait_until(lambda: purgatory.watching(A) == 1)
            # fsynced on the leader by now or soon, but the follower has not fetched it: still parked.
            partition = broker.replicas.partitions[A]
            await wait_until(lambda: partition.log.recovery_point == 1)
            assert answers == []
            await follower_fetch(broker, A, 1)
        assert answers == [ErrorCode.NONE]
        assert partition.high_watermark == 1


@pytest.mark.trio
async def test_appends_wake_a_parked_fetch_but_not_a_parked_acks_all_produce(tmp_path: Path) -> None:
    """An append can answer a long-polling fetch, never an acks=-1 produce already parked (that one waits for an
    fsync round and the high watermark, which an append moves only with an ISR of one, and then past it): appends
    wake the fetches alone, as Kafka's append checks its fetch purgatory and not its produce purgatory."""
    # log.flush.interval.ms: no periodic fsync of the acks=1 appends below (an fsync round wakes everything).
    overrides = {"log.flush.interval.ms": "3600000"}
    async with running_broker(tmp_path / "data", overrides, metadata=two_brokers) as broker:
        await broker.metadata.create_topic("t", 2, 2, {})
        purgatory = broker.replicas.purgatory
        partition = broker.replicas.partitions[A]
        await follower_fetch(broker, A, 0)
        produced: list[int] = []
        fetched: list[int] = []

        async def producer() -> None:
            response = await call(broker, produce(A, -1), 9)
            produced.append(response.responses[0].partition_responses[0].error_code)

        async def consumer(offset: int) -> None:
            response = await call(broker, fetch(A, offset, max_wait_ms=30_000), 12)
            fetched.append(len(response.responses[0].partitions[0].records or b""))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(producer)
            await wait_until(lambda: purgatory.watching(A) == 1)
            await wait_until(lambda: partition.log.recovery_point == 1)  # its fsync round is over
            nursery.start_soon(consumer, 0)  # a long poll: nothing below the high watermark yet
            await wait_until(lambda: purgatory.watching(A) == 2)
            wakes = purgatory.wakes
            for _ in range(20):
                assert (await call(broker, produce(A, 1), 9)).responses[0].partition_responses[
                    0
                ].error_code == 0
            # Each append woke the fetch (which looked and parked again: the high watermark waits for the
            # follower), never the produce.
            assert purgatory.wakes == wakes + 20
            assert produced == []
            assert fetched == []
            await follower_fetch(broker, A, partition.log.log_end_offset)
        # Both answered by the follower's fetch moving the high watermark.
        assert produced == [ErrorCode.NONE]
        assert fetched[0] > 0


def produce_to(tps: list[TopicPartition], acks: int) -> ProduceRequest:
    batch = bytes(build_batch([Record(0, 0, b"k", b"v")]))
    return ProduceRequest(
        acks=acks,
        timeout_ms=30_000,
        topic_data=[
            TopicProduceData(
                name="t",
                partition_data=[PartitionProduceData(index=tp.partition, records=batch) for tp in tps],
            )
        ],
    )


@pytest.mark.trio
async def test_one_follower_fetch_round_moves_every_high_watermark_and_answers_the_produce(
    tmp_path: Path,
) -> None:
    async with running_broker(tmp_path / "data", metadata=two_brokers) as broker:
        await broker.metadata.create_topic("t", 2, 2, {})
        for tp in (A, B):
            await follower_fetch(broker, tp, 0)
        answers: list[list[int]] = []

        async def producer() -> None:
            response = await call(broker, produce_to([A, B], -1), 9)
            answers.append([p.error_code for p in response.responses[0].partition_responses])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(producer)
            await wait_until(lambda: broker.replicas.purgatory.watching(A) == 1)
            assert answers == []
            # One fetch round of both partitions at their new log end: both high watermarks move, and its answer
            # already carries them.
            request = fetch(A, 1, max_wait_ms=0)
            request.replica_id = 1
            request.topics[0].partitions.append(
                FetchPartition(partition=B.partition, fetch_offset=1, partition_max_bytes=1 << 20)
            )
            response = await call(broker, request, 12)
            assert [p.high_watermark for p in response.responses[0].partitions] == [1, 1]
        assert answers == [[ErrorCode.NONE, ErrorCode.NONE]]
