"""The admin listener's Prometheus endpoint and health checks, scraped from a real broker that stock clients use.

Each metric is checked against what the test itself did through confluent-kafka and our CLI (records and bytes
written, groups' committed offsets), so a counter that does not move, or moves wrongly, fails.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer, Producer
from prometheus_client.parser import text_string_to_metric_families

from tests.broker_process import BrokerProcess, free_port
from tests.conftest import BrokerFactory
from tests.test_groups_support import GROUP_OVERRIDES, create_topic

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(base: str) -> Samples:
    response = httpx.get(f"{base}/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    out: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@pytest.fixture
def monitored(broker_factory: BrokerFactory) -> tuple[BrokerProcess, str]:
    port = free_port()
    broker = broker_factory(overrides={**GROUP_OVERRIDES, "admin.listener": f"http://127.0.0.1:{port}"})
    return broker, f"http://127.0.0.1:{port}"


def test_metrics_follow_what_clients_do(monitored: tuple[BrokerProcess, str]) -> None:
    broker, base = monitored
    topic = create_topic(broker.bootstrap, 2, "metrics")
    before = scrape(base)
    assert value(before, "kafka_server_replicamanager_leadercount") >= 2
    assert value(before, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert value(before, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0
    assert value(before, "kafka_log_log_size", topic=topic, partition="0") == 0
    assert value(before, "process_cpu_seconds_total") > 0
    assert value(before, "process_resident_memory_bytes") > 0

    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0})
    payload = b"x" * 100
    for i in range(30):
        producer.produce(topic, payload, key=str(i).encode(), partition=i % 2)
        producer.flush(30)  # one batch per record: 30 produce requests
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap,
        "group.id": "metrics-group",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })  # fmt: skip
    try:
        consumer.subscribe([topic])
        received = 0
        while received < 20:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                received += 1
        consumer.commit(asynchronous=False)
        samples = scrape(base)
        assert value(samples, "kafka_server_socketservermetrics_connection_count") >= 1
    finally:
        consumer.close()

    assert value(samples, "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == 30
    assert value(samples, "kafka_server_brokertopicmetrics_bytesin_total", topic=topic) > 30 * 100
    assert value(samples, "kafka_server_brokertopicmetrics_totalproducerequests_total", topic=topic) == 30
    assert value(samples, "kafka_server_brokertopicmetrics_messagesout_total", topic=topic) >= 20
    assert value(samples, "kafka_server_brokertopicmetrics_bytesout_total", topic=topic) > 20 * 100
    produce_requests = value(samples, "kafka_network_requestmetrics_requests_total", request="Produce")
    assert produce_requests >= 30
    assert (
        value(samples, "kafka_network_requestmetrics_totaltime_seconds_count", request="Produce")
        == produce_requests
    )
    assert value(
        samples, "kafka_network_requestmetrics_totaltime_seconds_bucket", request="Produce", le="+Inf"
    ) == (produce_requests)
    assert value(samples, "kafka_network_requestmetrics_requests_total", request="JoinGroup") >= 1
    # acks=all: every produce waited for an fsync of its log
    assert value(samples, "kafka_log_logflushstats_logflush_seconds_count") >= 1
    assert value(samples, "kafka_server_socketservermetrics_connection_creation_total") >= 2
    size = value(samples, "kafka_log_log_size", topic=topic, partition="0")
    assert size > 15 * 100
    assert value(samples, "kafka_log_log_numlogsegments", topic=topic, partition="0") == 1
    assert value(samples, "kafka_log_log_logendoffset", topic=topic, partition="0") == 15

    # The group committed its position on both partitions: lag is what it did not read.
    committed = {
        p: value(
            samples,
            "kafka_consumergroup_current_offset",
            consumergroup="metrics-group",
            topic=topic,
            partition=p,
        )
        for p in ("0", "1")
    }
    assert sum(committed.values()) == received
    lags = [
        value(samples, "kafka_consumergroup_lag", consumergroup="metrics-group", topic=topic, partition=p)
        for p in ("0", "1")
    ]
    assert sum(lags) == 30 - received
    assert (
        value(samples, "kafka_server_delayedoperationpurgatory_purgatorysize", delayedOperation="Produce")
        == 0
    )


def test_health_endpoints_and_the_console_are_served(monitored: tuple[BrokerProcess, str]) -> None:
    _, base = monitored
    live = httpx.get(f"{base}/health/live", timeout=10)
    assert (live.status_code, live.json()["status"]) == (200, "live")
    ready = httpx.get(f"{base}/health/ready", timeout=10)
    assert (ready.status_code, ready.json()) == (200, {"status": "ready", "reasons": []})
    page = httpx.get(f"{base}/", timeout=10)
    assert page.status_code == 200
    assert "<title>kbroker console</title>" in page.text
    assert httpx.get(f"{base}/console.js", timeout=10).status_code == 200
    missing = httpx.get(f"{base}/nothing-here", timeout=10)
    assert missing.status_code == 404
    json_header = {"content-type": "application/json"}
    bad = httpx.post(f"{base}/api/topics", content=b"not json", headers=json_header, timeout=10)
    assert (bad.status_code, bad.json()) == (400, {"error": "the body must be a JSON object"})
    wrong_type = httpx.post(f"{base}/api/topics", json={"name": "t", "partitions": "many"}, timeout=10)
    assert wrong_type.status_code == 400
    assert wrong_type.json()["error"].startswith("bad request: invalid literal for int()")
    # What a page of another site could send: a form's plain body, or JSON from a foreign origin.
    plain = httpx.post(f"{base}/api/topics", content=b'{"name": "csrf"}', timeout=10)
    assert plain.status_code == 415
    foreign = httpx.post(
        f"{base}/api/topics", json={"name": "csrf"}, headers={"origin": "http://evil.example"}, timeout=10
    )
    assert foreign.status_code == 403
    assert "csrf" not in [t["name"] for t in httpx.get(f"{base}/api/topics", timeout=10).json()]


def test_the_admin_listener_is_off_by_default(broker: BrokerProcess) -> None:
    assert "admin listener" not in broker.log_text()
    assert "listening on" in broker.log_text()


@pytest.mark.parametrize(
    ("value_", "status", "message"),
    [
        ("127.0.0.1:9404", 2, "is not http://HOST:PORT"),
        ("http://127.0.0.1:9404/console", 2, "no path"),
    ],
)
def test_a_bad_admin_listener_is_refused(tmp_path: Path, value_: str, status: int, message: str) -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "kbroker", "serve", "--data-dir", str(tmp_path / "data"),
            "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}", "--override", f"admin.listener={value_}",
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == status, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_taken_admin_port_is_said_in_one_line(tmp_path: Path, monitored: tuple[BrokerProcess, str]) -> None:
    _, base = monitored
    result = subprocess.run(
        [
            sys.executable, "-m", "kbroker", "serve", "--data-dir", str(tmp_path / "other"),
            "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}", "--override", f"admin.listener={base}",
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith(f"kbroker: admin listener {base}: ")
    assert "Traceback" not in result.stderr


def test_the_grafana_dashboard_and_the_alert_rules_use_only_exported_metrics(
    monitored: tuple[BrokerProcess, str],
) -> None:
    _, base = monitored
    exported = {
        name
        for family in text_string_to_metric_families(httpx.get(f"{base}/metrics", timeout=10).text)
        # a counter family with no samples yet (no topic has traffic) still names its series NAME_total
        for name in (family.name, f"{family.name}_total", *(s.name for s in family.samples))
    }
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b(?:kafka|process)_[a-z_]+", target["expr"])
    }
    # the alert rules are the YAML block of docs/operations.md with alerts in it
    operations = (ROOT / "docs" / "operations.md").read_text()
    blocks = [block.split("```", 1)[0] for block in operations.split("```yaml")[1:]]
    rules = next(block for block in blocks if "alert:" in block)
    used_by_alerts = set(re.findall(r"\b(?:kafka|process)_[a-z_]+", rules))
    assert len(used) >= 15
    assert len(used_by_alerts) >= 5
    assert (used | used_by_alerts) - exported == set()
