"""Every stock client over every secured listener of a kbroker: SASL_SSL with SCRAM-SHA-512, SSL with a client
certificate, SASL_PLAINTEXT with PLAIN, each configured as its users configure it (the settings docs/security.md
shows). Each client produces records over the listener and reads them back; the Java client also logs in with
OAUTHBEARER (a signed JWT from a file, KIP-768's file token endpoint) and librdkafka through confluent-kafka's
oauth_cb. Wrong credentials end in the client's own authentication error, with nothing produced.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer as KpConsumer
from kafka import KafkaProducer as KpProducer
from kafka import TopicPartition as KpTopicPartition

from compat.clients.franz import FranzProgram, config_args
from compat.clients.java import HarnessFailed, JavaHarness
from compat.conftest import require_kafka
from compat.kafka import KAFKA_3
from compat.records import Record, from_json, to_line
from tests.conftest import register_broker
from tests.security_support import PASSWORDS, OAuthIssuer, Pki, SecureBroker, make_pki

pytestmark = pytest.mark.timeout(300)

MODES = ("SASL_SSL-SCRAM-SHA-512", "SSL-client-certificate", "SASL_PLAINTEXT-PLAIN")
COUNT = 10


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("client-pki"))


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[SecureBroker]:
    base = tmp_path_factory.mktemp("client-broker")
    broker = SecureBroker(base / "data", pki, OAuthIssuer.create(pki.dir), log_path=base / "broker.log")
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(autouse=True)
def _log_on_failure(request: pytest.FixtureRequest, secure: SecureBroker) -> None:
    register_broker(request, secure)


def listener_of(mode: str) -> str:
    return mode.split("-", 1)[0]


def new_topic(secure: SecureBroker) -> str:
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": secure.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    return topic


def values(topic: str) -> list[bytes]:
    return [f"{topic}-{i}".encode() for i in range(COUNT)]


# ---- librdkafka (confluent-kafka, kcat) -------------------------------------------------------------------------


def librdkafka_settings(
    mode: str, pki: Pki, user: str = "alice", password: str | None = None
) -> dict[str, str]:
    password = PASSWORDS[user] if password is None else password
    if mode == "SASL_SSL-SCRAM-SHA-512":
        return {"security.protocol": "SASL_SSL", "ssl.ca.location": str(pki.ca), "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": user, "sasl.password": password}  # fmt: skip
    if mode == "SSL-client-certificate":
        cert, key = pki.clients[user]
        return {"security.protocol": "SSL", "ssl.ca.location": str(pki.ca), "ssl.certificate.location": str(cert),
                "ssl.key.location": str(key)}  # fmt: skip
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": user,
            "sasl.password": password}  # fmt: skip


def confluent_roundtrip(bootstrap: str, topic: str, settings: dict[str, Any]) -> list[bytes]:
    producer = Producer({"bootstrap.servers": bootstrap, **settings})
    for value in values(topic):
        producer.produce(topic, value=value)
    assert producer.flush(60) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", **settings})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(2)])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < COUNT and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            got.append(message.value() or b"")
    consumer.close()
    return sorted(got)


@pytest.mark.parametrize("mode", MODES)
def test_confluent_kafka(secure: SecureBroker, pki: Pki, mode: str) -> None:
    topic = new_topic(secure)
    got = confluent_roundtrip(secure.bootstrap_of(listener_of(mode)), topic, librdkafka_settings(mode, pki))
    assert got == sorted(values(topic))


def test_confluent_kafka_oauthbearer(secure: SecureBroker, pki: Pki) -> None:
    topic = new_topic(secure)

    def token(_config: str) -> tuple[str, float]:
        return secure.issuer.token("alice", lifetime_s=600), time.time() + 600

    settings = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(pki.ca), "sasl.mechanism": "OAUTHBEARER",
                "oauth_cb": token}  # fmt: skip
    assert confluent_roundtrip(secure.bootstrap_of("SASL_SSL"), topic, settings) == sorted(values(topic))


def test_confluent_kafka_with_a_wrong_password_fails_clearly(secure: SecureBroker, pki: Pki) -> None:
    errors: list[str] = []
    settings = {**librdkafka_settings("SASL_SSL-SCRAM-SHA-512", pki, password="wrong"),
                "error_cb": lambda e: errors.append(str(e))}  # fmt: skip
    producer = Producer({"bootstrap.servers": secure.bootstrap_of("SASL_SSL"), **settings})
    producer.produce("never-written", value=b"x")
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert any("Authentication failed" in e for e in errors), errors
    with pytest.raises(KafkaException):
        producer.list_topics(timeout=2)


@pytest.mark.parametrize("mode", MODES)
def test_kcat(secure: SecureBroker, pki: Pki, mode: str, kcat_path: Path) -> None:
    topic = new_topic(secure)
    options = [arg for k, v in librdkafka_settings(mode, pki).items() for arg in ("-X", f"{k}={v}")]
    bootstrap = secure.bootstrap_of(listener_of(mode))
    produced = subprocess.run(
        [str(kcat_path), "-P", "-b", bootstrap, "-t", topic, *options],
        input=b"\n".join(values(topic)) + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert produced.returncode == 0, produced.stderr.decode(errors="replace")[-3000:]
    out = subprocess.run(
        [str(kcat_path), "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", *options],
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-3000:]
    assert sorted(line for line in out.stdout.split(b"\n") if line) == sorted(values(topic))


# ---- franz-go (kgo) --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_franz_go(secure: SecureBroker, pki: Pki, mode: str, franz_program: FranzProgram) -> None:
    """kgo's dialer with a tls.Config and its SASL mechanisms (compat/go/franz/main.go takes librdkafka's names)."""
    topic = new_topic(secure)
    bootstrap = secure.bootstrap_of(listener_of(mode))
    settings = config_args(librdkafka_settings(mode, pki))
    records = [
        Record(index=i, partition=None, key=None, value=v, headers=(), timestamp=None)
        for i, v in enumerate(values(topic))
    ]
    lines = franz_program.run(bootstrap, *settings, "produce", topic, "none",
                              stdin="".join(to_line(r) + "\n" for r in records))  # fmt: skip
    assert lines[-1] == {"sent": COUNT, "acknowledged": COUNT, "failed": 0}, lines[-1]
    consumed = franz_program.run(bootstrap, *settings, "consume", topic, "2", str(COUNT), "60")
    assert sorted(from_json(line).value or b"" for line in consumed if "offset" in line) == sorted(
        values(topic)
    )


# ---- kafka-python 3 ---------------------------------------------------------------------------------------------


def kafka_python_settings(mode: str, pki: Pki) -> dict[str, Any]:
    if mode == "SASL_SSL-SCRAM-SHA-512":
        return {"security_protocol": "SASL_SSL", "ssl_cafile": str(pki.ca), "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_username": "alice", "sasl_plain_password": PASSWORDS["alice"]}  # fmt: skip
    if mode == "SSL-client-certificate":
        cert, key = pki.clients["alice"]
        return {"security_protocol": "SSL", "ssl_cafile": str(pki.ca), "ssl_certfile": str(cert),
                "ssl_keyfile": str(key)}  # fmt: skip
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "alice",
            "sasl_plain_password": PASSWORDS["alice"]}  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_kafka_python(secure: SecureBroker, pki: Pki, mode: str) -> None:
    topic = new_topic(secure)
    bootstrap = secure.bootstrap_of(listener_of(mode))
    settings = kafka_python_settings(mode, pki)
    producer = KpProducer(bootstrap_servers=bootstrap, **settings)
    for value in values(topic):
        producer.send(topic, value=value)
    producer.flush(60)
    producer.close()
    consumer = KpConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=20000, **settings)
    consumer.assign([KpTopicPartition(topic, p) for p in range(2)])
    consumer.seek_to_beginning()
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == COUNT:
            break
    consumer.close()
    assert sorted(got) == sorted(values(topic))


# ---- the Java client (and so Spark) ----------------------------------------------------------------------------


def java_settings(mode: str, pki: Pki, user: str = "alice", password: str | None = None) -> dict[str, str]:
    password = PASSWORDS[user] if password is None else password
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca)}
    if mode == "SASL_SSL-SCRAM-SHA-512":
        return {"security.protocol": "SASL_SSL", **trust, "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                    f'username="{user}" password="{password}";'}  # fmt: skip
    if mode == "SSL-client-certificate":
        return {"security.protocol": "SSL", **trust, "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(pki.client_pem(user))}  # fmt: skip
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
                                f'username="{user}" password="{password}";'}  # fmt: skip


def java_roundtrip(harness: JavaHarness, bootstrap: str, topic: str, settings: dict[str, str]) -> list[bytes]:
    records = [
        Record(index=i, partition=None, key=None, value=v, headers=(), timestamp=None)
        for i, v in enumerate(values(topic))
    ]
    lines = "".join(to_line(r) + "\n" for r in records)
    harness.run(bootstrap, "produce", topic, str(COUNT), config=settings, stdin=lines)
    consumed = harness.run(bootstrap, "consume", topic, str(COUNT), config=settings)
    return sorted(from_json(line).value or b"" for line in consumed if "offset" in line)


@pytest.mark.parametrize("mode", MODES)
def test_java_client(secure: SecureBroker, pki: Pki, mode: str, java_harness: JavaHarness) -> None:
    topic = new_topic(secure)
    bootstrap = secure.bootstrap_of(listener_of(mode))
    assert java_roundtrip(java_harness, bootstrap, topic, java_settings(mode, pki)) == sorted(values(topic))


@pytest.fixture(scope="module")
def java_harness_with_jackson(
    java_tools: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> JavaHarness:
    """The harness on Apache Kafka 3.9.2's own jars: the Java client's OAUTHBEARER login handler needs Jackson and
    jose4j, which the thin kafka-clients jar of the other scenarios lacks."""
    javac, java = java_tools
    libs = require_kafka(KAFKA_3)
    return JavaHarness.compile(
        javac, java, sorted(libs.glob("*.jar")), tmp_path_factory.mktemp("harness-jackson")
    )


def test_java_client_oauthbearer(
    secure: SecureBroker, pki: Pki, java_harness_with_jackson: JavaHarness, tmp_path: Path
) -> None:
    """KIP-768's login handler with a file token endpoint: the client reads a signed JWT from a file."""
    java_harness = java_harness_with_jackson
    token = tmp_path / "token.jwt"
    token.write_text(secure.issuer.token("alice", lifetime_s=600))
    topic = new_topic(secure)
    settings = {
        "security.protocol": "SASL_SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca),
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class":
            "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
        "sasl.oauthbearer.token.endpoint.url": token.as_uri(),
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
    }  # fmt: skip
    got = java_roundtrip(java_harness, secure.bootstrap_of("SASL_SSL"), topic, settings)
    assert got == sorted(values(topic))


