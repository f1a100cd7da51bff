"""Replication end to end: etcd plus three kbroker processes (tests/cluster_fixture.py), driven by stock clients
(confluent-kafka, kafka-python, kcat, the Java client) and by raw requests in our own codec.

Covers: topic creation with a replication factor through CreateTopics; Metadata naming every live broker and each
partition's leader, replicas, ISR and leader epoch; produce with acks=all; requests to a follower refused with
NOT_LEADER_OR_FOLLOWER and stale / newer epochs with FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; min.insync.replicas
(NOT_ENOUGH_REPLICAS before appending); kill -9 of a leader (a new leader from the ISR with a bumped epoch, clients
move, nothing acknowledged with acks=all is lost); a returning node that truncates a divergent tail
(OffsetForLeaderEpoch), catches up and rejoins the ISR, with `kbroker topics --under-replicated-partitions` listing
its partitions meanwhile; the Java consumer validating its position (OffsetForLeaderEpoch) across a leader change;
pipelined acks=all produces waiting for stopped followers without the leader keeping their request buffers.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.cluster import ClusterMetadata

import kbroker.common
from compat.clients.confluent import partition_offset, value_of
from kbroker.log.config import LogConfig
from kbroker.log.log_manager import partition_dir_name
from kbroker.log.partition_log import PartitionLog
from kbroker.replication.client import (
    FETCH_VERSION,
    OFFSET_FOR_LEADER_EPOCH_VERSION,
    SyncBrokerClient,
    decode_response,
    encode_request,
    parse_host_port,
)
from protocol.errors import ErrorCode
from protocol.framing import NEED_DATA, FrameDecoder
from protocol.messages import ApiKey
from protocol.messages.describe_cluster_request import DescribeClusterRequest
from protocol.messages.describe_cluster_response import DescribeClusterResponse
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.fetch_response import FetchResponse
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.init_producer_id_response import InitProducerIdResponse
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.list_offsets_response import ListOffsetsResponse
from protocol.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.offset_for_leader_epoch_response import OffsetForLeaderEpochResponse
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.produce_response import ProduceResponse
from protocol.records import Record, build_batch, iter_batches
from tests.broker_process import rss_mib
from tests.cluster_fixture import Cluster, running_cluster
from tests.test_groups_support import wait_for
from tests.test_metrics import scrape, value

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parent.parent
PARKED_FOLLOWER_FETCHES = "kafka_server_delayedoperationpurgatory_followerfetches"
LOG_END_OFFSET = "kafka_log_log_logendoffset"
PURGATORY_SIZE = "kafka_server_delayedoperationpurgatory_purgatorysize"


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_cluster(tmp_path, request=request) as c:
        yield c


@pytest.fixture
def monitored_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A cluster whose nodes serve their metrics (`Cluster.metrics`)."""
    with running_cluster(tmp_path, request=request, metrics=True) as c:
        yield c


# ---- helpers ---------------------------------------------------------------------------------------------------


def client_for(cluster: Cluster, node_id: int) -> SyncBrokerClient:
    host, port = parse_host_port(cluster.node(node_id).bootstrap)
    return SyncBrokerClient(host, port)


def raw_produce(
    cluster: Cluster, node_id: int, topic: str, partition: int, values: list[bytes], acks: int
) -> int:
    """One Produce v9 to node_id; returns the partition's error code."""
    batch = build_batch([Record(offset=i, timestamp=int(time.time() * 1000), key=None, value=v) for i, v in
                         enumerate(values)])  # fmt: skip
    request = ProduceRequest(
        acks=acks,
        timeout_ms=5000,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=bytes(batch))]
            )
        ],
    )
    with client_for(cluster, node_id) as client:
        response: ProduceResponse = client.request(request, 9)
    return response.responses[0].partition_responses[0].error_code


