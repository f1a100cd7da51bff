"""One connection's security state, owned by its connection (kbroker/connection.py) and seen by handlers through
`RequestContext.session`: the listener, who the peer is, and where its SASL login stands.

On a SASL listener a connection starts unauthenticated: only ApiVersions, SaslHandshake and SaslAuthenticate are
served (anything else closes it, as Kafka does) and frames are capped at `sasl.server.max.receive.size`. A login may
give the session a lifetime (KIP-368: `connections.max.reauth.ms`, or a token's expiry); the client re-authenticates
on the same connection before it ends, and a request other than the SASL ones after it closes the connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kbroker.config import Listener
from kbroker.security.principal import ANONYMOUS, KafkaPrincipal


class MechanismServer(Protocol):
    """The server side of one SASL exchange (kbroker/security/sasl.py)."""

    mechanism: str
    complete: bool
    principal_name: str | None
    expires_at_ms: int | None
    """When the credential itself expires (an OAuth token), else None."""

    async def evaluate(self, token: bytes) -> bytes:
        """The answer to the client's next token; raises AuthenticationFailed."""
        ...


@dataclass(eq=False)
class ConnectionSession:
    listener: Listener
    connection_id: int
    peer: str
    """"address:port" of the client."""
    principal: KafkaPrincipal = ANONYMOUS
    needs_sasl: bool = False
    authenticated: bool = True
    mechanism: str | None = None
    """The mechanism of the handshake (and of the login it started)."""
    login: MechanismServer | None = None
    """The SASL exchange in progress, between handshake and completion."""
    expires_at_ms: int | None = None
    """The end of the SASL session (KIP-368), if it has one."""
    close_reason: str | None = None
    """Set by a handler: close the connection once this response is sent (a failed login, a refused handshake)."""
    raw_sasl: bool = False
    """After a SaslHandshake v0: the next frames are bare SASL tokens, not requests (Kafka's pre-KIP-152 way)."""
    mute_ms: int = 0
    """Set by the dispatcher: read nothing more from this client for so long (a quota's throttle, KIP-219)."""

    @classmethod
    def for_listener(cls, listener: Listener, connection_id: int, peer: str) -> ConnectionSession:
        sasl = listener.uses_sasl
        return cls(listener, connection_id, peer, needs_sasl=sasl, authenticated=not sasl)

    @property
    def client_ip(self) -> str:
        return self.peer.rsplit(":", 1)[0] if ":" in self.peer else self.peer

    def expired(self, now_ms: int) -> bool:
        return self.expires_at_ms is not None and now_ms >= self.expires_at_ms
