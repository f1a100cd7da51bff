"""Ending a dead broker's session early: each node watches every other registered broker and, when one is known to
be dead, has its registration lease revoked at once instead of waiting `broker.session.timeout.ms` for it to lapse.

Why: a broker that dies stops refreshing its lease, but etcd only removes the registration a whole session timeout
later (9 s by default). Meanwhile every partition it led has no serving leader, and every partition it followed keeps
a dead member in its ISR, which holds the high watermark, and so every acks=-1 produce, back. Kafka waits just as
long (for missed heartbeats); kbroker does better when the death is certain.

When is a broker *known* dead, rather than slow? Only when its operating system says so:

1. we held a connection to this incarnation's inter-broker listener (so we saw it serve), with a long-poll request
   outstanding on it, so that we are always reading;
2. that connection ended (the peer's kernel closed it: end of stream or a reset), and
3. a new TCP connection to the same address is *refused*: the host is reachable, but no socket listens on the port.

A process killed with SIGKILL (or crashing) gets exactly that: its kernel closes its connections and its listening
socket at once. A paused process (SIGSTOP), an overloaded one, or one cut off by a network partition that drops
packets never does: its kernel keeps its connections and its listening socket (new connections complete in the
backlog or time out), so such a broker is still judged by the session timeout alone, as the issue of a live-but-slow
node requires. The one way to fake a death is a firewall that answers with TCP resets (or ICMP port-unreachable)
for the broker's port; the broker is then treated as dead, loses its registration at its next keepalive, and joins
again as a new incarnation, which is safe (every role change still goes through etcd's fenced writes) but churns
while the firewall lasts. docs/reliability.md says so.

A broker starting up is never judged: it registers before its listener opens (connections are refused until it
serves), but no peer has seen this incarnation serve yet, so rule 1 does not hold.

Ending the session is `MetadataStore.end_session`: it revokes the lease of that incarnation's registration (and of
the controller key if that incarnation held it). The controller then reacts to the vanished registration exactly as
to a lapsed one: it elects new leaders and removes the broker from every ISR, in one etcd transaction per batch.
Any node may end a session; the writes that follow are fenced as usual, so two nodes doing it at once is harmless.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from kbroker.metadata.image import MetadataImage
from kbroker.replication.client import (
    FETCH_VERSION,
    BrokerClient,
    BrokerClientError,
    Connector,
    plaintext_connector,
)
from protocol.messages.fetch_request import FetchRequest

log = logging.getLogger(__name__)

# The outstanding request: an empty Fetch (no partitions) that the peer parks for this long, as a follower's empty
# incremental fetch in Kafka. Any request would do; a long-poll one keeps us reading with little traffic.
PROBE_WAIT_MS = 5_000
# A request that takes this much longer than its long poll means a slow or paused peer: reconnect, judge nothing.
PROBE_SLACK_S = 10.0
CONNECT_TIMEOUT_S = 2.0
RETRY_S = 0.5
FIRST_RETRY_S = 0.01

EndSession = Callable[[int, int], Awaitable[None]]
"""(node_id, broker_epoch) -> end that incarnation's session."""


@dataclass(frozen=True, slots=True)
class Peer:
    node_id: int
    broker_epoch: int
    host: str
    port: int


class FailureDetector:
    """Feed it every metadata image (`on_metadata`) and run it (`run`) for as long as this node is a member."""

    def __init__(
        self,
        node_id: int,
        end_session: EndSession,
        *,
        connect: Connector = plaintext_connector,
        probe_wait_ms: int = PROBE_WAIT_MS,
    ) -> None:
        self.node_id = node_id
        self._end_session = end_session
        self._connect = connect
        self._probe_wait_ms = probe_wait_ms
        self._probes: dict[Peer, trio.CancelScope] = {}
        self._wanted: set[Peer] = set()
        self._changed = trio.Event()

    def on_metadata(self, image: MetadataImage) -> None:
        """The peers to watch: every registered broker but this one, each incarnation on its own."""
        self._wanted = {
            Peer(b.node_id, b.broker_epoch, b.host, b.port)
            for b in image.brokers.values()
            if b.node_id != self.node_id and b.broker_epoch >= 0
        }
        self._changed.set()

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                for peer in set(self._probes) - self._wanted:
                    self._probes.pop(peer).cancel()
                for peer in self._wanted - set(self._probes):
                    scope = trio.CancelScope()
                    self._probes[peer] = scope
                    nursery.start_soon(self._watch, peer, scope)
                await self._changed.wait()
                self._changed = trio.Event()

    async def _watch(self, peer: Peer, scope: trio.CancelScope) -> None:
        with scope:
            seen_serving = False
            retry = RETRY_S
            while True:
                client: BrokerClient | None = None
                try:
                    with trio.move_on_after(CONNECT_TIMEOUT_S):
                        client = await self._connect(peer.host, peer.port, f"kbroker-liveness-{self.node_id}")
                except BrokerClientError:
                    pass
                if client is not None:
                    seen_serving = True
                    async with client:
                        await self._hold(client)
                    # A dying process's kernel closes its connections and its listening socket one after the
                    # other: a connection may end while the listener still accepts for a moment. Look again soon.
                    retry = FIRST_RETRY_S
                if seen_serving and await connection_refused(peer.host, peer.port):
                    log.warning(
                        "broker %d (broker epoch %d) is gone: its connection closed and %s:%d refuses new ones; "
                        "ending its session",
                        peer.node_id,
                        peer.broker_epoch,
                        peer.host,
                        peer.port,
                    )
                    # Shielded: the registration vanishing makes the next image cancel this very probe.
                    with trio.CancelScope(shield=True), trio.move_on_after(CONNECT_TIMEOUT_S * 5):
                        await self._end_session(peer.node_id, peer.broker_epoch)
                    return
                await trio.sleep(retry)
                retry = min(retry * 2, RETRY_S)

    async def _hold(self, client: BrokerClient) -> None:
        """Keep a long-poll request outstanding until the connection fails or a request takes far too long."""
        request = FetchRequest(
            replica_id=-1,
            max_wait_ms=self._probe_wait_ms,
            min_bytes=1,
            max_bytes=1,
            session_id=0,
            session_epoch=-1,
            topics=[],
        )
        try:
            while True:
                await client.request(
                    request, FETCH_VERSION, timeout_s=self._probe_wait_ms / 1000 + PROBE_SLACK_S
                )
        except BrokerClientError:
            return


async def connection_refused(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """Whether a TCP connection to host:port is refused at every address (nothing listens there), as opposed to
    accepted or timing out (a partition that drops packets, a paused process whose backlog is full)."""
    with trio.move_on_after(timeout_s):
        try:
            addresses = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
        except OSError:
            return False
        for family, kind, proto, _, address in addresses:
            with trio.socket.socket(family, kind, proto) as sock:
                try:
                    await sock.connect(address)
                except ConnectionRefusedError:
                    continue
                except OSError:
                    return False
                return False
        return bool(addresses)
    return False
