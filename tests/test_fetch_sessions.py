"""Fetch sessions (KIP-227) on a real kbroker through real sockets: what compat/test_fetch_sessions.py cannot compare
with Apache Kafka, whose eviction time is fixed at 120 s (ours is `min.incremental.fetch.session.eviction.ms`), and
the long poll of an incremental fetch. The FetchSessionCache metrics are read from the admin listener.
"""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.test_fetch_sessions import Fetcher, produce_to, topic_id
from protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from protocol.messages.delete_topics_request import DeleteTopicsRequest
from protocol.messages.fetch_request import FetchRequest
from tests.broker_process import BrokerProcess, free_port
from tests.cluster_fixture import Cluster
from tests.conftest import BrokerFactory
from tests.etcd_process import running_etcd
from tests.test_groups_support import Wire, create_topic, produce, wait_for
from tests.test_metrics import scrape, value

pytestmark = pytest.mark.timeout(120)

EVICTION_MS = 1000


@pytest.fixture
def monitored(broker_factory: BrokerFactory) -> tuple[BrokerProcess, str]:
    port = free_port()
    broker = broker_factory(
        overrides={
            "admin.listener": f"http://127.0.0.1:{port}",
            "max.incremental.fetch.session.cache.slots": "8",
            "min.incremental.fetch.session.eviction.ms": str(EVICTION_MS),
        }
    )
    return broker, f"http://127.0.0.1:{port}"


def fetcher(bootstrap: str, partitions: int) -> Fetcher:
    topic = create_topic(bootstrap, partitions, prefix="sessions")
    wire = Wire(bootstrap)
    return Fetcher(bootstrap, topic, topic_id(wire, topic), wire)


def test_eviction_of_stale_and_smaller_sessions(monitored: tuple[BrokerProcess, str]) -> None:
    broker, base = monitored
    f = fetcher(broker.bootstrap, 3)
    one = {0: 0}
    sessions = [f.fetch("create", 0, 0, one).session_id for _ in range(8)]
    assert all(sessions)
    samples = scrape(base)
    assert value(samples, "kafka_server_fetchsessioncache_numincrementalfetchsessions") == 8
    assert value(samples, "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached") == 8
    # Every shard is full of young sessions: a bigger consumer session evicts none.
    assert f.fetch("bigger", 0, 0, {0: 0, 1: 0}).session_id == 0

    # Older than the eviction time and used again just now: a consumer session with more partitions may evict the
    # smallest of its shard (all are of one partition here), one with as many may not.
    time.sleep(EVICTION_MS / 1000 + 0.2)
    epochs = {s: 1 for s in sessions}
    for s in sessions:
        assert f.fetch("touch", s, epochs[s]).error_code == 0
        epochs[s] += 1
    assert f.fetch("as big", 0, 0, {1: 0}).session_id == 0
    bigger = f.fetch("bigger", 0, 0, {0: 0, 1: 0})
    assert bigger.session_id != 0
    evicted = [s for s in sessions if f.fetch("after", s, epochs[s]).error_code == 70]
    assert len(evicted) == 1
    assert value(scrape(base), "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total") == 1

    # Unused for longer than the eviction time: any new session evicts the least recently used.
    time.sleep(EVICTION_MS / 1000 + 0.2)
    assert f.fetch("small, after a quiet spell", 0, 0, {2: 0}).session_id != 0
    assert value(scrape(base), "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total") == 2


def test_incremental_fetch_long_polls_and_carries_what_changed(monitored: tuple[BrokerProcess, str]) -> None:
    broker, base = monitored
    f = fetcher(broker.bootstrap, 3)
    session = f.fetch("create", 0, 0, {0: 0, 1: 0, 2: 0}).session_id
    assert session != 0
    # A long poll of the whole session, listing no partition: nothing is new, so it parks in the purgatory on all
    # three until a record arrives, and its answer carries that partition alone.
    answers: list[Any] = []
    request = FetchRequest(
        max_wait_ms=60_000, min_bytes=1, max_bytes=1 << 20, session_id=session, session_epoch=1
    )
    poll = threading.Thread(target=lambda: answers.append(f.wire.call(request, 16)), daemon=True)
    poll.start()
    parked = "kafka_server_delayedoperationpurgatory_purgatorysize"
    wait_for("the fetch to park", lambda: value(scrape(base), parked, delayedOperation="Fetch") == 1 or None)
    assert not answers
    # One record: of three, the producer may send the first in a batch of its own (a CI run under load answered
    # with the high watermark at 1: linger.ms is 5 ms, and the test's thread can be off the CPU longer between its
    # produce() calls), and the parked fetch answers that first batch.
    produce_to(broker.bootstrap, f.topic, 2, count=1)
    poll.join(30)
    assert answers, "the parked incremental fetch was not answered after a record arrived"
    response = answers[0]
    assert response.error_code == 0
    assert response.session_id == session
    partitions = [(p.partition_index, p.high_watermark) for t in response.responses for p in t.partitions]
    assert partitions == [(2, 1)]
    assert len(response.responses[0].partitions[0].records) > 0
    samples = scrape(base)
    assert value(samples, "kafka_server_fetchsessioncache_fetchrequests_total", context="incremental") == 1
    assert value(samples, "kafka_server_fetchsessioncache_fetchrequests_total", context="full") == 1
    assert (
        value(samples, "kafka_server_fetchsessioncache_fetchrequestpartitions_total", context="incremental")
        == 0
    )


