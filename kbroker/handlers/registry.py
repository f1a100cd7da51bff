"""The handler contract: each API module registers the versions it implements; ApiVersions is built from this.

    @handles(ProduceRequest, 3, 11)
    async def handle(ctx: RequestContext, req: ProduceRequest) -> ProduceResponse | Deferred[ProduceResponse] | None:

The API key comes from the request class's schema. A handler gets the decoded request and a `RequestContext`: who asks
(client id, address, connection, listener, principal) and the broker's services, each behind a narrow interface
(kbroker/handlers/services.py); a handler never sees the broker's internals, the server or the connection.

Advertised ranges are Kafka 3.9's maximum and Kafka 4.0's minimum (KIP-896), except where a stock client needs older
versions (the group APIs keep 0 for kcat). Because the advertised set is read from here, it can never drift from what
is implemented.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from kbroker.handlers.services import BrokerServices
from kbroker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from kbroker.security.principal import ANONYMOUS, KafkaPrincipal
from kbroker.security.session import ConnectionSession
from protocol.codec import prepare
from protocol.messages import REQUESTS, RESPONSES, SCHEMAS, ApiKey
from protocol.schema import MessageSchema

Req = TypeVar("Req")
Resp = TypeVar("Resp")
Resp_co = TypeVar("Resp_co", covariant=True)


class CloseConnection(Exception):
    """Stop serving this connection (after logging why): Kafka's answer to requests it will not parse."""


@dataclass(frozen=True, slots=True)
class Deferred(Generic[Resp_co]):
    """A response that is ready only later (a produce with acks=-1 waits for fsync and replication).

    The connection goes on reading and handling the requests behind it meanwhile, so that many acks=-1 batches
    pipelined on one connection share one fsync and one replication round; responses still go out in request
    order. `wait()` returns the response message.
    """

    wait: Callable[[], Awaitable[Resp_co]]


class RequestContext(NamedTuple):
    """What a handler knows of its request besides the message. (A NamedTuple rather than a frozen dataclass:
    one is made per request, and a frozen dataclass's constructor sets each field through object.__setattr__.)"""

    services: BrokerServices
    api_key: ApiKey
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    """"address:port" of the client."""
    connection_id: int
    listener: str = "PLAINTEXT"
    """The name of the listener the request came in on (Metadata answers with that listener's addresses)."""
    principal: KafkaPrincipal = ANONYMOUS
    """Who is asking: the SASL login, the TLS client certificate's principal, or User:ANONYMOUS."""
    session: ConnectionSession | None = None
    """The connection's security state (the SASL handlers move it on); None for calls made in process."""

    @property
    def client_ip(self) -> str:
        return self.client_host.rsplit(":", 1)[0] if ":" in self.client_host else self.client_host

    # ---- authorization: the one interface every handler uses (kbroker/security/authorizer.py) ----------------

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """May this principal, from this address, do `operation` on the named resource? (Always, without an
        authorizer.)"""
        authorizer = self.services.authorizer
        if not authorizer.enabled:
            return True  # (without spelling out the principal and the address for each topic of each request)
        return authorizer.authorize(str(self.principal), self.client_ip, operation, resource_type, name)

    def authorize_cluster(self, operation: AclOperation) -> bool:
        return self.authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorize_by_resource_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """May it do `operation` on at least one resource of the type (e.g. WRITE on some topic)?"""
        return self.services.authorizer.authorize_by_resource_type(
            str(self.principal), self.client_ip, operation, resource_type
        )

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """The authorized-operations bit field of Metadata, DescribeCluster and DescribeGroups."""
        return self.services.authorizer.authorized_operations(
            str(self.principal), self.client_ip, resource_type, name
        )


HandlerFn = Callable[[RequestContext, Req], Awaitable[Resp | Deferred[Resp] | None]]


@dataclass(frozen=True, slots=True)
class Handler(Generic[Req, Resp]):
    api_key: ApiKey
    min_version: int
    max_version: int
    fn: HandlerFn[Req, Resp]
    request_schema: MessageSchema


HANDLERS: dict[ApiKey, Handler[Any, Any]] = {}


def handles(
    request_cls: type[Req], min_version: int, max_version: int
) -> Callable[[HandlerFn[Req, Resp]], HandlerFn[Req, Resp]]:
    """Register `fn` as the handler of `request_cls`'s API for versions min..max (inclusive)."""
    schema = SCHEMAS[request_cls]
    api_key = ApiKey(schema.api_key)
    if schema.kind != "request":
        raise RuntimeError(f"{request_cls.__name__} is not a request")
    if min_version not in schema.valid or max_version not in schema.valid:
        raise RuntimeError(f"{api_key.name}: {min_version}-{max_version} outside the spec's versions")

    def register(fn: HandlerFn[Req, Resp]) -> HandlerFn[Req, Resp]:
        if api_key in HANDLERS:
            raise RuntimeError(f"{api_key.name} registered twice")
        HANDLERS[api_key] = Handler(api_key, min_version, max_version, fn, schema)
        return fn

    return register


def prepare_codecs() -> None:
    """Compile the codec's plans for every registered API's request and response at each version we serve (~420
    plans, ~0.15 s once per process), before the listener accepts. Otherwise the first request of each kind after a
    start pays for its plans: ApiVersions took 1.4-1.9 ms against 0.2-0.9 for the next, and that slower first
    answer lost a librdkafka admin client a race after a restart (docs/kafka-differences.md)."""
    for handler in HANDLERS.values():
        for version in range(handler.min_version, handler.max_version + 1):
            prepare(REQUESTS[handler.api_key], version)
            prepare(RESPONSES[handler.api_key], version)
