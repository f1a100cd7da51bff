"""Logging: JSON lines, per-module levels from the command line, sampled request logging, no secret in the log."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kbroker.logs import REDACTED, JsonFormatter, RedactingFilter, parse_levels, redact
from tests.broker_process import BrokerProcess

pytestmark = pytest.mark.timeout(120)


def test_levels_parse_per_module() -> None:
    assert parse_levels(["warn", "kbroker.replication=DEBUG", "kbroker.request = info"]) == {
        "": logging.WARNING,
        "kbroker.replication": logging.DEBUG,
        "kbroker.request": logging.INFO,
    }
    with pytest.raises(ValueError, match="must be one of"):
        parse_levels(["kbroker=LOUD"])


@pytest.mark.parametrize(
    "text",
    [
        "ssl.keystore.password=hunter2",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config='org.apache.kafka...PlainLoginModule required "
        'username="alice" password="hunter2";\'',
        '{"sasl.password": "hunter2"}',
        "connecting with token: hunter2, retrying",
        "SASL_PASSWORD=hunter2",
    ],
)
def test_secret_values_are_redacted(text: str) -> None:
    out = redact(text)
    assert "hunter2" not in out
    assert REDACTED in out


def test_json_lines_carry_the_structured_fields_redacted() -> None:
    record = logging.LogRecord(
        "kbroker.x", logging.INFO, __file__, 1, "login with password=%s", ("hunter2",), None
    )
    record.client_id = "app-1"
    record.api_token = "hunter2"
    assert RedactingFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "INFO"
    assert line["logger"] == "kbroker.x"
    assert line["message"] == f"login with password={REDACTED}"
    assert line["client_id"] == "app-1"
    assert line["api_token"] == REDACTED
    assert "hunter2" not in json.dumps(line)


def test_json_logs_module_levels_and_sampled_requests(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", log_path=tmp_path / "broker.log")
    broker.extra_args = [
        "--log-format", "json",
        "--log-level", "WARNING",
        "--log-level", "kbroker.request=INFO",
        "--log-level", "kbroker.replication.replica_manager=DEBUG",
        "--log-requests", "2",
    ]  # fmt: skip
    secret = "s3cret-payload-4c1d"
    try:
        broker.start()
        producer = Producer({"bootstrap.servers": broker.bootstrap, "client.id": "log-test", "linger.ms": 0})
        for _ in range(10):
            producer.produce("logged", secret.encode(), key=b"password=hunter2")
            producer.flush(30)
    finally:
        broker.terminate()
    text = broker.log_text()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert lines, text[-2000:]
    requests = [line for line in lines if line["logger"] == "kbroker.request"]
    produces = [line for line in requests if line["api"] == "Produce"]
    # every second request: about half of the produces (and of the metadata and versions requests around them)
    assert 4 <= len(produces) <= 6, requests
    assert produces[0]["client_id"] == "log-test"
    assert produces[0]["api_version"] >= 3
    assert produces[0]["latency_ms"] >= 0
    # INFO of other loggers is below the root's WARNING; the replica manager's DEBUG is on
    assert not any(line["message"].startswith("broker 0 started") for line in lines)
    assert any(
        line["logger"] == "kbroker.replication.replica_manager" and line["level"] == "DEBUG" for line in lines
    )
    # Record contents never reach the log, whatever the levels.
    assert secret not in text
    assert "hunter2" not in text
