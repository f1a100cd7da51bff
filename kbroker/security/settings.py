"""Each listener's security settings, read once at start-up from the broker config under Kafka's names.

A setting is looked up as Kafka does: `listener.name.<listener>.<name>` first, then `<name>`; a SASL mechanism's
JAAS config as `listener.name.<listener>.<mechanism>.sasl.jaas.config`, then
`listener.name.<listener>.sasl.jaas.config`, then `sasl.jaas.config`. Anything that cannot work is a ConfigError
naming the setting, before any port is bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kbroker.common import ConfigError
from kbroker.config import SASL_MECHANISMS, BrokerConfig, Listener
from kbroker.security.jaas import JaasConfig, parse_jaas
from kbroker.security.principal import PrincipalMapper


class _Lookup(Protocol):
    """A listener's setting lookup (listener-prefixed first)."""

    def __call__(self, key: str, mechanism: str | None = None) -> str | None: ...


CLIENT_AUTH = ("required", "requested", "none")
STORE_TYPES = ("PEM", "PKCS12")
TLS_PROTOCOLS = ("TLSv1.2", "TLSv1.3")


@dataclass(frozen=True)
class TlsSettings:
    listener: str
    keystore_type: str
    keystore_location: str | None
    keystore_password: str | None
    key_password: str | None
    keystore_certificate_chain: str | None
    keystore_key: str | None
    truststore_type: str
    truststore_location: str | None
    truststore_password: str | None
    truststore_certificates: str | None
    client_auth: str
    enabled_protocols: tuple[str, ...]
    cipher_suites: tuple[str, ...]
    endpoint_identification: bool
    principal_mapper: PrincipalMapper

    @property
    def has_keystore(self) -> bool:
        return bool(self.keystore_location or self.keystore_certificate_chain)

    @property
    def has_truststore(self) -> bool:
        return bool(self.truststore_location or self.truststore_certificates)


@dataclass(frozen=True)
class OAuthSettings:
    jwks_endpoint_url: str
    jwks_refresh_ms: int
    expected_audience: tuple[str, ...]
    expected_issuer: str | None
    sub_claim_name: str
    scope_claim_name: str
    clock_skew_seconds: int


@dataclass(frozen=True)
class SaslSettings:
    listener: str
    mechanisms: tuple[str, ...]
    jaas: dict[str, JaasConfig] = field(default_factory=dict)
    """Per enabled mechanism, its JAAS config if one is given."""
    max_receive_size: int = 524288
    reauth_ms: dict[str, int] = field(default_factory=dict)
    """connections.max.reauth.ms per mechanism (0: sessions never expire)."""
    oauth: OAuthSettings | None = None

    def plain_users(self) -> dict[str, str]:
        jaas = self.jaas.get("PLAIN")
        return jaas.users() if jaas is not None else {}


@dataclass(frozen=True)
class ListenerSecurity:
    listener: Listener
    tls: TlsSettings | None
    sasl: SaslSettings | None
    max_connections: int


def listener_security(config: BrokerConfig, listener: Listener) -> ListenerSecurity:
    name = listener.name

    def value(key: str, mechanism: str | None = None) -> str | None:
        return config.listener_value(name, key, mechanism)

    tls = _tls_settings(name, value) if listener.uses_tls else None
    sasl = _sasl_settings(name, value) if listener.uses_sasl else None
    max_connections = int(value("max.connections") or 2**31 - 1)
    return ListenerSecurity(listener, tls, sasl, max_connections)


def _items(text: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (text or "").split(",") if v.strip())


