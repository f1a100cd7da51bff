"""The failure detector (kbroker/cluster/failure_detector.py) and MetadataStore.end_session.

- end_session ends exactly one incarnation's session: its registration (and the controller key, when that
  incarnation held it) vanish at once, long before the lease's TTL; a newer incarnation of the same node, or another
  node's controllership, is left alone.
- The detector judges a peer dead only when the peer's kernel says so (its connection closed, then a new connection
  refused), never a peer that stops answering (a paused process), and never a peer it has not yet seen serve (a node
  that registered and has not opened its listener yet).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from kbroker.cluster.failure_detector import PROBE_SLACK_S, PROBE_WAIT_MS, FailureDetector, connection_refused
from kbroker.metadata.image import EMPTY_IMAGE, BrokerRegistration, MetadataImage
from tests.etcd_process import EtcdProcess, running_etcd
from tests.test_cluster_metadata_etcd import harness, wait_for

pytestmark = pytest.mark.timeout(60)

LONG_TTL = 30  # far longer than any wait below: a registration that vanishes was ended, not lapsed


@pytest.fixture
def etcd() -> Iterator[EtcdProcess]:
    with running_etcd() as server:
        yield server


# ---- end_session -----------------------------------------------------------------------------------------------


@pytest.mark.trio
async def test_end_session_ends_that_incarnation_and_its_controllership(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        broker = await h.broker(store, 1, ttl=LONG_TTL)
        other = await h.broker(store, 2, ttl=LONG_TTL)
        lease = await store.client.lease_grant(LONG_TTL)
        won, record = await store.campaign(1, lease.id)
        assert won
        assert record is not None
        await wait_for(store, lambda s: s.controller is not None and 1 in s.brokers)

        assert not await store.end_session(1, broker.registration.broker_epoch + 1000)  # not that incarnation
        assert await store.end_session(1, broker.registration.broker_epoch)
        image = await wait_for(store, lambda s: 1 not in s.brokers and s.controller is None, timeout=5)
        assert image.brokers[2] == other.registration  # another node is left alone


@pytest.mark.trio
async def test_end_session_leaves_a_newer_incarnation_alone(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        first = await h.broker(store, 1, ttl=2)
        first.crash()
        second = await h.broker(store, 1, ttl=LONG_TTL)  # registers once the first lapsed
        lease = await store.client.lease_grant(LONG_TTL)
        won, _ = await store.campaign(1, lease.id)  # the live incarnation is the controller
        assert won
        assert not await store.end_session(1, first.registration.broker_epoch)
        # The store's own write shows end_session changed nothing: both keys are still there after it.
        marker = await store.client.put(store.keys.root + b"marker", b"")
        image = await store.wait_for_revision(marker.revision)
        assert image.brokers[1].broker_epoch == second.registration.broker_epoch
        assert image.controller is not None
        assert image.controller.node_id == 1


@pytest.mark.trio
async def test_end_session_of_a_dead_controller_whose_node_restarted(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        first = await h.broker(store, 1, ttl=2)
        lease = await store.client.lease_grant(LONG_TTL)
        won, _ = await store.campaign(1, lease.id)  # the first incarnation's controllership outlives it
        assert won
        first.crash()
        second = await h.broker(store, 1, ttl=LONG_TTL)
        assert not await store.end_session(
            1, first.registration.broker_epoch
        )  # its registration lapsed already
        image = await wait_for(store, lambda s: s.controller is None, timeout=5)
        assert image.brokers[1].broker_epoch == second.registration.broker_epoch


# ---- the detector ----------------------------------------------------------------------------------------------


class FakePeer:
    """A peer's inter-broker listener: accepts connections and never answers (a request stays outstanding), until
    it dies (`die`: listening socket and connections closed, as the kernel does for a killed process)."""

    def __init__(self) -> None:
        self.listener = trio.socket.socket()
        self.accepted: list[trio.SocketStream] = []
        self.port = 0

    async def open(self, nursery: trio.Nursery, port: int = 0) -> None:
        await self.listener.bind(("127.0.0.1", port))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        nursery.start_soon(self._accept)

    async def _accept(self) -> None:
        listener = trio.SocketListener(self.listener)
        while True:
            try:
                self.accepted.append(await listener.accept())
            except (trio.ClosedResourceError, OSError):
                return

    async def die(self) -> None:
        self.listener.close()
        for stream in self.accepted:
            await stream.aclose()


def image_with(node_id: int, broker_epoch: int, port: int) -> MetadataImage:
    registration = BrokerRegistration(node_id, "127.0.0.1", port, broker_epoch=broker_epoch)
    return dataclasses.replace(EMPTY_IMAGE, brokers={node_id: registration, 1: BrokerRegistration(1, "x", 1)})


@pytest.mark.trio
async def test_a_peer_whose_process_died_is_judged_at_once() -> None:
    ended: list[tuple[int, int]] = []

    async def end_session(node_id: int, broker_epoch: int) -> None:
        ended.append((node_id, broker_epoch))
        await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        peer = FakePeer()
        await peer.open(nursery)
        detector = FailureDetector(1, end_session)
        detector.on_metadata(image_with(2, 7, peer.port))
        nursery.start_soon(detector.run)
        with trio.fail_after(5):
            while not peer.accepted:  # noqa: ASYNC110 (the detector connects; nothing to wait on but its arrival)
                await trio.sleep(0.01)
        assert ended == []
        await peer.die()
        with trio.fail_after(5):
            while not ended:  # noqa: ASYNC110
                await trio.sleep(0.01)
        assert ended == [(2, 7)]
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_peer_not_yet_serving_is_not_judged_until_it_served() -> None:
    """A node registers before its listener opens: refused connections then mean nothing. Once it has served and
    then dies, it is judged."""
    ended: list[tuple[int, int]] = []

    async def end_session(node_id: int, broker_epoch: int) -> None:
        ended.append((node_id, broker_epoch))
        await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        reserved = trio.socket.socket()
        await reserved.bind(("127.0.0.1", 0))
        port = reserved.getsockname()[1]
        reserved.close()
        assert await connection_refused("127.0.0.1", port)
        detector = FailureDetector(1, end_session)
        detector.on_metadata(image_with(2, 7, port))
        nursery.start_soon(detector.run)
        await trio.sleep(1.5)  # several refused attempts (every RETRY_S) while the peer starts
        peer = FakePeer()
        await peer.open(nursery, port)
        with trio.fail_after(5):
            while not peer.accepted:  # noqa: ASYNC110
                await trio.sleep(0.01)
        assert ended == []  # the refusals before it served did not count
        await peer.die()
        with trio.fail_after(5):
            while not ended:  # noqa: ASYNC110
                await trio.sleep(0.01)
        assert ended == [(2, 7)]
        nursery.cancel_scope.cancel()


def test_a_paused_peer_is_never_judged() -> None:
    """A paused process keeps its connections and its listening socket: requests time out, connections still open.
    Over many probe timeouts (virtual time) the detector reconnects again and again and never ends its session."""
    ended: list[tuple[int, int]] = []
    timeouts = 8

    async def end_session(node_id: int, broker_epoch: int) -> None:
        ended.append((node_id, broker_epoch))
        await trio.lowlevel.checkpoint()

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            peer = FakePeer()
            await peer.open(nursery)
            detector = FailureDetector(1, end_session)
            detector.on_metadata(image_with(2, 7, peer.port))
            nursery.start_soon(detector.run)
            # Each probe request times out after its long poll plus the slack; then the detector reconnects.
            with trio.fail_after((PROBE_WAIT_MS / 1000 + PROBE_SLACK_S + 5) * timeouts):
                while len(peer.accepted) < timeouts:  # noqa: ASYNC110
                    await trio.sleep(0.5)
            nursery.cancel_scope.cancel()
            return len(peer.accepted)

    connections = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert connections >= timeouts
    assert ended == []