def test_java_client_with_a_wrong_password_fails_clearly(
    secure: SecureBroker, pki: Pki, java_harness: JavaHarness
) -> None:
    settings = {**java_settings("SASL_SSL-SCRAM-SHA-512", pki, password="wrong"), "request.timeout.ms": "10000",
                "default.api.timeout.ms": "20000"}  # fmt: skip
    with pytest.raises(HarnessFailed) as failed:
        java_harness.run(
            secure.bootstrap_of("SASL_SSL"), "admin-create", "never-created", "1", config=settings
        )
    assert "SaslAuthenticationException" in str(failed.value)
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in str(failed.value)


# ---- Spark's format("kafka") -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["SASL_SSL-SCRAM-SHA-512", "SSL-client-certificate"])
def test_spark_source_and_sink(secure: SecureBroker, pki: Pki, mode: str, spark: Any) -> None:
    """Spark's own connector, its `kafka.`-prefixed options carrying the Java client's security settings."""
    topic = new_topic(secure)
    options = {"kafka.bootstrap.servers": secure.bootstrap_of(listener_of(mode))}
    options.update({f"kafka.{k}": v for k, v in java_settings(mode, pki).items()})
    rows = [(f"k{i}", v.decode()) for i, v in enumerate(values(topic))]
    frame = spark.createDataFrame(rows, ["key", "value"])
    frame.write.format("kafka").options(**options).option("topic", topic).save()
    read = (
        spark.read.format("kafka").options(**options).option("subscribe", topic)
        .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
    )  # fmt: skip
    got = sorted(bytes(row.value) for row in read.select("value").collect())
    assert got == sorted(values(topic))
