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
from kbroker.security.principal import KafkaPrincipal
from kbroker.security.session import ConnectionSession
from protocol.errors import ErrorCode as E
from protocol.messages.alter_client_quotas_request import AlterClientQuotasRequest, OpData
from protocol.messages.alter_client_quotas_request import EntityData as QuotaEntity
from protocol.messages.alter_client_quotas_request import EntryData as QuotaEntry
from protocol.messages.alter_client_quotas_response import AlterClientQuotasResponse
from protocol.messages.alter_user_scram_credentials_request import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from protocol.messages.alter_user_scram_credentials_response import AlterUserScramCredentialsResponse
from protocol.messages.create_acls_request import AclCreation, CreateAclsRequest
from protocol.messages.create_acls_response import CreateAclsResponse
from protocol.messages.delete_acls_request import DeleteAclsFilter, DeleteAclsRequest
from protocol.messages.delete_acls_response import DeleteAclsResponse
from protocol.messages.describe_acls_request import DescribeAclsRequest
from protocol.messages.describe_acls_response import DescribeAclsResponse
from protocol.messages.describe_client_quotas_request import ComponentData, DescribeClientQuotasRequest
from protocol.messages.describe_client_quotas_response import DescribeClientQuotasResponse
from protocol.messages.describe_user_scram_credentials_request import (
    DescribeUserScramCredentialsRequest,
    UserName,
)
from protocol.messages.describe_user_scram_credentials_response import DescribeUserScramCredentialsResponse
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


# ---- the admin APIs: ACLs, SCRAM credentials, client quotas ----------------------------------------------------

AUTHORIZED = {**SECURE, "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:admin"}  # fmt: skip


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[Broker]:
    async with running_broker(tmp_path / "data", AUTHORIZED) as b:
        yield b


def as_user(user: str) -> ConnectionSession:
    session = ConnectionSession.for_listener(SASL_LISTENER, 1, "127.0.0.1:5555")
    session.principal = KafkaPrincipal("User", user)
    session.authenticated = True
    return session


def acl(name: str = "t", *, principal: str = "User:alice", op: int = 3, perm: int = 3, pattern: int = 3,
        rtype: int = 2) -> AclCreation:  # fmt: skip
    return AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=pattern, principal=principal,
                       host="*", operation=op, permission_type=perm)  # fmt: skip


def acl_filter(name: str | None = None, **kw: Any) -> dict[str, Any]:
    return {"resource_type_filter": 1, "resource_name_filter": name, "pattern_type_filter": 1,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1, **kw}  # fmt: skip


