"""The client side of a secured listener: how a follower reaches its leader's inter-broker listener
(`inter.broker.listener.name`) over TLS and/or SASL, as Kafka's brokers do.

TLS trusts the listener's trust store (and offers its key store as the client certificate); SASL logs in with
`sasl.mechanism.inter.broker.protocol` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) as the `username`/`password` of
that listener's JAAS config for the mechanism. The broker's principal must be a super user (or have CLUSTER_ACTION
on the cluster) where an authorizer runs, as in Kafka.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import scramp
import trio

from kbroker.common import ConfigError
from kbroker.config import BrokerConfig
from kbroker.replication.client import BrokerClient, BrokerClientError, Connector, plaintext_connector
from kbroker.security.settings import ListenerSecurity
from kbroker.security.tls import client_context
from protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from protocol.messages.sasl_handshake_request import SaslHandshakeRequest

CONNECT_TIMEOUT_S = 10.0
SASL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class InterBrokerLogin:
    mechanism: str
    username: str
    password: str


def inter_broker_connector(config: BrokerConfig, security: ListenerSecurity) -> Connector:
    """The connector of the inter-broker listener (plain TCP when it needs neither TLS nor SASL); ConfigError if
    its settings cannot work (a SASL mechanism kbroker cannot log in with, no credentials)."""
    listener = security.listener
    if not listener.uses_tls and not listener.uses_sasl:
        return plaintext_connector
    context = client_context(security.tls) if security.tls is not None else None
    login = None
    if security.sasl is not None:
        mechanism = config.sasl_mechanism_inter_broker_protocol
        if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ConfigError(
                f"sasl.mechanism.inter.broker.protocol={mechanism}: brokers log in to each other with PLAIN, "
                "SCRAM-SHA-256 or SCRAM-SHA-512"
            )
        if mechanism not in security.sasl.mechanisms:
            raise ConfigError(
                f"sasl.mechanism.inter.broker.protocol={mechanism} is not enabled on the inter-broker listener "
                f"{listener.name} ({', '.join(security.sasl.mechanisms)})"
            )
        jaas = security.sasl.jaas.get(mechanism)
        options = jaas.options if jaas is not None else {}
        if not options.get("username") or "password" not in options:
            raise ConfigError(
                f"the inter-broker listener {listener.name} needs username and password in "
                f"listener.name.{listener.name.lower()}.{mechanism.lower()}.sasl.jaas.config (what this broker logs "
                "in to the others with)"
            )
        login = InterBrokerLogin(mechanism, options["username"], options["password"])

    async def connect(host: str, port: int, client_id: str) -> BrokerClient:
        try:
            with trio.fail_after(CONNECT_TIMEOUT_S):
                stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
                if context is not None:
                    tls = trio.SSLStream(stream, context, server_hostname=host)
                    await tls.do_handshake()
                    stream = tls
        except (OSError, trio.TooSlowError, trio.BrokenResourceError, ssl.SSLError) as exc:
            raise BrokerClientError(f"cannot connect to {host}:{port} ({listener.name}): {exc!r}") from exc
        client = BrokerClient(stream, client_id)
        if login is not None:
            try:
                await _login(client, login)
            except BaseException:
                await client.aclose()
                raise
        return client

    return connect


async def _login(client: BrokerClient, login: InterBrokerLogin) -> None:
    handshake = await client.request(
        SaslHandshakeRequest(mechanism=login.mechanism), 1, timeout_s=SASL_TIMEOUT_S
    )
    if handshake.error_code:
        raise BrokerClientError(
            f"SASL handshake for {login.mechanism} refused (error {handshake.error_code})"
        )
    scram = None
    if login.mechanism == "PLAIN":
        token = f"\x00{login.username}\x00{login.password}".encode()
    else:
        scram = scramp.ScramClient([login.mechanism], login.username, login.password)
        token = scram.get_client_first().encode()
    for step in range(2 if scram is not None else 1):
        answer = await client.request(SaslAuthenticateRequest(auth_bytes=token), 2, timeout_s=SASL_TIMEOUT_S)
        if answer.error_code:
            raise BrokerClientError(f"SASL login as {login.username} failed: {answer.error_message}")
        if scram is not None and step == 0:
            scram.set_server_first(bytes(answer.auth_bytes).decode())
            token = scram.get_client_final().encode()
        elif scram is not None:
            try:
                scram.set_server_final(bytes(answer.auth_bytes).decode())
            except scramp.ScramException as exc:
                raise BrokerClientError(f"the leader's SCRAM signature does not verify: {exc}") from None
