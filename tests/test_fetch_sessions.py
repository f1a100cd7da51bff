"""Fetch sessions (KIP-227) on a real kbroker through real sockets: what compat/test_fetch_sessions.py cannot compare
with Apache Kafka, whose eviction time is fixed at 120 s (ours is `min.incremental.fetch.session.eviction.ms`), and
the long poll of an incremental fetch. The FetchSessionCache metrics are read from the admin listener.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.test_fetch_sessions import Fetcher, produce_to, topic_id
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
    produce_to(broker.bootstrap, f.topic, 2, count=3)
    poll.join(30)
    assert answers, "the parked incremental fetch was not answered after a record arrived"
    response = answers[0]
    assert response.error_code == 0
    assert response.session_id == session
    partitions = [(p.partition_index, p.high_watermark) for t in response.responses for p in t.partitions]
    assert partitions == [(2, 3)]
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
        metrics = {}
        for node_id, node in cluster.nodes.items():
            port = free_port()
            node.overrides["admin.listener"] = f"http://127.0.0.1:{port}"
            metrics[node_id] = f"http://127.0.0.1:{port}"
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
