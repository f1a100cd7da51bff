"""The command line as a Kafka user meets it: `kbroker serve --help`, `--override`, `--config FILE`, bad settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kbroker.config import BROKER_CONFIGS
from kbroker.replication.client import SyncBrokerClient
from protocol.errors import ErrorCode
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from tests.broker_process import BrokerProcess, free_port

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parent.parent


def kbroker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbroker", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_serve_help_lists_every_broker_config_by_its_kafka_name() -> None:
    result = kbroker("serve", "--help")
    assert result.returncode == 0, result.stderr
    for name in BROKER_CONFIGS:
        assert name in result.stdout, f"{name} missing from kbroker serve --help"
    for flag in (
        "--data-dir",
        "--listeners",
        "--advertised-listeners",
        "--override",
        "--config",
        "--metadata",
    ):
        assert flag in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--override", "no.such.config=1"], "unknown broker config 'no.such.config'"),
        (["--override", "num.partitions=many"], "invalid value 'many' for num.partitions"),
        (
            ["--override", "log.flush.acks.all.enable=sometimes"],
            "invalid value 'sometimes' for log.flush.acks.all.enable",
        ),
        (["--override", "num.partitions"], "--override needs KEY=VALUE"),
        (["--listeners", "SSL://127.0.0.1:9093"], "listener SSL uses TLS but has no key store"),
        (
            ["--listeners", "TLS://127.0.0.1:9093"],
            "no security protocol for TLS in listener.security.protocol.map",
        ),
        (
            ["--listeners", "SASL_PLAINTEXT://127.0.0.1:9093"],
            "sasl.enabled.mechanisms on listener SASL_PLAINTEXT: GSSAPI is not supported",
        ),
        (
            [
                "--listeners",
                "SASL_PLAINTEXT://127.0.0.1:9093",
                "--override",
                "sasl.enabled.mechanisms=PLAIN",
            ],
            "names no user_NAME=",
        ),
        (
            [
                "--listeners",
                "SSL://127.0.0.1:9093",
                "--override",
                "ssl.keystore.type=JKS",
                "--override",
                "ssl.keystore.location=/nonexistent.jks",
            ],
            "kbroker reads PEM and PKCS12 stores, not JKS",
        ),
        (
            [
                "--listeners",
                "SSL://127.0.0.1:9093",
                "--override",
                "ssl.keystore.type=PEM",
                "--override",
                "ssl.keystore.location=/nonexistent.pem",
            ],
            "ssl.keystore.location=/nonexistent.pem: No such file or directory",
        ),
        (
            ["--add-scram", "SCRAM-SHA-1=[name=a,password=b]"],
            # Start-up errors pass the log's redaction: no password, not even the template's, reaches stderr.
            "password=[redacted]]': expected SCRAM-SHA-256=[name=USER,password=[redacted]] (or SCRAM-SHA-512)",
        ),
        (["--add-scram", "SCRAM-SHA-256=[name=a]"], "password= (or salt= and saltedpassword=) is missing"),
        (["--override", "authorizer.class.name=com.example.Nope"], "kbroker's authorizer implements"),
        (["--override", "listener.name.ssl.no.such=1"], "unknown broker config 'listener.name.ssl.no.such'"),
        (["--listeners", "PLAINTEXT://127.0.0.1"], "has no port"),
        (["--metadata", "zk://127.0.0.1:2181"], "--metadata must be etcd://"),
    ],
)
def test_bad_settings_are_refused_with_a_clear_message(args: list[str], message: str, tmp_path: Path) -> None:
    result = kbroker("serve", "--data-dir", str(tmp_path), *args)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def _metadata(broker: BrokerProcess, topic: str) -> tuple[int, int]:
    """(error code, partition count) of a Metadata v12 request that allows auto-creation."""
    with SyncBrokerClient(broker.host, broker.port) as client:
        response = client.request(
            MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True), 12
        )
    (t,) = response.topics
    return t.error_code, len(t.partitions)


def test_config_file_and_overrides_apply_with_overrides_winning(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text("# a Kafka-style properties file\nnum.partitions=5\nauto.create.topics.enable: true\n")
    broker = BrokerProcess(tmp_path / "data", log_path=tmp_path / "broker.log")
    broker.extra_args = ["--config", str(config), "--override", "num.partitions=3"]
    try:
        broker.start()
        assert _metadata(broker, "auto-created") == (ErrorCode.NONE, 3)
    finally:
        broker.stop()


def test_auto_create_disabled_answers_unknown_topic(tmp_path: Path) -> None:
    broker = BrokerProcess(
        tmp_path / "data", overrides={"auto.create.topics.enable": "false"}, log_path=tmp_path / "broker.log"
    )
    try:
        broker.start()
        assert _metadata(broker, "never-created") == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0)
    finally:
        broker.stop()


def test_sigterm_stops_the_broker_cleanly(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", port=free_port("127.0.0.1"), log_path=tmp_path / "broker.log")
    broker.start()
    try:
        assert _metadata(broker, "before-stop")[0] == ErrorCode.NONE
    finally:
        broker.terminate()
    assert broker.returncode() == 0
    assert "broker stopped" in (tmp_path / "broker.log").read_text()