def _tls_settings(name: str, value: _Lookup) -> TlsSettings:
    if not (value("ssl.keystore.location") or value("ssl.keystore.certificate.chain")):
        raise ConfigError(
            f"listener {name} uses TLS but has no key store (ssl.keystore.location, or "
            "ssl.keystore.certificate.chain and ssl.keystore.key)"
        )

    def store_type(key: str) -> str:
        kind = (value(key) or "JKS").upper()
        location = value(key.replace(".type", ".location"))
        if location and kind not in STORE_TYPES:
            raise ConfigError(
                f"{key}={kind} on listener {name}: kbroker reads PEM and PKCS12 stores, not {kind}"
            )
        return kind

    client_auth = (value("ssl.client.auth") or "none").strip().lower()
    if client_auth not in CLIENT_AUTH:
        raise ConfigError(
            f"ssl.client.auth={client_auth} on listener {name}: one of {', '.join(CLIENT_AUTH)}"
        )
    protocols = _items(value("ssl.enabled.protocols")) or TLS_PROTOCOLS
    for protocol in protocols:
        if protocol not in TLS_PROTOCOLS:
            raise ConfigError(
                f"ssl.enabled.protocols on listener {name}: {protocol} (only TLSv1.2 and TLSv1.3)"
            )
    settings = TlsSettings(
        listener=name,
        keystore_type=store_type("ssl.keystore.type"),
        keystore_location=value("ssl.keystore.location"),
        keystore_password=value("ssl.keystore.password"),
        key_password=value("ssl.key.password"),
        keystore_certificate_chain=value("ssl.keystore.certificate.chain"),
        keystore_key=value("ssl.keystore.key"),
        truststore_type=store_type("ssl.truststore.type"),
        truststore_location=value("ssl.truststore.location"),
        truststore_password=value("ssl.truststore.password"),
        truststore_certificates=value("ssl.truststore.certificates"),
        client_auth=client_auth,
        enabled_protocols=protocols,
        cipher_suites=_items(value("ssl.cipher.suites")),
        endpoint_identification=(value("ssl.endpoint.identification.algorithm") or "").strip().lower()
        == "https",
        principal_mapper=PrincipalMapper.parse(value("ssl.principal.mapping.rules") or "DEFAULT"),
    )
    if settings.keystore_certificate_chain and not settings.keystore_key:
        raise ConfigError(f"listener {name}: ssl.keystore.certificate.chain needs ssl.keystore.key")
    if settings.keystore_certificate_chain and settings.keystore_type != "PEM":
        raise ConfigError(f"listener {name}: inline certificates need ssl.keystore.type=PEM")
    return settings


def _sasl_settings(name: str, value: _Lookup) -> SaslSettings:
    mechanisms = tuple(m.upper() for m in _items(value("sasl.enabled.mechanisms")))
    if not mechanisms:
        raise ConfigError(f"listener {name} uses SASL but sasl.enabled.mechanisms is empty")
    for mechanism in mechanisms:
        if mechanism not in SASL_MECHANISMS:
            raise ConfigError(
                f"sasl.enabled.mechanisms on listener {name}: {mechanism} is not supported "
                f"(kbroker serves {', '.join(SASL_MECHANISMS)}; GSSAPI/Kerberos is not)"
            )
    jaas: dict[str, JaasConfig] = {}
    for mechanism in mechanisms:
        text = value("sasl.jaas.config", mechanism)
        if text:
            jaas[mechanism] = parse_jaas(
                text, f"listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config"
            )
    if "PLAIN" in mechanisms and not jaas.get("PLAIN", JaasConfig("", "")).users():
        raise ConfigError(
            f"listener {name} enables PLAIN but its sasl.jaas.config (listener.name.{name.lower()}.plain."
            'sasl.jaas.config) names no user_NAME="password"'
        )
    oauth = None
    if "OAUTHBEARER" in mechanisms:
        url = value("sasl.oauthbearer.jwks.endpoint.url", "OAUTHBEARER")
        if not url:
            raise ConfigError(
                f"listener {name} enables OAUTHBEARER but sasl.oauthbearer.jwks.endpoint.url is not set "
                "(kbroker validates signed JWTs only; unsecured tokens are refused)"
            )
        oauth = OAuthSettings(
            jwks_endpoint_url=url,
            jwks_refresh_ms=int(value("sasl.oauthbearer.jwks.endpoint.refresh.ms", "OAUTHBEARER") or 3600000),
            expected_audience=_items(value("sasl.oauthbearer.expected.audience", "OAUTHBEARER")),
            expected_issuer=value("sasl.oauthbearer.expected.issuer", "OAUTHBEARER") or None,
            sub_claim_name=value("sasl.oauthbearer.sub.claim.name", "OAUTHBEARER") or "sub",
            scope_claim_name=value("sasl.oauthbearer.scope.claim.name", "OAUTHBEARER") or "scope",
            clock_skew_seconds=int(value("sasl.oauthbearer.clock.skew.seconds", "OAUTHBEARER") or 30),
        )
    return SaslSettings(
        listener=name,
        mechanisms=mechanisms,
        jaas=jaas,
        max_receive_size=int(value("sasl.server.max.receive.size") or 524288),
        reauth_ms={m: int(value("connections.max.reauth.ms", m) or 0) for m in mechanisms},
        oauth=oauth,
    )
