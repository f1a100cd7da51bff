"""Health and replication metrics of cluster nodes: /health/ready means registered and caught up, and the leader's
ISR metrics follow a follower that stops and comes back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer

from tests.broker_process import free_port
from tests.cluster_fixture import Cluster
from tests.etcd_process import running_etcd
from tests.test_metrics import scrape, value

pytestmark = [pytest.mark.timeout(180), pytest.mark.cluster]

WAIT_S = 60.0


def ready(base: str) -> tuple[int, dict[str, object]]:
    try:
        response = httpx.get(f"{base}/health/ready", timeout=5)
    except httpx.HTTPError as exc:
        return 0, {"error": str(exc)}
    return response.status_code, response.json()


def test_a_node_waiting_for_its_cluster_is_live_but_not_ready(tmp_path: Path) -> None:
    """etcd is not there: the node waits for it, its admin listener already answers."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    no_etcd = f"etcd://127.0.0.1:{free_port()}"
    with (tmp_path / "node.log").open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "kbroker", "serve", "--node-id", "1", "--metadata", no_etcd,
                "--data-dir", str(tmp_path / "data"), "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}",
                "--override", f"admin.listener={base}",
            ],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                live = httpx.get(f"{base}/health/live", timeout=5)
                break
            except httpx.HTTPError:
                assert process.poll() is None, (tmp_path / "node.log").read_text()
                assert time.monotonic() < deadline, "the admin listener never answered"
                time.sleep(0.1)
        assert live.status_code == 200
        status, body = ready(base)
        assert status == 503
        assert body["reasons"] == ["the Kafka listener is not accepting connections yet"]
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(30)


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Cluster, dict[int, str]]]:
    with running_etcd() as etcd:
        cluster = Cluster(tmp_path, etcd, 2, request=request)
        admin = {}
        for node_id, node in cluster.nodes.items():
            admin[node_id] = f"http://127.0.0.1:{free_port()}"
            node.overrides["admin.listener"] = admin[node_id]
        try:
            cluster.start()
            yield cluster, admin
        finally:
            cluster.stop()


def test_ready_follows_the_isr_and_so_do_the_leaders_metrics(cluster: tuple[Cluster, dict[int, str]]) -> None:
    nodes, admin = cluster
    nodes.create_topic("watched", 1, 2, {"min.insync.replicas": "2"})
    leader = nodes.partition("watched", 0).leader
    follower = next(n for n in nodes.nodes if n != leader)
    for node_id in nodes.nodes:
        deadline = time.monotonic() + WAIT_S
        while ready(admin[node_id])[0] != 200:
            assert time.monotonic() < deadline, ready(admin[node_id])
            time.sleep(0.1)
    before = scrape(admin[leader])
    assert value(before, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert value(before, "kafka_server_replicamanager_leadercount") >= 1

    nodes.pause(follower)
    try:
        nodes.wait_for_isr("watched", 0, size=1)
        producer = Producer({"bootstrap.servers": nodes.node(leader).bootstrap, "acks": "1"})
        for i in range(50):
            producer.produce("watched", f"while-away-{i}".encode(), partition=0)
        assert producer.flush(30) == 0
        shrunk = scrape(admin[leader])
        assert value(shrunk, "kafka_server_replicamanager_isrshrinks_total") >= 1
        assert value(shrunk, "kafka_server_replicamanager_underreplicatedpartitions") >= 1
        assert value(shrunk, "kafka_server_replicamanager_underminisrpartitioncount") >= 1
        assert ready(admin[leader])[0] == 200  # a leader needs no follower to be ready
    finally:
        nodes.resume(follower)

    # The follower is ready again once it is back in the ISR (its own metadata says so).
    seen_not_ready: list[object] = []
    deadline = time.monotonic() + WAIT_S
    while True:
        status, body = ready(admin[follower])
        if status == 200:
            break
        seen_not_ready.append(body.get("reasons"))
        assert time.monotonic() < deadline, seen_not_ready[-5:]
        time.sleep(0.05)
    nodes.wait_for_isr("watched", 0, size=2)
    expanded = scrape(admin[leader])
    assert value(expanded, "kafka_server_replicamanager_isrexpands_total") >= 1
    assert value(expanded, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    # the follower's own log caught up with the records written while it was away
    assert value(scrape(admin[follower]), "kafka_log_log_logendoffset", topic="watched", partition="0") == 50
