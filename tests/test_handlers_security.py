"""Tables of the security APIs' handlers, called in process (tests/inprocess.py) on a broker with a SASL_PLAINTEXT
listener: SaslHandshake and SaslAuthenticate. Each row is a sequence of requests on one connection's session and
what the last one answers. Through real sockets and stock clients: tests/test_security_auth.py and compat/."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.config import Listener
from kbroker.security.session import ConnectionSession
from protocol.errors import ErrorCode as E
from protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from protocol.messages.sasl_handshake_response import SaslHandshakeResponse
from tests.handler_tables import wire_call
from tests.inprocess import running_broker

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_alice="alice-secret" user_bob="bob-secret";'
)
SECURE = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    "listener.name.sasl_plaintext.connections.max.reauth.ms": "60000",
    "connection.failed.authentication.delay.ms": "0",
}
SASL_LISTENER = Listener("SASL_PLAINTEXT", "127.0.0.1", 0, "SASL_PLAINTEXT")
PLAINTEXT_LISTENER = Listener("PLAINTEXT", "127.0.0.1", 0, "PLAINTEXT")


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with running_broker(tmp_path / "data", SECURE) as b:
        yield b


def handshake(mechanism: str) -> SaslHandshakeRequest:
    return SaslHandshakeRequest(mechanism=mechanism)


def plain(user: str, password: str) -> SaslAuthenticateRequest:
    return SaslAuthenticateRequest(auth_bytes=f"\x00{user}\x00{password}".encode())


def answer(response: SaslHandshakeResponse | SaslAuthenticateResponse) -> dict[str, Any]:
    if isinstance(response, SaslHandshakeResponse):
        return {"error": response.error_code, "mechanisms": response.mechanisms}
    return {
        "error": response.error_code,
        "message": response.error_message,
        "lifetime": response.session_lifetime_ms,
    }


async def run_rows(
    broker: Broker, listener: Listener, steps: Sequence[tuple[Any, int]]
) -> tuple[dict[str, Any], ConnectionSession]:
    session = ConnectionSession.for_listener(listener, 1, "127.0.0.1:5555")
    seen: dict[str, Any] = {}
    for request, version in steps:
        seen = answer(await wire_call(broker, request, version, session))
    return seen, session


SASL_HANDSHAKE_CASES = [
    pytest.param(
        SASL_LISTENER, [(handshake("PLAIN"), 1)], {"error": E.NONE, "mechanisms": ["PLAIN", "SCRAM-SHA-512"]},
        "", id="enabled-mechanism",
    ),
    pytest.param(
        SASL_LISTENER, [(handshake("GSSAPI"), 1)],
        {"error": E.UNSUPPORTED_SASL_MECHANISM, "mechanisms": ["PLAIN", "SCRAM-SHA-512"]},
        "unsupported SASL mechanism 'GSSAPI'", id="unsupported-mechanism-closes",
    ),
    pytest.param(
        PLAINTEXT_LISTENER, [(handshake("PLAIN"), 1)], {"error": E.ILLEGAL_SASL_STATE, "mechanisms": []}, "",
        id="listener-without-sasl",
    ),
    pytest.param(
        SASL_LISTENER,
        [(handshake("PLAIN"), 1), (plain("alice", "alice-secret"), 2), (handshake("SCRAM-SHA-512"), 1)],
        {"error": E.UNSUPPORTED_SASL_MECHANISM, "mechanisms": ["PLAIN"]},
        "re-authentication must use the mechanism of the first login", id="reauthentication-with-another-mechanism",
    ),
]  # fmt: skip


@pytest.mark.trio
@pytest.mark.parametrize(("listener", "steps", "expected", "closes"), SASL_HANDSHAKE_CASES)
async def test_sasl_handshake(
    broker: Broker, listener: Listener, steps: list[tuple[Any, int]], expected: dict[str, Any], closes: str
) -> None:
    seen, session = await run_rows(broker, listener, steps)
    assert seen == expected
    assert (session.close_reason or "") == closes


SASL_AUTHENTICATE_CASES = [
    pytest.param(
        [(handshake("PLAIN"), 1), (plain("alice", "alice-secret"), 2)],
        {"error": E.NONE, "message": None, "lifetime": 60000}, "User:alice", id="v2-login-with-session-lifetime",
    ),
    pytest.param(
        [(handshake("PLAIN"), 1), (plain("alice", "alice-secret"), 0)],
        {"error": E.NONE, "message": None, "lifetime": 0}, "User:alice", id="v0-has-no-lifetime",
    ),
    pytest.param(
        [(handshake("PLAIN"), 1), (plain("alice", "wrong"), 2)],
        {"error": E.SASL_AUTHENTICATION_FAILED, "message": "Authentication failed: Invalid username or password",
         "lifetime": 0},
        "User:ANONYMOUS", id="wrong-password",
    ),
    pytest.param(
        [(plain("alice", "alice-secret"), 2)],
        {"error": E.ILLEGAL_SASL_STATE, "message": "Unexpected SaslAuthenticate request without a SaslHandshake",
         "lifetime": 0},
        "User:ANONYMOUS", id="without-handshake",
    ),
    pytest.param(
        [(handshake("PLAIN"), 1), (SaslAuthenticateRequest(auth_bytes=b"alice"), 2)],
        {"error": E.SASL_AUTHENTICATION_FAILED,
         "message": "Invalid SASL/PLAIN response: expected 3 tokens", "lifetime": 0},
        "User:ANONYMOUS", id="malformed-plain",
    ),
    pytest.param(
        [(handshake("PLAIN"), 1), (plain("alice", "alice-secret"), 2), (handshake("PLAIN"), 1),
         (plain("bob", "bob-secret"), 2)],
        {"error": E.SASL_AUTHENTICATION_FAILED, "message": "Cannot change principals during re-authentication",
         "lifetime": 0},
        "User:alice", id="reauthentication-as-someone-else",
    ),
]  # fmt: skip


@pytest.mark.trio
@pytest.mark.parametrize(("steps", "expected", "principal"), SASL_AUTHENTICATE_CASES)
async def test_sasl_authenticate(
    broker: Broker, steps: list[tuple[Any, int]], expected: dict[str, Any], principal: str
) -> None:
    seen, session = await run_rows(broker, SASL_LISTENER, steps)
    assert seen == expected
    assert str(session.principal) == principal
