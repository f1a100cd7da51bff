"""What the security tests share: a test PKI made with `cryptography`, JWTs and a JWKS for OAUTHBEARER, and a kbroker
with every kind of listener.

`make_pki(dir)` writes a CA, the broker's certificate (for 127.0.0.1 and localhost, key and chain in one PEM file,
as `ssl.keystore.type=PEM` takes it), client certificates (CN=alice, CN=bob), an expired one and one signed by
another CA. `SecureBroker` is a BrokerProcess whose listeners are PLAINTEXT (the readiness probe) plus SSL (client
certificates required), SASL_SSL (SCRAM-SHA-256, SCRAM-SHA-512, PLAIN, OAUTHBEARER) and SASL_PLAINTEXT (PLAIN,
SCRAM-SHA-512), on free loopback ports.
"""

from __future__ import annotations

import datetime
import json
import ssl
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import jwt
import scramp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from protocol.errors import ErrorCode
from protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from tests.broker_process import BrokerProcess, free_port
from tests.test_groups_support import Wire

PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" '
    + " ".join(f'user_{user}="{password}"' for user, password in PASSWORDS.items())
    + ";"
)
SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="admin" password="admin-secret";'
)
OAUTH_AUDIENCE = "kbroker-test"
OAUTH_ISSUER = "https://issuer.kbroker.test"


def _name(cn: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kbroker tests"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "security"),
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
        ]
    )


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Authority:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, cn: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(cn))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                    encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )  # fmt: skip
        return cls(key, cert)

    def issue(
        self, cn: str, *, server: bool = False, expired: bool = False
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        start, end = (
            (now - datetime.timedelta(days=10), now - datetime.timedelta(days=1))
            if expired
            else (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30))
        )
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
        )
        if server:
            import ipaddress

            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        return key, builder.sign(self.key, hashes.SHA256())


@dataclass
class Pki:
    dir: Path
    ca: Path
    """The CA certificate (the trust store of brokers and clients)."""
    server: Path
    """The broker's key and certificate chain in one PEM file."""
    clients: dict[str, tuple[Path, Path]] = field(default_factory=dict)
    """name -> (certificate file, key file): alice, bob, expired, untrusted."""
    authority: Authority | None = None

    def client_pem(self, name: str) -> Path:
        """Key and certificate of a client in one PEM file (what kafka-python's ssl_certfile and Java's PEM key
        store take)."""
        return self.dir / f"client-{name}.pem"

    def renew_server(self, cn: str = "broker-renewed") -> x509.Certificate:
        """A new broker certificate in place of the old one (same file), to test reloading."""
        assert self.authority is not None
        key, cert = self.authority.issue(cn, server=True)
        tmp = self.server.with_suffix(".tmp")
        tmp.write_bytes(_pem_key(key) + _pem_cert(cert) + _pem_cert(self.authority.cert))
        tmp.replace(self.server)
        return cert


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca = Authority.create("kbroker test CA")
    other = Authority.create("some other CA")
    pki = Pki(directory, directory / "ca.pem", directory / "server.pem", authority=ca)
    pki.ca.write_bytes(_pem_cert(ca.cert))
    key, cert = ca.issue("broker", server=True)
    pki.server.write_bytes(_pem_key(key) + _pem_cert(cert) + _pem_cert(ca.cert))
    for name, (authority, expired) in {
        "alice": (ca, False),
        "bob": (ca, False),
        "expired": (ca, True),
        "untrusted": (other, False),
    }.items():
        key, cert = authority.issue(name, expired=expired)
        cert_path, key_path = directory / f"client-{name}.crt", directory / f"client-{name}.key"
        cert_path.write_bytes(_pem_cert(cert) + _pem_cert(authority.cert))
        key_path.write_bytes(_pem_key(key))
        (directory / f"client-{name}.pem").write_bytes(
            _pem_key(key) + _pem_cert(cert) + _pem_cert(authority.cert)
        )
        pki.clients[name] = (cert_path, key_path)
    return pki


@dataclass
class OAuthIssuer:
    """An RSA key, its JWKS in a file (sasl.oauthbearer.jwks.endpoint.url=file://…), and signed tokens."""

    key: rsa.RSAPrivateKey
    kid: str
    jwks: Path

    @classmethod
    def create(cls, directory: Path) -> OAuthIssuer:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        kid = uuid.uuid4().hex[:8]
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        jwk.update({"kid": kid, "use": "sig", "alg": "RS256"})
        path = directory / "jwks.json"
        path.write_text(json.dumps({"keys": [jwk]}))
        return cls(key, kid, path)

    @property
    def url(self) -> str:
        return self.jwks.as_uri()

    def token(
        self,
        subject: str,
        *,
        lifetime_s: int = 3600,
        audience: str = OAUTH_AUDIENCE,
        issuer: str = OAUTH_ISSUER,
        key: rsa.RSAPrivateKey | None = None,
    ) -> str:
        now = int(time.time())
        claims = {
            "sub": subject,
            "iat": now,
            "exp": now + lifetime_s,
            "aud": audience,
            "iss": issuer,
            "scope": "kafka",
        }
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": self.kid})


