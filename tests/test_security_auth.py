"""TLS and SASL through real sockets: client certificates, SCRAM-SHA-256/512, PLAIN and OAUTHBEARER logins, what is
refused and how, re-authentication (KIP-368), certificate reloading. One broker with every kind of listener serves
the module (tests/security_support.py); the stock clients' matrix is compat/test_security_clients.py."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from protocol.errors import ErrorCode
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.metadata_request import MetadataRequest
from protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from tests.conftest import register_broker
from tests.security_support import (
    PASSWORDS,
    OAuthIssuer,
    Pki,
    SaslFailed,
    SecureBroker,
    make_pki,
    sasl_login,
    secure_wire,
    tls_client_context,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def issuer(pki: Pki) -> OAuthIssuer:
    return OAuthIssuer.create(pki.dir)


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory, pki: Pki, issuer: OAuthIssuer) -> Iterator[SecureBroker]:
    base = tmp_path_factory.mktemp("secure-broker")
    broker = SecureBroker(
        base / "data",
        pki,
        issuer,
        overrides={"listener.name.sasl_plaintext.connections.max.reauth.ms": "3000"},
        log_path=base / "broker.log",
    )
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(autouse=True)
def _log_on_failure(request: pytest.FixtureRequest, secure: SecureBroker) -> None:
    register_broker(request, secure)


def _metadata_ports(wire_metadata: object) -> list[int]:
    return [b.port for b in wire_metadata.brokers]  # type: ignore[attr-defined]


def test_each_listener_answers_metadata_with_its_own_addresses(secure: SecureBroker, pki: Pki) -> None:
    with secure_wire(secure.bootstrap) as wire:
        assert _metadata_ports(wire.call(MetadataRequest(topics=[]), 12)) == [secure.port]
    with secure_wire(secure.bootstrap_of("SSL"), tls_client_context(pki, "alice")) as wire:
        assert _metadata_ports(wire.call(MetadataRequest(topics=[]), 12)) == [secure.ports["SSL"]]
    for listener in ("SASL_SSL", "SASL_PLAINTEXT"):
        tls = tls_client_context(pki) if listener == "SASL_SSL" else None
        with secure_wire(secure.bootstrap_of(listener), tls) as wire:
            sasl_login(wire, "SCRAM-SHA-512", "alice", PASSWORDS["alice"])
            assert _metadata_ports(wire.call(MetadataRequest(topics=[]), 12)) == [secure.ports[listener]]


@pytest.mark.parametrize("client", ["untrusted", "expired", None])
def test_refused_client_certificates_get_nothing(secure: SecureBroker, pki: Pki, client: str | None) -> None:
    """Client certificates are required on the SSL listener: one from another CA, an expired one, or none at all
    ends in a failed handshake, and the broker serves nothing on that connection."""
    context = ssl.create_default_context(cafile=str(pki.ca))
    if client is not None:
        context.load_cert_chain(str(pki.client_pem(client)))
    with (
        pytest.raises((ssl.SSLError, ConnectionError, OSError)),
        secure_wire(secure.bootstrap_of("SSL"), context) as wire,
    ):
        wire.call(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    # alice, with a good certificate, is still served
    with secure_wire(secure.bootstrap_of("SSL"), tls_client_context(pki, "alice")) as wire:
        assert wire.call(MetadataRequest(topics=[]), 12).brokers


def test_a_client_that_does_not_trust_the_broker_fails_clearly(secure: SecureBroker, pki: Pki) -> None:
    context = ssl.create_default_context()  # the system's CAs: not ours
    with pytest.raises(ssl.SSLCertVerificationError):
        secure_wire(secure.bootstrap_of("SASL_SSL"), context)


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [
        ("SASL_SSL", "SCRAM-SHA-256"),
        ("SASL_SSL", "SCRAM-SHA-512"),
        ("SASL_SSL", "PLAIN"),
        ("SASL_PLAINTEXT", "SCRAM-SHA-512"),
        ("SASL_PLAINTEXT", "PLAIN"),
    ],
)
def test_logins(secure: SecureBroker, pki: Pki, listener: str, mechanism: str) -> None:
    tls = tls_client_context(pki) if listener == "SASL_SSL" else None
    with secure_wire(secure.bootstrap_of(listener), tls) as wire:
        sasl_login(wire, mechanism, "bob", PASSWORDS["bob"])
        assert wire.call(MetadataRequest(topics=[]), 12).brokers


def test_oauthbearer_login_with_a_signed_token(secure: SecureBroker, pki: Pki, issuer: OAuthIssuer) -> None:
    with secure_wire(secure.bootstrap_of("SASL_SSL"), tls_client_context(pki)) as wire:
        lifetime = sasl_login(wire, "OAUTHBEARER", "", issuer.token("carol", lifetime_s=600))
        # KIP-368: the token's expiry bounds the session
        assert 590_000 <= lifetime <= 600_000
        assert wire.call(MetadataRequest(topics=[]), 12).brokers


def _refused_login(
    secure: SecureBroker, pki: Pki, listener: str, mechanism: str, user: str, secret: str
) -> SaslFailed:
    tls = tls_client_context(pki) if listener == "SASL_SSL" else None
    with secure_wire(secure.bootstrap_of(listener), tls) as wire:
        with pytest.raises(SaslFailed) as failed:
            sasl_login(wire, mechanism, user, secret)
        # nothing is served after a failed login: the broker closed the connection
        with pytest.raises((ConnectionError, OSError)):
            wire.call(MetadataRequest(topics=[]), 12)
    return failed.value


@pytest.mark.parametrize(
    ("mechanism", "user", "password", "message"),
    [
        ("SCRAM-SHA-512", "alice", "wrong", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
        ("SCRAM-SHA-512", "mallory", "x", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
        ("SCRAM-SHA-256", "alice", "wrong", "invalid credentials with SASL mechanism SCRAM-SHA-256"),
        ("PLAIN", "alice", "wrong", "Invalid username or password"),
        ("PLAIN", "mallory", "x", "Invalid username or password"),
    ],
)
def test_wrong_passwords_and_unknown_users_fail_clearly(
    secure: SecureBroker, pki: Pki, mechanism: str, user: str, password: str, message: str
) -> None:
    failed = _refused_login(secure, pki, "SASL_SSL", mechanism, user, password)
    assert failed.code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert message in (failed.message or "")


def test_bad_tokens_fail_clearly(secure: SecureBroker, pki: Pki, issuer: OAuthIssuer, tmp_path: Path) -> None:
    other = OAuthIssuer.create(tmp_path)
    for token, message in [
        (issuer.token("carol", lifetime_s=-120), "expired"),
        (issuer.token("carol", audience="someone-else"), "audience"),
        (issuer.token("carol", issuer="https://evil.example"), "issuer"),
        (issuer.token("carol", key=other.key), "Signature verification failed"),
        ("not-a-jwt", "invalid token"),
    ]:
        failed = _refused_login(secure, pki, "SASL_SSL", "OAUTHBEARER", "", token)
        assert failed.code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert message.lower() in (failed.message or "").lower(), failed.message


def test_a_mechanism_the_listener_does_not_enable_is_refused_with_the_enabled_ones(
    secure: SecureBroker,
) -> None:
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        answer = wire.call(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1)
        assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-512"]
        with pytest.raises((ConnectionError, OSError)):
            wire.call(MetadataRequest(topics=[]), 12)


def test_before_the_login_only_api_versions_and_sasl_are_served(secure: SecureBroker) -> None:
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        versions = wire.call(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
        assert versions.error_code == ErrorCode.NONE
        with pytest.raises((ConnectionError, OSError)):
            wire.call(MetadataRequest(topics=[]), 12)
    # A frame larger than sasl.server.max.receive.size (512 KiB) before the login closes the connection at once,
    # before the broker reads (or buffers) it.
    with socket.create_connection(("127.0.0.1", secure.ports["SASL_PLAINTEXT"]), timeout=10) as sock:
        sock.sendall((10 * 1024 * 1024).to_bytes(4, "big") + b"\x00" * 1024)
        assert sock.recv(1) == b""


def test_reauthentication_before_the_session_ends(secure: SecureBroker) -> None:
    """connections.max.reauth.ms=3000 on SASL_PLAINTEXT: the login says so (v1+), a new login on the same
    connection renews the session, one as someone else is refused, and a request after the end closes it."""
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        assert sasl_login(wire, "PLAIN", "alice", PASSWORDS["alice"]) == 3000
        assert sasl_login(wire, "PLAIN", "alice", PASSWORDS["alice"]) == 3000
        assert wire.call(MetadataRequest(topics=[]), 12).brokers
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        sasl_login(wire, "PLAIN", "alice", PASSWORDS["alice"])
        with pytest.raises(SaslFailed, match="Cannot change principals"):
            sasl_login(wire, "PLAIN", "bob", PASSWORDS["bob"])
    with secure_wire(secure.bootstrap_of("SASL_PLAINTEXT")) as wire:
        sasl_login(wire, "SCRAM-SHA-512", "alice", PASSWORDS["alice"])
        deadline = time.monotonic() + 3.2
        while time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises((ConnectionError, OSError)):
            wire.call(MetadataRequest(topics=[]), 12)


def test_the_log_names_failures_without_secrets(secure: SecureBroker, pki: Pki) -> None:
    _refused_login(secure, pki, "SASL_SSL", "PLAIN", "alice", "s3cret-guess")
    # the broker's own lines (not the command line the harness logged, which holds --add-scram's passwords)
    log = "\n".join(line for line in secure.log_text().splitlines() if not line.startswith("=== "))
    assert "failed authentication of alice" in log
    assert "s3cret-guess" not in log
    for password in PASSWORDS.values():
        assert password not in log


def test_a_renewed_certificate_is_used_without_a_restart(secure: SecureBroker, pki: Pki) -> None:
    def served_subject() -> str:
        with (
            socket.create_connection(("127.0.0.1", secure.ports["SASL_SSL"]), timeout=10) as sock,
            tls_client_context(pki).wrap_socket(sock, server_hostname="127.0.0.1") as tls,
        ):
            cert = tls.getpeercert()
            assert cert is not None
            fields = {str(rdn[0][0]): str(rdn[0][1]) for rdn in cert["subject"]}
            return fields["commonName"]

    assert served_subject() == "broker"
    pki.renew_server("broker-renewed")
    deadline = time.monotonic() + 10
    while served_subject() != "broker-renewed":
        assert time.monotonic() < deadline, "the broker kept the old certificate"
        time.sleep(0.3)


def test_librdkafka_over_every_listener(secure: SecureBroker, pki: Pki) -> None:
    """A smoke check with a stock client; compat/test_security_clients.py runs every client."""
    alice_cert, alice_key = pki.clients["alice"]
    for listener, conf in [
        ("SSL", {"security.protocol": "SSL", "ssl.ca.location": str(pki.ca),
                 "ssl.certificate.location": str(alice_cert), "ssl.key.location": str(alice_key)}),
        ("SASL_SSL", {"security.protocol": "SASL_SSL", "ssl.ca.location": str(pki.ca),
                      "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret"}),
        ("SASL_PLAINTEXT", {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                            "sasl.username": "alice", "sasl.password": "alice-secret"}),
    ]:  # fmt: skip
        admin = AdminClient({"bootstrap.servers": secure.bootstrap_of(listener), **conf})
        metadata = admin.list_topics(timeout=20)
        assert [b.port for b in metadata.brokers.values()] == [secure.ports[listener]]