def raw_fetch(cluster: Cluster, node_id: int, topic: str, partition: int, current_leader_epoch: int) -> int:
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        topics=[
            FetchTopic(
                topic=topic,
                partitions=[
                    FetchPartition(
                        partition=partition,
                        current_leader_epoch=current_leader_epoch,
                        fetch_offset=0,
                        partition_max_bytes=1 << 20,
                    )
                ],
            )
        ],
    )
    with client_for(cluster, node_id) as client:
        response: FetchResponse = client.request(request, FETCH_VERSION)
    return response.responses[0].partitions[0].error_code


def offset_for_leader_epoch(
    cluster: Cluster,
    node_id: int,
    topic: str,
    partition: int,
    leader_epoch: int,
    current_leader_epoch: int = -1,
) -> tuple[int, int, int]:
    """(error, epoch, end offset) asked as a consumer (replica id -1)."""
    request = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic=topic,
                partitions=[
                    OffsetForLeaderPartition(
                        partition=partition,
                        current_leader_epoch=current_leader_epoch,
                        leader_epoch=leader_epoch,
                    )
                ],
            )
        ],
    )
    with client_for(cluster, node_id) as client:
        response: OffsetForLeaderEpochResponse = client.request(request, OFFSET_FOR_LEADER_EPOCH_VERSION)
    p = response.topics[0].partitions[0]
    return p.error_code, p.leader_epoch, p.end_offset


class Produced:
    """Delivery reports of a confluent-kafka producer: what was acknowledged (and when), what failed."""

    def __init__(self) -> None:
        self.acked: dict[bytes, tuple[int, int, float]] = {}
        self.failed: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        with self.lock:
            if err is not None:
                self.failed.append(str(err))
            else:
                self.acked[value_of(msg)] = (*partition_offset(msg), time.monotonic())


def idempotent_producer(cluster: Cluster) -> Producer:
    return Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 60000,
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )


def consume_all(
    cluster: Cluster, topic: str, partitions: int, timeout: float = 30.0
) -> dict[bytes, tuple[int, int]]:
    """Every record of the topic (assign from the beginning up to the end), value -> (partition, offset)."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": "replication-test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen: dict[bytes, tuple[int, int]] = {}
        at_end: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(at_end) < partitions and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error = msg.error()
            if error:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(partition_offset(msg)[0])
                continue
            partition, offset = partition_offset(msg)
            at_end.discard(partition)
            seen[value_of(msg)] = (partition, offset)
        assert len(at_end) == partitions, f"did not reach the end of every partition of {topic} in {timeout}s"
        return seen
    finally:
        consumer.close()


def topics_command(cluster: Cluster, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "kbroker", "topics", "--bootstrap", cluster.live_bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return result.stdout


def read_log(data_dir: Path, topic: str, partition: int) -> list[tuple[int, bytes]]:
    """(base offset, bytes) of every batch of a stopped node's partition log."""
    directory = data_dir / partition_dir_name(kbroker.common.TopicPartition(topic, partition))
    plog = PartitionLog.open(directory, LogConfig(), int(time.time() * 1000))
    try:
        out = []
        offset = plog.log_start_offset
        while offset < plog.log_end_offset:
            data = plog.read(offset, 1 << 20, plog.log_end_offset)
            for batch in iter_batches(bytearray(data)):
                out.append((batch.base_offset, bytes(batch.buf)))
                offset = batch.last_offset + 1
        return out
    finally:
        plog.close()


# ---- tests -----------------------------------------------------------------------------------------------------


