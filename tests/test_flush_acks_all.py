"""log.flush.acks.all.enable: by default an acks=all produce is answered only after an fsync of its batch on every
in-sync replica; with false, as Apache Kafka does by default, once every in-sync replica has written it.

Each test reads the brokers' own count of log fsyncs (the admin listener's LogFlushStats histogram) around the
produce: with the default, it moves before the acknowledgement; with false (and log.flush.interval.ms=0, so no
flush loop runs), it does not move at all, and the acknowledged records are still there after kill -9.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.broker_process import free_port
from tests.cluster_fixture import running_cluster
from tests.conftest import BrokerFactory
from tests.test_groups_support import create_topic, unique
from tests.test_metrics import scrape, value

pytestmark = pytest.mark.timeout(120)

FSYNCS = "kafka_log_logflushstats_logflush_seconds_count"
NO_FSYNC = {"log.flush.acks.all.enable": "false", "log.flush.interval.ms": "0"}


def produce_acks_all(bootstrap: str, topic: str, partitions: int, count: int) -> None:
    """`count` records, one produce request each, every one acknowledged (acks=all, idempotent)."""
    producer = Producer({
        "bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 0,
    })  # fmt: skip
    errors: list[str] = []

    def delivered(err: object, _message: object) -> None:
        if err is not None:
            errors.append(str(err))

    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), partition=i % partitions, on_delivery=delivered)
        producer.flush(30)
    assert producer.flush(30) == 0
    assert errors == []


def read_values(bootstrap: str, topic: str, count: int) -> set[bytes]:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": unique("reader"), "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })  # fmt: skip
    values: set[bytes] = set()
    try:
        consumer.subscribe([topic])
        for _ in range(600):
            if len(values) >= count:
                break
            message = consumer.poll(0.1)
            if message is not None and message.error() is None and (data := message.value()) is not None:
                values.add(data)
    finally:
        consumer.close()
    return values


def test_acks_all_waits_for_an_fsync_by_default(broker_factory: BrokerFactory) -> None:
    metrics = f"http://127.0.0.1:{free_port()}"
    broker = broker_factory(overrides={"admin.listener": metrics, "log.flush.interval.ms": "0"})
    topic = create_topic(broker.bootstrap, 2, "fsynced")
    before = value(scrape(metrics), FSYNCS)
    produce_acks_all(broker.bootstrap, topic, 2, 10)
    # Each answer came after its round's fsync: ten requests one at a time, at least one fsync each.
    assert value(scrape(metrics), FSYNCS) >= before + 10


def test_acks_all_unsynced_survives_kill_9(broker_factory: BrokerFactory) -> None:
    metrics = f"http://127.0.0.1:{free_port()}"
    broker = broker_factory(overrides={"admin.listener": metrics, **NO_FSYNC})
    topic = create_topic(broker.bootstrap, 2, "written")
    before = value(scrape(metrics), FSYNCS)
    produce_acks_all(broker.bootstrap, topic, 2, 10)
    assert value(scrape(metrics), FSYNCS) == before  # every answer came without one
    broker.kill()  # the page cache outlives the process
    broker.start()
    assert read_values(broker.bootstrap, topic, 10) == {f"v{i}".encode() for i in range(10)}


@pytest.mark.cluster
@pytest.mark.timeout(180)
def test_a_cluster_without_fsync_acknowledges_what_every_replica_wrote(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """RF=3, min.insync.replicas=3: acknowledged means on all three, and no node, leader or follower, fsyncs for
    it (followers fetch on without syncing each round)."""
    with running_cluster(tmp_path, 3, overrides=NO_FSYNC, request=request, metrics=True) as cluster:
        topic = "replicated-unsynced"
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 3, config={"min.insync.replicas": "3"})])[topic].result(30)
        cluster.wait_for_isr(topic, 0, size=3)
        cluster.wait_for_isr(topic, 1, size=3)
        before = {node: value(scrape(url), FSYNCS) for node, url in cluster.metrics.items()}
        produce_acks_all(cluster.bootstrap, topic, 2, 10)
        after = {node: value(scrape(url), FSYNCS) for node, url in cluster.metrics.items()}
        assert after == before
        assert read_values(cluster.bootstrap, topic, 10) == {f"v{i}".encode() for i in range(10)}
