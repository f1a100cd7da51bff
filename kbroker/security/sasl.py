"""The server side of SASL: SaslHandshake and SaslAuthenticate (KIP-152) for PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
OAUTHBEARER, with re-authentication (KIP-368).

- PLAIN checks the password against the listener's JAAS users (`user_NAME="password"`), in constant time.
- SCRAM runs scramp's server against the credentials of the metadata image (stored hashed; RFC 5802). Delegation
  token logins (`tokenauth=true`) are refused: kbroker has no delegation tokens.
- OAUTHBEARER validates a signed JWT (kbroker/security/oauth.py).

A failed login is answered SASL_AUTHENTICATION_FAILED after `connection.failed.authentication.delay.ms` and the
connection is closed; the log says who failed from where with which mechanism, never a password or a token.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import scramp
import trio

from kbroker.clock import Clock
from kbroker.security.oauth import InvalidToken, JwtValidator, parse_client_response
from kbroker.security.principal import USER_TYPE, KafkaPrincipal
from kbroker.security.scram import ScramCredential
from kbroker.security.session import ConnectionSession, MechanismServer
from kbroker.security.settings import SaslSettings
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

ScramLookup = Callable[[str, str], ScramCredential | None]
"""(user, mechanism) -> the stored credential, if any."""


class AuthenticationFailed(Exception):
    """A login refused: `str(exc)` is what the client is told; `detail` is logged (never a secret)."""

    def __init__(self, message: str, detail: str = "", user: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message
        self.user = user


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.complete = False
        self.principal_name: str | None = None
        self.expires_at_ms: int | None = None

    async def evaluate(self, token: bytes) -> bytes:
        await trio.lowlevel.checkpoint()
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise AuthenticationFailed(
                "Invalid SASL/PLAIN response: expected 3 tokens", "malformed PLAIN response"
            )
        authzid, user_bytes, password = parts
        user = user_bytes.decode(errors="replace")
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified", "no username")
        if authzid and authzid != user_bytes:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username",
                "authorization id differs from the username",
                user,
            )
        expected = self._users.get(user)
        # Compared in constant time, and for unknown users too, so the answer's timing tells nothing.
        ok = hmac.compare_digest(password, (expected or "\x00unknown").encode())
        if expected is None or not ok:
            raise AuthenticationFailed(
                "Authentication failed: Invalid username or password",
                "unknown user" if expected is None else "wrong password",
                user,
            )
        self.principal_name = user
        self.complete = True
        return b""


class ScramServer:
    def __init__(self, mechanism: str, lookup: ScramLookup) -> None:
        self.mechanism = mechanism
        self.complete = False
        self.principal_name: str | None = None
        self.expires_at_ms: int | None = None
        self._user: str | None = None
        self._lookup = lookup
        self._server = scramp.ScramMechanism(mechanism).make_server(self._auth_info)
        self._stage = 0

    def _auth_info(self, user: str) -> tuple[bytes, bytes, bytes, int] | None:
        self._user = user
        credential = self._lookup(user, self.mechanism)
        if credential is None:
            return None
        return credential.salt, credential.stored_key, credential.server_key, credential.iterations

    def _failed(self, detail: str) -> AuthenticationFailed:
        return AuthenticationFailed(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism "
            + self.mechanism,
            detail,
            self._user,
        )

    def _accept_prefixed_nonce(self, client_final: str) -> None:
        """Kafka checks only that the client's final nonce ends with the server's; librdkafka up to 2.0 (kcat on
        Debian) sends its own nonce twice. Such a nonce is taken as the one to expect, so the proof (which the
        client computed over what it sent) is still checked by scramp."""
        sent = next((a[2:] for a in client_final.split(",") if a.startswith("r=")), None)
        expected = str(self._server.nonce)
        if sent is not None and sent != expected and sent.endswith(expected):
            self._server.nonce = scramp.core.Nonce(sent)

    async def evaluate(self, token: bytes) -> bytes:
        await trio.lowlevel.checkpoint()
        try:
            text = token.decode()
        except UnicodeDecodeError:
            raise self._failed("the SCRAM message is not UTF-8") from None
        try:
            if self._stage == 0:
                if "tokenauth=true" in text.split(","):
                    raise self._failed("delegation token login (kbroker has no delegation tokens)")
                self._server.set_client_first(text)
                self._stage = 1
                return str(self._server.get_server_first()).encode()
            if self._stage == 1:
                self._accept_prefixed_nonce(text)
                self._server.set_client_final(text)
                final = str(self._server.get_server_final())
                self._stage = 2
                self.principal_name = self._user
                self.complete = True
                return final.encode()
        except scramp.ScramException as exc:
            raise self._failed(str(exc)) from None
        raise self._failed("unexpected SCRAM message after the exchange ended")


class OAuthBearerServer:
    mechanism = "OAUTHBEARER"

    def __init__(self, validator: JwtValidator) -> None:
        self._validator = validator
        self.complete = False
        self.principal_name: str | None = None
        self.expires_at_ms: int | None = None

    async def evaluate(self, token: bytes) -> bytes:
        try:
            jwt_text, _extensions = parse_client_response(token)
            valid = await self._validator.validate(jwt_text)
        except InvalidToken as exc:
            raise AuthenticationFailed(f"Authentication failed: {exc}", str(exc)) from None
        self.principal_name = valid.principal_name
        self.expires_at_ms = valid.expires_at_ms
        self.complete = True
        return b""


@dataclass(frozen=True, slots=True)
class HandshakeResult:
    error_code: ErrorCode
    mechanisms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AuthenticateResult:
    error_code: ErrorCode
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int


class SaslAuthenticator:
    """Every SASL listener's mechanisms, and the two steps of a login on a connection's session."""

    def __init__(
        self,
        listeners: Mapping[str, SaslSettings],
        scram_lookup: ScramLookup,
        clock: Clock,
        failed_authentication_delay_ms: int,
    ) -> None:
        self._listeners = dict(listeners)
        self._scram_lookup = scram_lookup
        self._clock = clock
        self._failed_delay_s = failed_authentication_delay_ms / 1000
        self._validators = {
            name: JwtValidator(s.oauth) for name, s in self._listeners.items() if s.oauth is not None
        }

    def max_receive_size(self, listener: str) -> int:
        settings = self._listeners.get(listener)
        return settings.max_receive_size if settings is not None else 524288

    def _mechanism_server(self, listener: str, mechanism: str) -> MechanismServer:
        settings = self._listeners[listener]
        if mechanism == "PLAIN":
            return PlainServer(settings.plain_users())
        if mechanism == "OAUTHBEARER":
            return OAuthBearerServer(self._validators[listener])
        return ScramServer(mechanism, self._scram_lookup)

    def handshake(self, session: ConnectionSession, mechanism: str) -> HandshakeResult:
        settings = self._listeners.get(session.listener.name)
        if settings is None or not session.needs_sasl:
            return HandshakeResult(ErrorCode.ILLEGAL_SASL_STATE, ())
        if session.authenticated and session.expires_at_ms is None:
            # Re-authentication only exists for sessions that end (KIP-368).
            return HandshakeResult(ErrorCode.ILLEGAL_SASL_STATE, settings.mechanisms)
        if mechanism not in settings.mechanisms:
            session.close_reason = f"unsupported SASL mechanism {mechanism!r}"
            return HandshakeResult(ErrorCode.UNSUPPORTED_SASL_MECHANISM, settings.mechanisms)
        if session.authenticated and mechanism != session.mechanism:
            session.close_reason = "re-authentication must use the mechanism of the first login"
            return HandshakeResult(ErrorCode.UNSUPPORTED_SASL_MECHANISM, (session.mechanism or "",))
        session.mechanism = mechanism
        session.login = self._mechanism_server(session.listener.name, mechanism)
        return HandshakeResult(ErrorCode.NONE, settings.mechanisms)

    async def authenticate(
        self, session: ConnectionSession, token: bytes, version: int
    ) -> AuthenticateResult:
        login = session.login
        if login is None:
            session.close_reason = "SaslAuthenticate without a SaslHandshake first"
            message = (
                "SaslAuthenticate request received after successful authentication"
                if session.authenticated
                else "Unexpected SaslAuthenticate request without a SaslHandshake"
            )
            return AuthenticateResult(ErrorCode.ILLEGAL_SASL_STATE, message, b"", 0)
        try:
            challenge = await login.evaluate(token)
            if login.complete:
                self._check_reauthentication(session, login)
        except AuthenticationFailed as exc:
            log.info(
                "failed authentication of %s from %s on listener %s with %s: %s",
                exc.user if exc.user is not None else "an unknown user",
                session.peer,
                session.listener.name,
                login.mechanism,
                exc.detail,
            )
            session.login = None
            session.close_reason = "authentication failed"
            await trio.sleep(self._failed_delay_s)
            return AuthenticateResult(ErrorCode.SASL_AUTHENTICATION_FAILED, str(exc), b"", 0)
        if not login.complete:
            return AuthenticateResult(ErrorCode.NONE, None, challenge, 0)
        assert login.principal_name is not None
        first = not session.authenticated
        session.principal = KafkaPrincipal(USER_TYPE, login.principal_name)
        session.authenticated = True
        session.login = None
        lifetime = self._session_lifetime_ms(session, login)
        session.expires_at_ms = self._clock.now_ms() + lifetime if lifetime else None
        log.debug(
            "%s %s from %s with %s",
            "authenticated" if first else "re-authenticated",
            session.principal,
            session.peer,
            login.mechanism,
        )
        return AuthenticateResult(ErrorCode.NONE, None, challenge, lifetime if version >= 1 else 0)

    def _check_reauthentication(self, session: ConnectionSession, login: MechanismServer) -> None:
        if session.authenticated and login.principal_name != session.principal.name:
            raise AuthenticationFailed(
                "Cannot change principals during re-authentication",
                f"re-authentication as {login.principal_name} on a session of {session.principal}",
                login.principal_name,
            )

    def _session_lifetime_ms(self, session: ConnectionSession, login: MechanismServer) -> int:
        """KIP-368: the smaller of connections.max.reauth.ms (if set) and the time left of the credential."""
        settings = self._listeners[session.listener.name]
        bounds = []
        reauth = settings.reauth_ms.get(login.mechanism, 0)
        if reauth > 0:
            bounds.append(reauth)
        if login.expires_at_ms is not None:
            bounds.append(max(1, login.expires_at_ms - self._clock.now_ms()))
        return min(bounds) if bounds else 0
