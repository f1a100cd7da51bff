"""Abuse before authentication, client quotas and connection limits, through real sockets.

- Garbage where a TLS handshake belongs, frames far above sasl.server.max.receive.size, 1,000 idle connections and
  slow senders on the SASL listeners never stall an authenticated client.
- A producer over its producer_byte_rate quota is throttled (KIP-219: throttle_time_ms, then muted) down to its
  quota while another user's producer keeps its own pace.
- max.connections.per.ip closes a connection over the limit at once; connections.max.idle.ms closes an idle one.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from protocol.errors import ErrorCode
from protocol.messages.alter_client_quotas_request import (
    AlterClientQuotasRequest,
    EntityData,
    EntryData,
    OpData,
)
from protocol.messages.metadata_request import MetadataRequest
from tests.conftest import BrokerFactory, register_broker
from tests.handler_tables import produce, records
from tests.security_support import (
    PASSWORDS,
    OAuthIssuer,
    SecureBroker,
    make_pki,
    sasl_login,
    secure_wire,
)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    base = tmp_path_factory.mktemp("limits")
    pki = make_pki(base / "pki")
    # Three 1-second quota samples: a rate is judged over 3 s, so the quota test reaches its steady state quickly.
    broker = SecureBroker(
        base / "data",
        pki,
        OAuthIssuer.create(pki.dir),
        overrides={"quota.window.num": "3"},
        log_path=base / "broker.log",
    )
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(autouse=True)
def _log_on_failure(request: pytest.FixtureRequest, secure: SecureBroker) -> None:
    register_broker(request, secure)


def test_abuse_before_authentication_never_stalls_an_authenticated_client(secure: SecureBroker) -> None:
    plain = ("127.0.0.1", secure.ports["SASL_PLAINTEXT"])
    tls = ("127.0.0.1", secure.ports["SASL_SSL"])
    idle = []
    try:
        for i in range(1000):
            idle.append(socket.create_connection(plain if i % 2 else tls, timeout=10))
        stop = threading.Event()

        def slow_sender() -> None:
            # a frame header promising 100 bytes, then one byte a second
            with socket.create_connection(plain, timeout=10) as sock:
                sock.sendall((100).to_bytes(4, "big"))
                while not stop.wait(1.0):
                    try:
                        sock.sendall(b"\x00")
                    except OSError:
                        return

        senders = [threading.Thread(target=slow_sender) for _ in range(20)]
        for sender in senders:
            sender.start()
        with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
            sasl_login(wire, "SCRAM-SHA-512", "alice", PASSWORDS["alice"])
            wire.sock.settimeout(5)  # a stalled broker fails the test here
            for round_ in range(20):
                # garbage where the TLS handshake belongs, and a huge frame before any login, each round
                with socket.create_connection(tls, timeout=10) as bad:
                    bad.sendall(b"\x16\x03\x01\xff\xff" + b"garbage" * 100)
                with socket.create_connection(plain, timeout=10) as bad:
                    bad.sendall((2**30).to_bytes(4, "big"))
                    assert bad.recv(1) == b""  # closed at once, nothing buffered
                answer = wire.call(produce("abuse", bytes(records(round_))), 9)
                assert answer.responses[0].partition_responses[0].error_code in (
                    ErrorCode.NONE,
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                )
                assert wire.call(MetadataRequest(topics=[]), 12).brokers
        stop.set()
        for sender in senders:
            sender.join(5)
    finally:
        for sock in idle:
            sock.close()


def _set_quota(secure: SecureBroker, user: str, key: str, value: float) -> None:
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        sasl_login(wire, "PLAIN", "admin", PASSWORDS["admin"])
        answer = wire.call(
            AlterClientQuotasRequest(
                entries=[
                    EntryData(
                        entity=[EntityData(entity_type="user", entity_name=user)],
                        ops=[OpData(key=key, value=value)],
                    )
                ]
            ),
            1,
        )
        assert [e.error_code for e in answer.entries] == [ErrorCode.NONE]


def _produce_for(secure: SecureBroker, user: str, seconds: float, out: dict[str, float]) -> None:
    """Produce 10 KiB records as fast as the broker lets this user for `seconds`; the delivered bytes per second
    once the quota window is full (after STEADY_AFTER_S: a quota lets a client run ahead while its window fills)."""
    throttled: list[int] = []
    producer = Producer(
        {
            "bootstrap.servers": secure.bootstrap_of("SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": PASSWORDS[user],
            "linger.ms": 5,
            "queue.buffering.max.kbytes": 1024,
            "throttle_cb": lambda event: throttled.append(event.throttle_time),
        }
    )
    deliveries: list[float] = []

    def on_delivery(error: object, message: object) -> None:
        if error is None:
            deliveries.append(time.monotonic())

    value = b"q" * 10240
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            producer.produce("quota-topic", value=value, on_delivery=on_delivery)
        except BufferError:
            producer.poll(0.05)
        producer.poll(0)
    end = time.monotonic()
    producer.flush(30)
    steady = [t for t in deliveries if start + STEADY_AFTER_S <= t <= end]
    out[user] = len(steady) * 10240 / (end - start - STEADY_AFTER_S)
    out[f"{user}-throttled"] = float(len(throttled))


STEADY_AFTER_S = 4.0


def test_a_producer_over_its_quota_slows_to_it_while_others_keep_their_pace(secure: SecureBroker) -> None:
    quota = 200 * 1024.0  # bytes per second
    _set_quota(secure, "alice", "producer_byte_rate", quota)
    rates: dict[str, float] = {}
    threads = [
        threading.Thread(target=_produce_for, args=(secure, user, 10.0, rates)) for user in ("alice", "bob")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    # alice was told to back off (throttle_time_ms) and, once her window was full, kept to her quota; bob, without a
    # quota, went on far faster.
    assert rates["alice-throttled"] > 0
    assert quota * 0.7 < rates["alice"] < quota * 1.3, rates
    assert rates["bob"] > quota * 3, rates
    assert rates["bob-throttled"] == 0


def test_connection_limits_and_idle_connections(broker_factory: BrokerFactory, tmp_path: Path) -> None:
    broker = broker_factory(
        overrides={"max.connections.per.ip": "5", "connections.max.idle.ms": "1500"}, name="limited"
    )
    held = [socket.create_connection(("127.0.0.1", broker.port), timeout=10) for _ in range(5)]
    try:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as extra:
            assert extra.recv(1) == b""  # the sixth is closed at once
        # the five held ones are idle: each is closed once connections.max.idle.ms passes
        for sock in held:
            sock.settimeout(10)
            assert sock.recv(1) == b""
        with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as again:
            again.settimeout(10)
            assert again.recv(1) == b""  # served (not refused): closed only when idle
    finally:
        for sock in held:
            sock.close()
    assert "max.connections.per.ip reached" in broker.log_text()