LISTENER_NAMES = ("SSL", "SASL_SSL", "SASL_PLAINTEXT")


def security_overrides(pki: Pki, issuer: OAuthIssuer) -> dict[str, str]:
    """Kafka's settings for the three secured listeners (the exact lines docs/security.md shows)."""
    return {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
        "listener.name.ssl.ssl.client.auth": "required",
        "listener.name.ssl.ssl.principal.mapping.rules": "RULE:^CN=([^,]*),.*$/$1/L,DEFAULT",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN,OAUTHBEARER",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": issuer.url,
        "listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.audience": OAUTH_AUDIENCE,
        "listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.issuer": OAUTH_ISSUER,
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "connection.failed.authentication.delay.ms": "50",
    }


def add_scram_args() -> list[str]:
    args = []
    for user, password in PASSWORDS.items():
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            args += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
    return args


class SecureBroker(BrokerProcess):
    """A kbroker with PLAINTEXT, SSL, SASL_SSL and SASL_PLAINTEXT listeners; `ports` by listener name."""

    def __init__(self, data_dir: Path, pki: Pki, issuer: OAuthIssuer, *, overrides: dict[str, str] | None = None,
                 log_path: Path | None = None) -> None:  # fmt: skip
        super().__init__(data_dir, overrides={**security_overrides(pki, issuer), **(overrides or {})},
                         log_path=log_path)  # fmt: skip
        self.pki = pki
        self.issuer = issuer
        self.ports = {name: free_port(self.host) for name in LISTENER_NAMES}
        self.extra_args = add_scram_args()

    def command(self) -> list[str]:
        command = super().command()
        index = command.index("--listeners") + 1
        command[index] += "".join(f",{name}://{self.host}:{port}" for name, port in self.ports.items())
        return command

    def bootstrap_of(self, listener: str) -> str:
        return f"{self.host}:{self.ports[listener]}"


def tls_client_context(pki: Pki, client: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    if client is not None:
        context.load_cert_chain(str(pki.client_pem(client)))
    return context


def secure_wire(bootstrap: str, tls: ssl.SSLContext | None = None, client_id: str = "security-wire") -> Wire:
    """A raw client (tests/test_groups_support.Wire) over TLS when `tls` is given."""
    wire = Wire(bootstrap, client_id=client_id)
    if tls is not None:
        wire.sock = tls.wrap_socket(wire.sock, server_hostname=bootstrap.rpartition(":")[0])
    return wire


class SaslFailed(Exception):
    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(f"{ErrorCode(code).name}: {message}")
        self.code = code
        self.message = message


def sasl_login(wire: Wire, mechanism: str, user: str, password: str, *, version: int = 2) -> int:
    """Log in on a raw connection (SaslHandshake v1 + SaslAuthenticate); the session lifetime the broker gave.
    Raises SaslFailed with the broker's error."""
    handshake = wire.call(SaslHandshakeRequest(mechanism=mechanism), 1)
    if handshake.error_code:
        raise SaslFailed(handshake.error_code, f"handshake; enabled: {handshake.mechanisms}")
    if mechanism == "PLAIN":
        tokens = [f"\x00{user}\x00{password}".encode()]
        client = None
    elif mechanism == "OAUTHBEARER":
        tokens = [f"n,,\x01auth=Bearer {password}\x01\x01".encode()]
        client = None
    else:
        client = scramp.ScramClient([mechanism], user, password)
        tokens = [client.get_client_first().encode()]
    lifetime = 0
    while tokens:
        answer = wire.call(SaslAuthenticateRequest(auth_bytes=tokens.pop()), version)
        if answer.error_code:
            raise SaslFailed(answer.error_code, answer.error_message)
        lifetime = answer.session_lifetime_ms
        if client is not None and client.stage is not None and client.stage.name == "get_client_first":
            client.set_server_first(bytes(answer.auth_bytes).decode())
            tokens.append(client.get_client_final().encode())
        elif client is not None:
            client.set_server_final(bytes(answer.auth_bytes).decode())
    return lifetime
