"""TLS for the SSL and SASL_SSL listeners (and for followers reaching an SSL inter-broker listener): Python's `ssl`
contexts built from Kafka's key store and trust store settings, TLS 1.2 and 1.3 only.

Stores are PEM (a file with the private key and its certificate chain, or inline `ssl.keystore.certificate.chain` and
`ssl.keystore.key`; trusted certificates in a file or inline) or PKCS12 (read with `cryptography`). A listener's
context is rebuilt when one of its files changes (checked at most once a second, when a connection arrives), so a
renewed certificate is used without a restart; a change that cannot be loaded is logged and the old context kept.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from kbroker.common import ConfigError
from kbroker.security.principal import ANONYMOUS, USER_TYPE, KafkaPrincipal
from kbroker.security.settings import TlsSettings

log = logging.getLogger(__name__)

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
RELOAD_CHECK_INTERVAL_S = 1.0


@contextmanager
def _private_file(data: bytes) -> Iterator[str]:
    """Key material in a file only this process can read, for the moment `ssl` needs a path; removed at once."""
    fd, path = tempfile.mkstemp(prefix="kbroker-tls-", suffix=".pem")
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.close(fd)
        yield path
    finally:
        os.unlink(path)


def _read(path: str, setting: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{setting}={path}: {exc.strerror or exc}") from None


def _pkcs12(data: bytes, password: str | None, setting: str) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as exc:
        raise ConfigError(f"{setting}: cannot read the PKCS12 store ({exc})") from None


def _load_keystore(context: ssl.SSLContext, tls: TlsSettings) -> None:
    where = f"listener {tls.listener}"
    try:
        if tls.keystore_certificate_chain:
            chain = tls.keystore_certificate_chain.encode()
            key = (tls.keystore_key or "").encode()
            with _private_file(key + b"\n" + chain) as path:
                context.load_cert_chain(path, password=tls.key_password)
        elif tls.keystore_type == "PKCS12":
            assert tls.keystore_location is not None
            store = _pkcs12(_read(tls.keystore_location, "ssl.keystore.location"), tls.keystore_password,
                            f"ssl.keystore.location={tls.keystore_location}")  # fmt: skip
            if store.key is None or store.cert is None:
                raise ConfigError(
                    f"ssl.keystore.location={tls.keystore_location} holds no key and certificate"
                )
            pem = store.key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ) + b"".join(c.certificate.public_bytes(serialization.Encoding.PEM)
                         for c in [store.cert, *store.additional_certs])  # fmt: skip
            with _private_file(pem) as path:
                context.load_cert_chain(path)
        else:
            assert tls.keystore_location is not None
            _read(tls.keystore_location, "ssl.keystore.location")
            context.load_cert_chain(tls.keystore_location, password=tls.key_password)
    except ssl.SSLError as exc:
        raise ConfigError(f"{where}: cannot load the key store: {exc}") from None


def _load_truststore(context: ssl.SSLContext, tls: TlsSettings, purpose: ssl.Purpose) -> None:
    try:
        if tls.truststore_certificates:
            context.load_verify_locations(cadata=tls.truststore_certificates)
        elif tls.truststore_location and tls.truststore_type == "PKCS12":
            store = _pkcs12(_read(tls.truststore_location, "ssl.truststore.location"), tls.truststore_password,
                            f"ssl.truststore.location={tls.truststore_location}")  # fmt: skip
            certs = [c.certificate for c in store.additional_certs] + (
                [store.cert.certificate] if store.cert else []
            )
            context.load_verify_locations(
                cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)
            )
        elif tls.truststore_location:
            _read(tls.truststore_location, "ssl.truststore.location")
            context.load_verify_locations(cafile=tls.truststore_location)
        else:
            context.load_default_certs(purpose)
    except ssl.SSLError as exc:
        raise ConfigError(f"listener {tls.listener}: cannot load the trust store: {exc}") from None


def _restrict(context: ssl.SSLContext, tls: TlsSettings) -> None:
    versions = sorted(_VERSIONS[p] for p in tls.enabled_protocols)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    if tls.cipher_suites:
        try:
            context.set_ciphers(":".join(tls.cipher_suites))
        except ssl.SSLError as exc:
            raise ConfigError(f"ssl.cipher.suites on listener {tls.listener}: {exc}") from None


def server_context(tls: TlsSettings) -> ssl.SSLContext:
    """The context of a TLS listener (ConfigError if its stores cannot be read)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _restrict(context, tls)
    _load_keystore(context, tls)
    context.verify_mode = {
        "required": ssl.CERT_REQUIRED,
        "requested": ssl.CERT_OPTIONAL,
        "none": ssl.CERT_NONE,
    }[tls.client_auth]
    if tls.client_auth != "none":
        _load_truststore(context, tls, ssl.Purpose.CLIENT_AUTH)
    return context


def client_context(tls: TlsSettings) -> ssl.SSLContext:
    """A follower's context towards a leader's TLS listener: the leader's certificate checked against the trust
    store (and its host name, with ssl.endpoint.identification.algorithm=https); our key store offered as the
    client certificate when there is one."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = tls.endpoint_identification
    _restrict(context, tls)
    _load_truststore(context, tls, ssl.Purpose.SERVER_AUTH)
    if tls.has_keystore:
        _load_keystore(context, tls)
    return context


class ReloadingContext:
    """A listener's server context, rebuilt when its key store or trust store file changes."""

    def __init__(self, tls: TlsSettings) -> None:
        self.tls = tls
        self._files = [p for p in (tls.keystore_location, tls.truststore_location) if p]
        self._context = server_context(tls)
        self._stamp = self._stat()
        self._checked = time.monotonic()

    def _stat(self) -> tuple[tuple[int, int, int], ...]:
        out = []
        for path in self._files:
            try:
                st = os.stat(path)
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append((0, 0, 0))
        return tuple(out)

    def context(self) -> ssl.SSLContext:
        now = time.monotonic()
        if now - self._checked >= RELOAD_CHECK_INTERVAL_S:
            self._checked = now
            stamp = self._stat()
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    self._context = server_context(self.tls)
                    log.info("listener %s: reloaded its TLS key store and trust store", self.tls.listener)
                except ConfigError as exc:
                    log.error("listener %s: keeping the previous TLS context: %s", self.tls.listener, exc)
        return self._context


def principal_of_certificate(der: bytes | None, tls: TlsSettings) -> KafkaPrincipal:
    """The principal of a client certificate (its subject DN in RFC 2253 form, as Java prints it, through
    ssl.principal.mapping.rules); ANONYMOUS without one. ValueError when no mapping rule applies."""
    if not der:
        return ANONYMOUS
    subject = x509.load_der_x509_certificate(der).subject.rfc4514_string()
    return KafkaPrincipal(USER_TYPE, tls.principal_mapper.name_of(subject))