def test_create_produce_consume_and_metadata_from_every_client(cluster: Cluster, kcat_path: Path) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic("orders", 3, 3, config={"min.insync.replicas": "2"})])
    futures["orders"].result(30)

    # confluent-kafka: every broker, and each partition's leader in an ISR of all three replicas.
    metadata = admin.list_topics("orders", timeout=10)
    assert sorted(metadata.brokers) == [1, 2, 3]
    assert {f"{b.host}:{b.port}" for b in metadata.brokers.values()} == {
        cluster.node(i).bootstrap for i in (1, 2, 3)
    }
    partitions = metadata.topics["orders"].partitions
    assert sorted(partitions) == [0, 1, 2]
    for p in partitions.values():
        assert sorted(p.replicas) == [1, 2, 3]
        assert sorted(p.isrs) == [1, 2, 3]
        assert p.leader in p.isrs
    # Rendezvous placement spreads leaders: with three partitions at least two brokers lead something.
    assert len({p.leader for p in partitions.values()}) >= 2
    cluster_info = admin.describe_cluster().result(10)
    assert cluster_info.controller.id in (1, 2, 3)

    # kcat (librdkafka 2.0.2, Metadata v4) and kafka-python see the same.
    kcat = subprocess.run(
        [str(kcat_path), "-b", cluster.bootstrap, "-L", "-J", "-t", "orders"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    listing = json.loads(kcat.stdout)
    assert sorted(b["id"] for b in listing["brokers"]) == [1, 2, 3]
    kcat_partitions = {p["partition"]: p for p in listing["topics"][0]["partitions"]}
    for index, p in partitions.items():
        assert kcat_partitions[index]["leader"] == p.leader
        assert sorted(r["id"] for r in kcat_partitions[index]["isrs"]) == [1, 2, 3]

    from kafka import KafkaConsumer

    kp = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=None)
    try:
        assert kp.partitions_for_topic("orders") == {0, 1, 2}
        # the consumer's own metadata cache, private (so outside kafka-python's stubs)
        kp_cluster: ClusterMetadata = vars(kp)["_client"].cluster
        assert sorted(b.node_id for b in kp_cluster.brokers()) == [1, 2, 3]
        for index, p in partitions.items():
            assert kp_cluster.leader_for_partition(kafka_tp("orders", index)) == p.leader
            assert kp_cluster.leader_epoch_for_partition(kafka_tp("orders", index)) == 0
    finally:
        kp.close()

    # acks=all, idempotent: every record acknowledged, all of them readable from the leaders.
    produced = Produced()
    producer = idempotent_producer(cluster)
    for i in range(2000):
        producer.produce("orders", key=str(i).encode(), value=f"order-{i}".encode(), on_delivery=produced)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not produced.failed
    assert len(produced.acked) == 2000
    consumed = consume_all(cluster, "orders", 3)
    assert consumed == {value: (p, o) for value, (p, o, _) in produced.acked.items()}

    # The whole cluster reports no under-replicated partition.
    assert topics_command(cluster, "--describe", "--under-replicated-partitions") == ""
    described = topics_command(cluster, "--describe", "--topic", "orders")
    assert "PartitionCount: 3\tReplicationFactor: 3" in described


def kafka_tp(topic: str, partition: int) -> object:
    from kafka import TopicPartition as KafkaTopicPartition

    return KafkaTopicPartition(topic, partition)


def test_followers_refuse_and_epochs_are_checked(cluster: Cluster) -> None:
    cluster.create_topic("t", partitions=1, replication_factor=3)
    state = cluster.partition("t", 0)
    leader = state.leader
    follower = next(r for r in state.replicas if r != leader)
    assert state.leader_epoch == 0

    assert raw_produce(cluster, follower, "t", 0, [b"x"], acks=1) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert raw_produce(cluster, follower, "t", 0, [b"x"], acks=-1) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert raw_fetch(cluster, follower, "t", 0, current_leader_epoch=0) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert raw_fetch(cluster, leader, "t", 0, current_leader_epoch=0) == ErrorCode.NONE
    assert raw_fetch(cluster, leader, "t", 0, current_leader_epoch=1) == ErrorCode.UNKNOWN_LEADER_EPOCH
    with client_for(cluster, follower) as client:
        listed: ListOffsetsResponse = client.request(
            ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    ListOffsetsTopic(
                        name="t", partitions=[ListOffsetsPartition(partition_index=0, timestamp=-1)]
                    )
                ],
            ),
            7,
        )
    assert listed.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER

    for _ in range(3):
        assert raw_produce(cluster, leader, "t", 0, [b"a", b"b", b"c"], acks=-1) == ErrorCode.NONE
    # OffsetForLeaderEpoch: the leader knows epoch 0 ends at its log end; a follower refuses; an epoch newer than
    # any in the log is undefined.
    assert offset_for_leader_epoch(cluster, leader, "t", 0, leader_epoch=0, current_leader_epoch=0) == (
        0,
        0,
        9,
    )
    assert (
        offset_for_leader_epoch(cluster, follower, "t", 0, leader_epoch=0)[0]
        == ErrorCode.NOT_LEADER_OR_FOLLOWER
    )
    assert offset_for_leader_epoch(cluster, leader, "t", 0, leader_epoch=7) == (0, -1, -1)

    with client_for(cluster, follower) as client:
        described: DescribeClusterResponse = client.request(DescribeClusterRequest(), 0)
    assert described.controller_id in (1, 2, 3)
    assert sorted(b.broker_id for b in described.brokers) == [1, 2, 3]

    # Producer ids are unique across the cluster: each node reserves its own block in etcd.
    ids = []
    for node in (1, 2, 3):
        with client_for(cluster, node) as client:
            for _ in range(2):
                answer: InitProducerIdResponse = client.request(
                    InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4
                )
                assert answer.error_code == ErrorCode.NONE
                ids.append(answer.producer_id)
    assert len(set(ids)) == 6
    assert len({pid // 1000 for pid in ids}) == 3

    # After a leader change the old epoch is fenced everywhere, and the new leader's epoch entry is where the old
    # epoch ended.
    cluster.terminate(leader)
    moved = cluster.wait_for_leader("t", 0, other_than=leader)
    assert moved.leader_epoch == 1
    assert moved.leader in state.isr
    assert cluster.wait_until(
        lambda d: raw_fetch(cluster, moved.leader, "t", 0, current_leader_epoch=1) == ErrorCode.NONE,
        "the new leader to serve at epoch 1",
    )
    assert raw_fetch(cluster, moved.leader, "t", 0, current_leader_epoch=0) == ErrorCode.FENCED_LEADER_EPOCH
    assert offset_for_leader_epoch(cluster, moved.leader, "t", 0, leader_epoch=0, current_leader_epoch=1) == (
        0,
        0,
        9,
    )
    assert offset_for_leader_epoch(cluster, moved.leader, "t", 0, leader_epoch=1, current_leader_epoch=1) == (
        0,
        1,
        9,
    )


def test_min_insync_replicas_refuses_acks_all_before_appending(cluster: Cluster) -> None:
    cluster.create_topic("strict", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"})
    leader = cluster.partition("strict", 0).leader
    followers = [i for i in (1, 2, 3) if i != leader]

    cluster.kill(followers[0])
    cluster.wait_for_isr("strict", 0, size=2)
    assert raw_produce(cluster, leader, "strict", 0, [b"two in sync"], acks=-1) == ErrorCode.NONE

    cluster.kill(followers[1])
    cluster.wait_for_isr("strict", 0, size=1)
    assert raw_produce(cluster, leader, "strict", 0, [b"refused"], acks=-1) == ErrorCode.NOT_ENOUGH_REPLICAS
    # acks=1 does not ask for replicas: it is written.
    assert raw_produce(cluster, leader, "strict", 0, [b"acks one"], acks=1) == ErrorCode.NONE

    for follower in followers:
        cluster.start_node(follower)
    cluster.wait_for_isr("strict", 0, size=3)
    assert raw_produce(cluster, leader, "strict", 0, [b"all back"], acks=-1) == ErrorCode.NONE
    values = list(consume_all(cluster, "strict", 1))
    assert values == [b"two in sync", b"acks one", b"all back"]


def test_leader_kill_fails_over_without_losing_acknowledged_records(cluster: Cluster) -> None:
    cluster.create_topic("events", partitions=2, replication_factor=3, configs={"min.insync.replicas": "2"})
    before = cluster.partition("events", 0)
    victim = before.leader

    produced = Produced()
    producer = idempotent_producer(cluster)
    stop = threading.Event()
    sent = 0

    def produce_until_stopped() -> None:
        nonlocal sent
        while not stop.is_set():
            producer.produce("events", value=f"e-{sent}".encode(), partition=sent % 2, on_delivery=produced)
            sent += 1
            producer.poll(0.002)

    worker = threading.Thread(target=produce_until_stopped)
    worker.start()
    try:
        time.sleep(1.5)
        killed_at = time.monotonic()
        cluster.kill(victim)
        after = cluster.wait_for_leader("events", 0, other_than=victim)
        # The killed node is out of the ISR: its partitions are under-replicated until it returns.
        cluster.wait_for_isr("events", 0, size=2)
        under = topics_command(cluster, "--describe", "--under-replicated-partitions")
        assert re.search(r"Topic: events\tPartition: 0\t", under), under
        time.sleep(1.0)
    finally:
        stop.set()
        worker.join()
    assert producer.flush(60) == 0

    assert after.leader in before.isr
    assert after.leader_epoch == before.leader_epoch + 1
    assert not produced.failed, produced.failed[:5]
    assert len(produced.acked) == sent
    first_ack = min(ts for p, _, ts in produced.acked.values() if p == 0 and ts > killed_at)
    failover_s = first_ack - killed_at
    print(f"failover: first acknowledged produce to events-0 {failover_s:.2f}s after kill -9 of the leader")
    assert failover_s < 15

    consumed = consume_all(cluster, "events", 2)
    missing = [v for v in produced.acked if v not in consumed]
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {missing[:5]}"

    # The node comes back, catches up and rejoins the ISR; then nothing is under-replicated.
    cluster.start_node(victim)
    cluster.wait_until(
        lambda d: all(len(p.isr) == 3 for t in d.topics.values() for p in t.partitions),
        "every partition to have three in-sync replicas",
    )
    assert topics_command(cluster, "--describe", "--under-replicated-partitions") == ""


def test_returning_leader_truncates_its_divergent_tail(monitored_cluster: Cluster) -> None:
    cluster = monitored_cluster
    cluster.create_topic("ledger", partitions=1, replication_factor=3)
    state = cluster.partition("ledger", 0)
    old_leader = state.leader
    followers = [r for r in state.replicas if r != old_leader]
    for i in range(5):
        assert (
            raw_produce(cluster, old_leader, "ledger", 0, [f"committed-{i}".encode()], acks=-1)
            == ErrorCode.NONE
        )

    # Freeze the followers and wait until the fetches they had parked on the leader have timed out
    # (replica.fetch.wait.max.ms) and been answered, so nothing written from then on reaches them; then the leader
    # takes acks=1 writes only it will ever have, and dies.
    for f in followers:
        cluster.pause(f)
    try:
        wait_for(
            "the paused followers' fetches parked on the leader to be answered",
            lambda: value(scrape(cluster.metrics[old_leader]), PARKED_FOLLOWER_FETCHES) == 0 or None,
        )
        for i in range(3):
            assert (
                raw_produce(cluster, old_leader, "ledger", 0, [f"lost-{i}".encode()], acks=1)
                == ErrorCode.NONE
            )
        cluster.kill(old_leader)
    finally:
        for f in followers:
            cluster.resume(f)

    new = cluster.wait_for_leader("ledger", 0, other_than=old_leader)
    assert new.leader_epoch == state.leader_epoch + 1
    for i in range(4):
        assert (
            raw_produce(cluster, new.leader, "ledger", 0, [f"new-epoch-{i}".encode()], acks=-1)
            == ErrorCode.NONE
        )

    cluster.start_node(old_leader)
    cluster.wait_for_isr("ledger", 0, size=3)
    assert "truncating ledger-0 from 8 to 5" in cluster.node(old_leader).log_text()

    values = list(consume_all(cluster, "ledger", 1))
    assert values == [f"committed-{i}".encode() for i in range(5)] + [
        f"new-epoch-{i}".encode() for i in range(4)
    ]

    # Every replica holds the very same batches (the leader's bytes, its offsets and epochs).
    cluster.stop()
    logs = {i: read_log(cluster.node(i).data_dir, "ledger", 0) for i in (1, 2, 3)}
    assert logs[1] == logs[2] == logs[3]
    assert [offset for offset, _ in logs[1]] == list(range(9))


HELD_REQUESTS = 32
HELD_BATCH_BYTES = 900 * 1024


def test_acks_all_produces_waiting_for_followers_do_not_keep_their_request_buffers(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Pipelined acks=-1 produces of ~1 MiB wait for two stopped followers: the leader has written each batch
    already, so what it keeps per waiting request must not be the request's buffer (a connection may have 64 such
    waits, and librdkafka pipelines without limit). Then the followers come back, every produce is acknowledged in
    order, and every byte reads back."""
    overrides = {
        # The stopped followers must neither leave the ISR nor lose their etcd session while the requests wait.
        "replica.lag.time.max.ms": "120000",
        "broker.session.timeout.ms": "120000",
    }
    with running_cluster(tmp_path, request=request, metrics=True, overrides=overrides) as cluster:
        cluster.create_topic("held", partitions=1, replication_factor=3)
        state = cluster.partition("held", 0)
        leader = state.leader
        followers = [r for r in state.replicas if r != leader]
        cluster.wait_for_isr("held", 0, size=3)
        values = [os.urandom(HELD_BATCH_BYTES) for _ in range(HELD_REQUESTS)]
        host, port = parse_host_port(cluster.node(leader).bootstrap)
        with socket.create_connection((host, port), timeout=60) as sock:
            for f in followers:
                cluster.pause(f)
            try:
                before = rss_mib(cluster.node(leader).pid)
                for correlation_id, v in enumerate(values, start=1):
                    batch = build_batch(
                        [Record(offset=0, timestamp=int(time.time() * 1000), key=None, value=v)]
                    )
                    produce = ProduceRequest(
                        acks=-1,
                        timeout_ms=120000,
                        topic_data=[
                            TopicProduceData(
                                name="held",
                                partition_data=[PartitionProduceData(index=0, records=bytes(batch))],
                            )
                        ],
                    )
                    sock.sendall(encode_request(produce, 9, correlation_id, "held-test"))
                # Every batch is in the leader's log (its log end offset) ...
                wait_for(
                    "every batch to be appended by the leader",
                    lambda: (
                        value(scrape(cluster.metrics[leader]), LOG_END_OFFSET, topic="held", partition="0")
                        == HELD_REQUESTS
                        or None
                    ),
                )
                grown_mib = rss_mib(cluster.node(leader).pid) - before
                # ... and they are still waiting: the premise of the measurement.
                samples = scrape(cluster.metrics[leader])
                assert value(samples, PURGATORY_SIZE, delayedOperation="Produce") >= 1
            finally:
                for f in followers:
                    cluster.resume(f)
            decoder = FrameDecoder()
            offsets = []
            for correlation_id in range(1, HELD_REQUESTS + 1):
                while (frame := decoder.next_frame()) is NEED_DATA:
                    data = sock.recv(1 << 16)
                    assert data, "the leader closed the connection"
                    decoder.feed(data)
                assert isinstance(frame, bytearray)
                response: ProduceResponse = decode_response(frame, ApiKey.PRODUCE, 9, correlation_id)
                answer = response.responses[0].partition_responses[0]
                assert answer.error_code == ErrorCode.NONE
                offsets.append(answer.base_offset)
        assert offsets == list(range(HELD_REQUESTS))
        # Holding the requests' buffers would be ~28 MiB; the leader's allocator may keep a frame or two.
        assert grown_mib < HELD_REQUESTS * HELD_BATCH_BYTES / 4 / 2**20, (
            f"the leader's resident memory grew by {grown_mib:.1f} MiB while {HELD_REQUESTS} produces of "
            f"{HELD_BATCH_BYTES // 1024} KiB waited"
        )
        assert consume_all(cluster, "held", 1) == {v: (0, i) for i, v in enumerate(values)}


JAVA_CONSUMER = r"""
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

// Reads partition 0 of a topic from the beginning until N records arrived, printing "offset value" lines.
public class ReplicaConsumer {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "none");
        props.put("metadata.max.age.ms", "1000");
        int wanted = Integer.parseInt(args[2]);
        long deadline = System.currentTimeMillis() + 90_000;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(args[1], 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            int seen = 0;
            while (seen < wanted && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println(r.offset() + " " + r.leaderEpoch().orElse(-1) + " " + r.value());
                    System.out.flush();
                    seen++;
                }
            }
            System.exit(seen == wanted ? 0 : 3);
        }
    }
}
"""


def test_java_consumer_validates_its_position_across_a_leader_change(
    cluster: Cluster,
    tmp_path: Path,
    java_tools: tuple[str, str],
    kafka_clients_classpath: list[Path],
) -> None:
    javac, java = java_tools
    source = tmp_path / "java" / "ReplicaConsumer.java"
    source.parent.mkdir()
    source.write_text(JAVA_CONSUMER)
    classpath = ":".join(str(p) for p in kafka_clients_classpath)
    subprocess.run([javac, "-d", str(source.parent), "-cp", classpath, str(source)], check=True, timeout=120)

    cluster.create_topic(
        "validated", partitions=1, replication_factor=3, configs={"min.insync.replicas": "2"}
    )
    leader = cluster.partition("validated", 0).leader
    producer = idempotent_producer(cluster)
    for i in range(300):
        producer.produce("validated", value=f"v-{i}".encode(), partition=0)
    assert producer.flush(30) == 0

    consumer = subprocess.Popen(
        [
            java,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            # NetworkClient logs every request it sends at DEBUG: the test looks for OffsetForLeaderEpoch there.
            "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient=debug",
            "-Dorg.slf4j.simpleLogger.logFile=System.err",
            "-cp",
            f"{source.parent}:{classpath}",
            "ReplicaConsumer",
            cluster.bootstrap,
            "validated",
            "600",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines: list[str] = []
        assert consumer.stdout is not None
        while len(lines) < 300:
            line = consumer.stdout.readline()
            assert line, "the Java consumer stopped early"
            lines.append(line)
        # The consumer holds a position in epoch 0; the leader dies, and the new leader has epoch 1.
        cluster.kill(leader)
        cluster.wait_for_leader("validated", 0, other_than=leader)
        for i in range(300, 600):
            producer.produce("validated", value=f"v-{i}".encode(), partition=0)
        assert producer.flush(60) == 0
        out, err = consumer.communicate(timeout=120)
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.wait()
    lines += out.splitlines(keepends=True)
    assert consumer.returncode == 0, err[-5000:]
    records = [line.split(" ", 2) for line in lines]
    assert [int(offset) for offset, _, _ in records] == list(range(600))
    assert [value.strip() for _, _, value in records] == [f"v-{i}" for i in range(600)]
    assert {int(epoch) for _, epoch, _ in records} == {0, 1}
    assert "OFFSET_FOR_LEADER_EPOCH" in err, "the Java consumer never validated its position"
    assert "Truncation detected" not in err


def test_default_replication_factor_applies_to_created_and_auto_created_topics(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    overrides = {"default.replication.factor": "3", "num.partitions": "2"}
    with running_cluster(tmp_path, overrides=overrides, request=request) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic("defaults")])["defaults"].result(
            30
        )  # partitions and factor left to the broker
        # A producer's Metadata request creates an unknown topic (auto.create.topics.enable).
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
        producer.produce("auto-created", value=b"hello")
        assert producer.flush(30) == 0
        described = cluster.describe(["defaults", "auto-created"])
        for name in ("defaults", "auto-created"):
            partitions = described.topics[name].partitions
            assert len(partitions) == 2, name
            for p in partitions:
                assert sorted(p.replicas) == [1, 2, 3], (name, p)