def test_followers_fetch_incrementally(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Our own followers (kbroker/replication/fetcher.py) keep a fetch session with each leader: after the first,
    full fetch, every fetch is incremental, listing only the partitions whose position moved."""
    with running_etcd() as etcd:
        cluster = Cluster(tmp_path, etcd, 2, request=request)
        metrics = cluster.serve_metrics()
        try:
            cluster.start()
            topic = "followed"
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
            admin.create_topics([NewTopic(topic, num_partitions=20, replication_factor=2)])[topic].result(30)
            produce(cluster.bootstrap, topic, 20, 400)  # acks=all: on both replicas

            def incremental_everywhere() -> bool | None:
                counts = [scrape(m) for m in metrics.values()]
                return all(value(c, REQUESTS, context="incremental") >= 5 for c in counts) or None

            wait_for("incremental follower fetches on both leaders", incremental_everywhere)
            for base in metrics.values():
                samples = scrape(base)
                assert value(samples, "kafka_server_fetchsessioncache_numincrementalfetchsessions") >= 1
                # (the failure detector's long polls of no partition are the sessionless fetches here)
                assert value(samples, LISTED, context="sessionless") == 0
                assert value(samples, REQUESTS, context="error") == 0
                # A follower's fetch lists its partitions only when their fetch offset moved (a few per fetch here).
                listed = value(samples, LISTED, context="incremental")
                assert listed < 10 * value(samples, REQUESTS, context="incremental")
        finally:
            cluster.stop()


REQUESTS = "kafka_server_fetchsessioncache_fetchrequests_total"
LISTED = "kafka_server_fetchsessioncache_fetchrequestpartitions_total"


READ = "kafka_server_fetchsessioncache_incrementalfetchpartitionsread_total"
PARKED = "kafka_server_delayedoperationpurgatory_purgatorysize"


def _long_poll(
    f: Fetcher, session: int, epoch: int, max_wait_ms: int = 60_000
) -> tuple[threading.Thread, list[Any]]:
    """An incremental fetch of the whole session listing nothing, parked up to `max_wait_ms`, on its own
    connection."""
    answers: list[Any] = []
    wire = Wire(f.bootstrap)
    request = FetchRequest(
        max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, session_id=session, session_epoch=epoch
    )
    poll = threading.Thread(target=lambda: answers.append(wire.call(request, 16)), daemon=True)
    poll.start()
    return poll, answers


def _answered(poll: threading.Thread, answers: list[Any], what: str) -> list[tuple[int, int, int, int, bool]]:
    poll.join(30)
    assert answers, f"the parked incremental fetch was not answered after {what}"
    response = answers[0]
    assert response.error_code == 0
    return [
        (p.partition_index, p.error_code, p.high_watermark, p.log_start_offset, len(p.records or b"") > 0)
        for t in response.responses
        for p in t.partitions
    ]


def test_incremental_fetch_reads_only_unsettled_partitions(monitored: tuple[BrokerProcess, str]) -> None:
    """A partition whose last read had nothing to answer is not read again until something wakes it; every kind of
    change that alters its answer wakes a parked incremental fetch, which then carries exactly that partition."""
    broker, base = monitored
    f = fetcher(broker.bootstrap, 4)
    produce_to(broker.bootstrap, f.topic, 1, count=4)
    session = f.fetch("create", 0, 0, {0: 0, 1: 4, 2: 0, 3: 0}).session_id
    assert session != 0
    # The first incremental fetch reads all four (none settled yet), answers none (nothing new), settles them all.
    assert f.fetch("first", session, 1).responses == []
    assert value(scrape(base), READ) == 4
    # Nothing changed: nothing is read.
    for epoch in range(2, 6):
        assert f.fetch("idle", session, epoch).responses == []
    assert value(scrape(base), READ) == 4

    # New records wake a parked fetch, which reads the woken partition alone and carries it.
    poll, answers = _long_poll(f, session, 6)
    wait_for("the fetch to park", lambda: value(scrape(base), PARKED, delayedOperation="Fetch") == 1 or None)
    produce_to(broker.bootstrap, f.topic, 2, count=3)
    assert _answered(poll, answers, "new records") == [(2, 0, 3, 0, True)]
    assert value(scrape(base), READ) == 5
    # Partition 2 is read (it still has records at the session's fetch offset) until the client moves past them.
    assert f.fetch("move on", session, 7, {2: 3}).responses == []
    assert f.fetch("idle again", session, 8).responses == []
    read_before = value(scrape(base), READ)

    # DeleteRecords moves the log start offset with no new records. As in Kafka that does not end the long poll
    # (no bytes to return), but its answer at the deadline carries the new log start: the wake was not lost.
    poll, answers = _long_poll(f, session, 9, max_wait_ms=3000)
    wait_for("the fetch to park", lambda: value(scrape(base), PARKED, delayedOperation="Fetch") == 1 or None)
    deleted = f.wire.call(
        DeleteRecordsRequest(
            topics=[
                DeleteRecordsTopic(
                    name=f.topic, partitions=[DeleteRecordsPartition(partition_index=1, offset=2)]
                )
            ],
            timeout_ms=10_000,
        ),
        2,
    )
    assert deleted.topics[0].partitions[0].error_code == 0
    assert _answered(poll, answers, "DeleteRecords") == [(1, 0, 4, 2, False)]
    assert value(scrape(base), READ) == read_before + 1
    assert f.fetch("idle after delete", session, 10).responses == []

    # Deleting the topic makes every partition's answer an error: the parked fetch carries all four.
    poll, answers = _long_poll(f, session, 11)
    wait_for("the fetch to park", lambda: value(scrape(base), PARKED, delayedOperation="Fetch") == 1 or None)
    f.wire.call(DeleteTopicsRequest(topic_names=[f.topic], timeout_ms=10_000), 5)
    answered = _answered(poll, answers, "the topic's deletion")
    assert sorted(index for index, *_ in answered) == [0, 1, 2, 3]
    assert all(error != 0 for _, error, *_ in answered), answered


def test_follower_sessions_read_only_what_moved(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """3 nodes, RF=3: an idle leader reads none of its followers' session partitions; an acks=all produce still
    completes (each follower's session wakes for the records, then for the high watermark the other follower's
    fetch moved, with no new records), and both followers learn the final high watermark."""
    with running_etcd() as etcd:
        cluster = Cluster(tmp_path, etcd, 3, request=request)
        metrics = cluster.serve_metrics()
        try:
            cluster.start()
            topic = "settled"
            cluster.create_topic(topic, 12, 3)
            produce(cluster.bootstrap, topic, 12, 120)

            def idle_reads(base: str) -> bool | None:
                # Five incremental fetches in a row that read nothing.
                before = scrape(base)
                wait_for(
                    "incremental fetches",
                    lambda: (
                        value(scrape(base), REQUESTS, context="incremental")
                        >= value(before, REQUESTS, context="incremental") + 5
                        or None
                    ),
                )
                return value(scrape(base), READ) == value(before, READ) or None

            for base in metrics.values():
                wait_for("an idle leader to read nothing", functools.partial(idle_reads, base))

            leader = cluster.partition(topic, 0).leader
            produce(
                cluster.bootstrap, topic, 12, 120, start=120
            )  # acks=all: answered once both followers have it
            followers = [n for n in cluster.nodes if n != leader]

            def checkpointed(node_id: int) -> int | None:
                path = cluster.node(node_id).data_dir / "replication-offset-checkpoint"
                if not path.exists():
                    return None
                lines = path.read_text().splitlines()
                for line in lines[2:]:
                    name, partition, hw = line.split()
                    if (name, partition) == (topic, "0"):
                        return int(hw) == 20 or None
                return None

            for node_id in followers:
                wait_for(
                    f"follower {node_id} to learn the high watermark",
                    functools.partial(checkpointed, node_id),
                )
        finally:
            cluster.stop()


def test_leader_change_wakes_a_settled_session(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A consumer session on a leader whose partitions have all settled: the leader losing the partition (paused
    past its session timeout, a new leader elected, then resumed) ends the parked incremental fetch at once with the
    partition's error."""
    with running_etcd() as etcd:
        cluster = Cluster(tmp_path, etcd, 2, request=request)
        try:
            cluster.start()
            topic = "moving"
            cluster.create_topic(topic, 1, 2)
            produce(cluster.bootstrap, topic, 1, 5)
            leader = cluster.partition(topic, 0).leader
            bootstrap = cluster.node(leader).bootstrap
            wire = Wire(bootstrap)
            f = Fetcher(bootstrap, topic, topic_id(wire, topic), wire)
            session = f.fetch("create", 0, 0, {0: 5}).session_id
            assert session != 0
            assert f.fetch("settle", session, 1).responses == []
            poll, answers = _long_poll(f, session, 2)
            # Time for the poll to reach the leader and park (a follower's polls park there too, so the purgatory's
            # size cannot single ours out). Its 60 s wait outlasts the test: only a wake can answer it in time.
            time.sleep(1)
            cluster.pause(leader)
            try:
                cluster.wait_for_leader(topic, 0, other_than=leader)
            finally:
                cluster.resume(leader)
            poll.join(30)
            assert answers, "the parked incremental fetch was not answered after the leader changed"
            response = answers[0]
            errors = [p.error_code for t in response.responses for p in t.partitions]
            assert response.error_code == 0
            assert errors == [6]  # NOT_LEADER_OR_FOLLOWER
        finally:
            cluster.stop()