def codes(response: Any) -> Any:
    if isinstance(response, CreateAclsResponse):
        return [r.error_code for r in response.results]
    if isinstance(response, DescribeAclsResponse):
        return (response.error_code, [(r.resource_name, len(r.acls)) for r in response.resources])
    if isinstance(response, DeleteAclsResponse):
        return [(r.error_code, len(r.matching_acls)) for r in response.filter_results]
    if isinstance(response, AlterUserScramCredentialsResponse):
        return [(r.user, r.error_code) for r in response.results]
    if isinstance(response, DescribeUserScramCredentialsResponse):
        return (response.error_code, [(r.user, r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
                                      for r in response.results])  # fmt: skip
    if isinstance(response, AlterClientQuotasResponse):
        return [r.error_code for r in response.entries]
    if isinstance(response, DescribeClientQuotasResponse):
        entries = [
            ([(e.entity_type, e.entity_name) for e in x.entity], [(v.key, v.value) for v in x.values])
            for x in response.entries or []
        ]
        return (response.error_code, entries)
    raise AssertionError(type(response))


TWO_ACLS = CreateAclsRequest(creations=[acl("t"), acl("p", pattern=4, op=4)])
SALTED: dict[str, Any] = {"iterations": 4096, "salt": b"0123456789abcdef", "salted_password": b"x" * 32}

CREATE_ACLS_CASES = [
    pytest.param("admin", [], (TWO_ACLS, 3), [E.NONE, E.NONE], id="super-user-creates"),
    pytest.param("bob", [], (TWO_ACLS, 3), [E.CLUSTER_AUTHORIZATION_FAILED] * 2, id="needs-alter-on-cluster"),
    pytest.param(
        "admin",
        [],
        (
            CreateAclsRequest(
                creations=[acl(pattern=1), acl(op=1), acl(""), acl(principal="alice"), acl(rtype=1)]
            ),
            3,
        ),
        [E.INVALID_REQUEST] * 5,
        id="invalid-creations",
    ),
    pytest.param(
        "admin", [(TWO_ACLS, 3)], (TWO_ACLS, 2), [E.NONE, E.NONE], id="v2-existing-acls-are-not-doubled"
    ),
]
DESCRIBE_ACLS_CASES = [
    pytest.param("admin", [(TWO_ACLS, 3)], (DescribeAclsRequest(**acl_filter()), 3), (E.NONE, [("p", 1), ("t", 1)]),
                 id="all"),
    pytest.param("admin", [(TWO_ACLS, 3)], (DescribeAclsRequest(**acl_filter("pq", pattern_type_filter=2)), 1),
                 (E.NONE, [("p", 1)]), id="v1-match-a-prefixed-pattern"),
    pytest.param("bob", [], (DescribeAclsRequest(**acl_filter()), 3), (E.CLUSTER_AUTHORIZATION_FAILED, []),
                 id="needs-describe-on-cluster"),
    pytest.param("admin", [], (DescribeAclsRequest(**acl_filter(operation=0)), 3), (E.INVALID_REQUEST, []),
                 id="unknown-operation"),
]  # fmt: skip
DELETE_ACLS_CASES = [
    pytest.param("admin", [(TWO_ACLS, 3)], (DeleteAclsRequest(filters=[DeleteAclsFilter(**acl_filter("t"))]), 3),
                 [(E.NONE, 1)], id="by-name"),
    pytest.param("admin", [(TWO_ACLS, 3)],
                 (DeleteAclsRequest(filters=[DeleteAclsFilter(**acl_filter()),
                                             DeleteAclsFilter(**acl_filter(None, host_filter="h"))]), 2),
                 [(E.NONE, 2), (E.NONE, 0)], id="v2-all-and-none"),
    pytest.param("bob", [], (DeleteAclsRequest(filters=[DeleteAclsFilter(**acl_filter())]), 3),
                 [(E.CLUSTER_AUTHORIZATION_FAILED, 0)], id="needs-alter-on-cluster"),
]  # fmt: skip
ALTER_USER_SCRAM_CREDENTIALS_CASES = [
    pytest.param("admin", [], (AlterUserScramCredentialsRequest(upsertions=[
        ScramCredentialUpsertion(name="carol", mechanism=1, **SALTED)]), 0), [("carol", E.NONE)], id="upsert"),
    pytest.param("admin", [], (AlterUserScramCredentialsRequest(
        deletions=[ScramCredentialDeletion(name="carol", mechanism=2)],
        upsertions=[ScramCredentialUpsertion(name="dave", mechanism=1, **{**SALTED, "iterations": 100}),
                    ScramCredentialUpsertion(name="erin", mechanism=3, **SALTED),
                    ScramCredentialUpsertion(name="", mechanism=1, **SALTED)]), 0),
        [("carol", E.RESOURCE_NOT_FOUND), ("dave", E.UNACCEPTABLE_CREDENTIAL), ("erin", E.UNSUPPORTED_SASL_MECHANISM),
         ("", E.UNACCEPTABLE_CREDENTIAL)], id="refused"),
    pytest.param("admin", [], (AlterUserScramCredentialsRequest(upsertions=[
        ScramCredentialUpsertion(name="carol", mechanism=1, **SALTED)] * 2), 0), [("carol", E.DUPLICATE_RESOURCE)],
        id="twice-in-one-request"),
    pytest.param("bob", [], (AlterUserScramCredentialsRequest(upsertions=[
        ScramCredentialUpsertion(name="carol", mechanism=1, **SALTED)]), 0),
        [("carol", E.CLUSTER_AUTHORIZATION_FAILED)], id="needs-alter-on-cluster"),
]  # fmt: skip
_CAROL = (
    AlterUserScramCredentialsRequest(
        upsertions=[ScramCredentialUpsertion(name="carol", mechanism=2, **SALTED)]
    ),
    0,
)
DESCRIBE_USER_SCRAM_CREDENTIALS_CASES = [
    pytest.param("admin", [_CAROL], (DescribeUserScramCredentialsRequest(users=[]), 0),
                 (E.NONE, [("carol", E.NONE, [(2, 4096)])]), id="every-user"),
    pytest.param("admin", [_CAROL], (DescribeUserScramCredentialsRequest(users=[UserName(name="carol"),
                                                                                UserName(name="x")]), 0),
                 (E.NONE, [("carol", E.NONE, [(2, 4096)]), ("x", E.RESOURCE_NOT_FOUND, [])]), id="named"),
    pytest.param("admin", [], (DescribeUserScramCredentialsRequest(users=[UserName(name="x")] * 2), 0),
                 (E.NONE, [("x", E.DUPLICATE_RESOURCE, [])]), id="named-twice"),
    pytest.param("bob", [], (DescribeUserScramCredentialsRequest(users=[]), 0), (E.CLUSTER_AUTHORIZATION_FAILED, []),
                 id="needs-describe-on-cluster"),
]  # fmt: skip


def quota(entity: list[tuple[str, str | None]], ops: list[tuple[str, float, bool]]) -> QuotaEntry:
    return QuotaEntry(entity=[QuotaEntity(entity_type=t, entity_name=n) for t, n in entity],
                      ops=[OpData(key=k, value=v, remove=r) for k, v, r in ops])  # fmt: skip


_QUOTAS = (
    AlterClientQuotasRequest(
        entries=[
            quota([("user", "alice")], [("producer_byte_rate", 1024.0, False)]),
            quota([("client-id", None)], [("request_percentage", 50.0, False)]),
        ]
    ),
    1,
)
ALTER_CLIENT_QUOTAS_CASES = [
    pytest.param("admin", [], _QUOTAS, [E.NONE, E.NONE], id="user-and-default-client"),
    pytest.param("admin", [], (AlterClientQuotasRequest(entries=[
        quota([("user", "a")], [("no_such_key", 1.0, False)]), quota([], [("producer_byte_rate", 1.0, False)]),
        quota([("ip", "1.2.3.4"), ("user", "a")], [("connection_creation_rate", 1.0, False)]),
        quota([("user", "a")], [("producer_byte_rate", -5.0, False)])]), 0), [E.INVALID_REQUEST] * 4, id="invalid"),
    pytest.param("bob", [], _QUOTAS, [E.CLUSTER_AUTHORIZATION_FAILED] * 2, id="needs-alter-configs-on-cluster"),
]  # fmt: skip
DESCRIBE_CLIENT_QUOTAS_CASES = [
    pytest.param("admin", [_QUOTAS], (DescribeClientQuotasRequest(components=[], strict=False), 1),
                 (E.NONE, [([("client-id", None)], [("request_percentage", 50.0)]),
                           ([("user", "alice")], [("producer_byte_rate", 1024.0)])]), id="all"),
    pytest.param("admin", [_QUOTAS], (DescribeClientQuotasRequest(components=[
        ComponentData(entity_type="user", match_type=0, match="alice")], strict=True), 0),
        (E.NONE, [([("user", "alice")], [("producer_byte_rate", 1024.0)])]), id="v0-exact"),
    pytest.param("admin", [_QUOTAS], (DescribeClientQuotasRequest(components=[
        ComponentData(entity_type="client-id", match_type=1, match=None)], strict=False), 1),
        (E.NONE, [([("client-id", None)], [("request_percentage", 50.0)])]), id="default-entity"),
    pytest.param("bob", [], (DescribeClientQuotasRequest(components=[], strict=False), 1),
                 (E.CLUSTER_AUTHORIZATION_FAILED, []), id="needs-describe-configs-on-cluster"),
]  # fmt: skip


@pytest.mark.trio
@pytest.mark.parametrize(
    ("user", "before", "step", "expected"),
    CREATE_ACLS_CASES + DESCRIBE_ACLS_CASES + DELETE_ACLS_CASES + ALTER_USER_SCRAM_CREDENTIALS_CASES
    + DESCRIBE_USER_SCRAM_CREDENTIALS_CASES + ALTER_CLIENT_QUOTAS_CASES + DESCRIBE_CLIENT_QUOTAS_CASES,
)  # fmt: skip
async def test_admin_apis(
    secured: Broker, user: str, before: list[tuple[Any, int]], step: tuple[Any, int], expected: Any
) -> None:
    for request, version in before:
        await wire_call(secured, request, version, as_user("admin"))
    assert codes(await wire_call(secured, step[0], step[1], as_user(user))) == expected


@pytest.mark.trio
async def test_acl_apis_without_an_authorizer_are_security_disabled(broker: Broker) -> None:
    admin = as_user("admin")
    assert codes(await wire_call(broker, TWO_ACLS, 3, admin)) == [E.SECURITY_DISABLED] * 2
    assert (
        codes(await wire_call(broker, DescribeAclsRequest(**acl_filter()), 3, admin))[0]
        == E.SECURITY_DISABLED
    )
    delete = DeleteAclsRequest(filters=[DeleteAclsFilter(**acl_filter())])
    assert codes(await wire_call(broker, delete, 3, admin)) == [(E.SECURITY_DISABLED, 0)]
