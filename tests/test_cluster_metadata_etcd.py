"""The metadata store and the controller against a real etcd: leases, controller election and fencing,
compare-and-swap of partition state, leader election after a broker's lease lapses."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

import pytest
import trio

from kbroker.cluster.controller import Controller
from kbroker.cluster.etcd import EtcdClient
from kbroker.cluster.member import ClusterMember, run_cluster_member
from kbroker.cluster.metadata import (
    FencedLeaderEpoch,
    IneligibleReplica,
    InvalidUpdateVersion,
    StaleBrokerEpoch,
    UnknownTopicOrPartition,
    place_partition,
)
from kbroker.cluster.store import BrokerIdInUse, MetadataStore, PartitionWrite
from kbroker.metadata.image import NO_LEADER, BrokerRegistration, MetadataImage, PartitionState, TopicMetadata
from kbroker.metadata.topics import InvalidReplicationFactor, TopicAlreadyExists
from tests.etcd_process import EtcdProcess, running_etcd

pytestmark = pytest.mark.timeout(90)

TTL = 2  # seconds; etcd's shortest lease with its default election timeout


@pytest.fixture
def etcd() -> Iterator[EtcdProcess]:
    with running_etcd() as server:
        yield server


@dataclass
class Broker:
    registration: BrokerRegistration
    scope: trio.CancelScope

    def crash(self) -> None:
        """Stop refreshing the lease without revoking it: the registration lingers until the TTL runs out."""
        self.scope.cancel()


class Harness:
    def __init__(self, etcd: EtcdProcess, nursery: trio.Nursery) -> None:
        self.etcd = etcd
        self.nursery = nursery
        self.stores: list[MetadataStore] = []

    async def store(self) -> MetadataStore:
        store = MetadataStore.from_url(self.etcd.url + "/test")
        self.stores.append(store)
        await self.nursery.start(store.run)
        return store

    async def broker(
        self, store: MetadataStore, node_id: int, revoke_on_exit: bool = False, ttl: int = TTL
    ) -> Broker:
        scope = trio.CancelScope()

        async def run(task_status: trio.TaskStatus[BrokerRegistration]) -> None:
            with scope:
                await store.register_broker(
                    BrokerRegistration(node_id, "127.0.0.1", 9000 + node_id),
                    ttl=ttl,
                    revoke_on_exit=revoke_on_exit,
                    task_status=task_status,
                )

        registration: BrokerRegistration = await self.nursery.start(run)
        await store.wait_for_revision(registration.broker_epoch)
        return Broker(registration, scope)

    async def controller(self, store: MetadataStore, node_id: int) -> tuple[Controller, trio.CancelScope]:
        controller = Controller(store, node_id, lease_ttl=TTL, retry_interval=0.2)
        scope = trio.CancelScope()

        async def run() -> None:
            with scope:
                await controller.run()

        self.nursery.start_soon(run)
        return controller, scope


@asynccontextmanager
async def harness(etcd: EtcdProcess) -> AsyncIterator[Harness]:
    stores: list[MetadataStore] = []
    try:
        async with trio.open_nursery() as nursery:
            h = Harness(etcd, nursery)
            stores = h.stores
            try:
                yield h
            finally:
                nursery.cancel_scope.cancel()
    finally:
        # after the nursery: its tasks may still use their clients while they end (revoking leases)
        for store in stores:
            await store.aclose()


async def wait_for(
    store: MetadataStore,
    predicate: Callable[[MetadataImage], bool],
    timeout: float = 20,  # noqa: ASYNC109
) -> MetadataImage:
    with trio.fail_after(timeout):
        return await store.wait_until(predicate)


# ---- brokers


@pytest.mark.trio
async def test_broker_registration_lapses_with_its_lease(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        broker = await h.broker(store, 1)
        snapshot = await wait_for(store, lambda s: 1 in s.brokers)
        assert snapshot.brokers[1] == broker.registration
        assert broker.registration.broker_epoch > 0
        await trio.sleep(TTL * 1.5)  # the keepalive holds it past its TTL
        assert 1 in store.snapshot().brokers
        broker.crash()
        start = trio.current_time()
        await wait_for(store, lambda s: 1 not in s.brokers, timeout=TTL + 5)
        assert trio.current_time() - start >= TTL - 0.5


@pytest.mark.trio
async def test_clean_shutdown_revokes_registration_at_once(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        broker = await h.broker(store, 1, revoke_on_exit=True, ttl=30)
        await wait_for(store, lambda s: 1 in s.brokers)
        broker.crash()
        await wait_for(store, lambda s: 1 not in s.brokers, timeout=10)  # far less than the TTL


@pytest.mark.trio
async def test_restarted_broker_gets_a_larger_epoch_after_the_old_lease_lapses(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        first = await h.broker(store, 1)
        first.crash()
        second = await h.broker(store, 1)  # waits for the first registration to lapse
        assert second.registration.broker_epoch > first.registration.broker_epoch
        assert store.snapshot().brokers[1].broker_epoch == second.registration.broker_epoch


@pytest.mark.trio
async def test_duplicate_node_id_is_refused(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        await h.broker(store, 1)
        with pytest.raises(BrokerIdInUse):
            await store.register_broker(BrokerRegistration(1, "127.0.0.1", 1), ttl=TTL)


# ---- controller election and fencing


@pytest.mark.trio
async def test_two_controllers_race_and_only_one_wins(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        stores = [MetadataStore(client, "race", owns_client=False) for _ in range(2)]
        leases = [await client.lease_grant(10) for _ in range(2)]
        results: list[tuple[bool, object]] = []

        async def campaign(i: int) -> None:
            results.append(await stores[i].campaign(i + 1, leases[i].id))

        async with trio.open_nursery() as nursery:
            for i in range(2):
                nursery.start_soon(campaign, i)
        assert sorted(won for won, _ in results) == [False, True]
        winner = next(record for won, record in results if won)
        loser_view = next(record for won, record in results if not won)
        assert loser_view == winner


@pytest.mark.trio
async def test_controller_processes_elect_one_and_fail_over(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store_a, store_b = await h.store(), await h.store()
        controller_a, scope_a = await h.controller(store_a, 1)
        controller_b, scope_b = await h.controller(store_b, 2)
        first = await wait_for(store_a, lambda s: s.controller is not None)
        assert first.controller is not None
        with trio.fail_after(10):
            while (controller_a.controller_epoch, controller_b.controller_epoch).count(None) != 1:  # noqa: ASYNC110
                await trio.sleep(0.05)
        active, active_scope, standby = (
            (controller_a, scope_a, controller_b)
            if controller_a.controller_epoch is not None
            else (controller_b, scope_b, controller_a)
        )
        assert active.node_id == first.controller.node_id
        assert active.controller_epoch == first.controller.controller_epoch
        active_scope.cancel()  # a clean stop revokes the lease: the standby takes over
        with trio.fail_after(10):
            while standby.controller_epoch is None:  # noqa: ASYNC110
                await trio.sleep(0.05)
        assert standby.controller_epoch > first.controller.controller_epoch


@pytest.mark.trio
async def test_controller_whose_lease_expired_cannot_write(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        await h.broker(store, 1)
        await store.create_topic("t", 1, 1)
        old_lease = await store.client.lease_grant(TTL)
        won, old = await store.campaign(1, old_lease.id)
        assert won
        assert old is not None
        # The old controller places the partition while it holds the lease.
        snapshot = await store.wait_for_revision(old.controller_epoch)
        write = PartitionWrite("t", 0, PartitionState(1, 0, (1,), (1,), 0), 0, snapshot.topic_revisions["t"])
        assert await store.write_partitions(old.controller_epoch, [write]) is True
        # It pauses (no keepalive); its lease lapses and a successor is elected.
        await wait_for(store, lambda s: s.controller is None, timeout=TTL + 5)
        new_lease = await store.client.lease_grant(10)
        won, new = await store.campaign(2, new_lease.id)
        assert won
        assert new is not None
        assert new.controller_epoch > old.controller_epoch
        snapshot = await store.wait_for_revision(new.controller_epoch)
        revision = snapshot.partition_revision("t", 0)
        stale = PartitionWrite(
            "t", 0, PartitionState(NO_LEADER, 1, (1,), (1,), 1), revision, write.topic_create_revision
        )
        assert await store.write_partitions(old.controller_epoch, [stale]) is None
        kv = await store.client.get(store.keys.partition("t", 0))
        assert kv is not None
        assert PartitionState.from_json(kv.value) == write.state
        # The successor's write with the same content goes through.
        assert await store.write_partitions(new.controller_epoch, [stale]) is True


# ---- partition state compare-and-swap


@pytest.mark.trio
async def test_stale_partition_writes_fail(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        brokers = [await h.broker(store, n) for n in (1, 2, 3)]
        await h.controller(store, 1)
        await store.create_topic("t", 1, 3)
        snapshot = await wait_for(store, lambda s: s.topic_complete("t"))
        state = snapshot.partitions["t"][0]
        assert state.leader_epoch == 0
        assert state.partition_epoch == 0
        leader = brokers[state.leader - 1].registration
        follower = next(b for b in state.replicas if b != state.leader)
        shrunk = await store.alter_partition(
            "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
            partition_epoch=0, new_isr=[b for b in state.isr if b != follower],
        )  # fmt: skip
        assert follower not in shrunk.isr
        assert shrunk.partition_epoch == 1
        # the same proposal again, from the old partition_epoch: refused
        with pytest.raises(InvalidUpdateVersion):
            await store.alter_partition(
                "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
                partition_epoch=0, new_isr=[state.leader],
            )  # fmt: skip
        # a leader epoch from the past: fenced
        with pytest.raises(FencedLeaderEpoch):
            await store.alter_partition(
                "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=-1,
                partition_epoch=1, new_isr=[state.leader],
            )  # fmt: skip
        # the follower caught up: back in the ISR
        expanded = await store.alter_partition(
            "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
            partition_epoch=1, new_isr=[*shrunk.isr, follower],
        )  # fmt: skip
        assert set(expanded.isr) == set(state.isr)
        assert expanded.partition_epoch == 2
        # a controller write computed from the first state is stale too
        controller = store.snapshot().controller
        assert controller is not None
        write = PartitionWrite(
            "t", 0, PartitionState(follower, 1, (follower,), state.replicas, 1),
            snapshot.partition_revision("t", 0), snapshot.topic_revisions["t"],
        )  # fmt: skip
        assert await store.write_partitions(controller.controller_epoch, [write]) is False


@pytest.mark.trio
async def test_alter_partition_refuses_dead_or_stale_brokers(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        brokers = {n: await h.broker(store, n) for n in (1, 2)}
        await h.controller(store, 1)
        await store.create_topic("t", 1, 2)
        snapshot = await wait_for(store, lambda s: s.topic_complete("t"))
        state = snapshot.partitions["t"][0]
        leader = brokers[state.leader].registration
        follower = brokers[3 - state.leader]
        shrunk = await store.alter_partition(
            "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
            partition_epoch=0, new_isr=[leader.node_id],
        )  # fmt: skip
        both = [leader.node_id, follower.registration.node_id]
        # A proposal with a broker epoch that is not the leader's registration: a stale incarnation.
        with pytest.raises(StaleBrokerEpoch):
            await store.alter_partition(
                "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch + 1000, leader_epoch=0,
                partition_epoch=shrunk.partition_epoch, new_isr=both,
            )  # fmt: skip
        follower.crash()
        await wait_for(store, lambda s: follower.registration.node_id not in s.brokers)
        with pytest.raises(IneligibleReplica):
            await store.alter_partition(
                "t", 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
                partition_epoch=shrunk.partition_epoch, new_isr=both,
            )  # fmt: skip


# ---- topics


@pytest.mark.trio
async def test_create_and_delete_topics(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        for n in (1, 2, 3):
            await h.broker(store, n)
        await wait_for(store, lambda s: len(s.brokers) == 3)
        await h.controller(store, 1)
        with pytest.raises(InvalidReplicationFactor):
            await store.create_topic("big", 1, 4)
        record = await store.create_topic("t", 6, 2, {"cleanup.policy": "compact"})
        with pytest.raises(TopicAlreadyExists):
            await store.create_topic("t", 1, 1)
        snapshot = await wait_for(store, lambda s: s.topic_complete("t"))
        assert snapshot.topics["t"] == record
        states = snapshot.partitions["t"]
        assert sorted(states) == list(range(6))
        for state in states.values():
            assert len(state.replicas) == 2
            assert state.leader == state.replicas[0]
            assert state.isr == state.replicas
        await store.create_partitions("t", 8)
        snapshot = await wait_for(store, lambda s: len(s.partitions.get("t", {})) == 8)
        assert all(snapshot.partitions["t"][p] == states[p] for p in range(6))
        await store.delete_topic("t")
        snapshot = await wait_for(store, lambda s: "t" not in s.topics)
        assert "t" not in snapshot.partitions
        assert (await store.client.get_prefix(store.keys.topic_partitions_prefix("t"))).kvs == []
        with pytest.raises(UnknownTopicOrPartition):
            await store.delete_topic("t")


# ---- leader election after a broker's lease lapses


@pytest.mark.trio
async def test_controller_elects_a_new_leader_from_the_isr(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        brokers = {n: await h.broker(store, n) for n in (1, 2, 3)}
        await h.controller(store, 1)
        await store.create_topic("t", 12, 3)
        before = await wait_for(store, lambda s: s.topic_complete("t"))
        led_by_2 = [p for p, st in before.partitions["t"].items() if st.leader == 2]
        assert led_by_2  # 12 partitions over 3 brokers: broker 2 leads some
        brokers[2].crash()
        after = await wait_for(
            store, lambda s: all(2 not in st.isr for st in s.partitions["t"].values()), timeout=TTL + 15
        )
        for p, old in before.partitions["t"].items():
            new = after.partitions["t"][p]
            assert new.leader != 2
            assert 2 not in new.isr
            assert new.replicas == old.replicas
            if p in led_by_2:
                # first surviving replica in assignment order, epoch bumped
                assert new.leader == next(b for b in old.replicas if b != 2)
                assert new.leader_epoch == old.leader_epoch + 1
            else:
                assert new.leader == old.leader
                assert new.leader_epoch == old.leader_epoch
            assert new.partition_epoch > old.partition_epoch
            assert after.is_leader("t", p, new.leader, brokers[new.leader].registration.broker_epoch)
        # broker 2 comes back: the controller does not put it back in any ISR (its leader will, once caught up)
        returned = await h.broker(store, 2)
        await wait_for(store, lambda s: 2 in s.brokers)
        await trio.sleep(1)
        latest = store.snapshot()
        assert latest.partitions["t"] == after.partitions["t"]
        assert returned.registration.broker_epoch > brokers[2].registration.broker_epoch


@pytest.mark.trio
async def test_no_unclean_election_unless_the_topic_allows_it(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        brokers = {n: await h.broker(store, n) for n in (1, 2)}
        await h.controller(store, 1)
        # Two topics whose partition 0 has the same preferred leader, so one crash hits both.
        victim = place_partition("clean", 0, 2, [1, 2])[0]
        unclean_name = next(
            f"unclean-{i}" for i in range(100) if place_partition(f"unclean-{i}", 0, 2, [1, 2])[0] == victim
        )
        other = 3 - victim
        await store.create_topic("clean", 1, 2)
        await store.create_topic(unclean_name, 1, 2, {"unclean.leader.election.enable": "true"})
        snapshot = await wait_for(
            store, lambda s: s.topic_complete("clean") and s.topic_complete(unclean_name)
        )
        # Make the ISR the leader alone, then kill that leader.
        for name in ("clean", unclean_name):
            state = snapshot.partitions[name][0]
            leader = brokers[state.leader].registration
            await store.alter_partition(
                name, 0, leader_id=leader.node_id, broker_epoch=leader.broker_epoch, leader_epoch=0,
                partition_epoch=0, new_isr=[leader.node_id],
            )  # fmt: skip
            assert state.leader == victim
        brokers[victim].crash()
        after = await wait_for(
            store,
            lambda s: (
                s.partitions["clean"][0].leader == NO_LEADER and s.partitions[unclean_name][0].leader == other
            ),
            timeout=TTL + 15,
        )
        clean = after.partitions["clean"][0]
        assert clean.isr == (victim,)  # the last in-sync replica is remembered
        assert clean.leader_epoch == 1
        unclean = after.partitions[unclean_name][0]
        assert unclean.isr == (other,)
        assert unclean.leader_epoch == 1
        # The last in-sync replica returns: clean election makes it leader again.
        await h.broker(store, victim)
        back = await wait_for(store, lambda s: s.partitions["clean"][0].leader == victim)
        assert back.partitions["clean"][0].leader_epoch == 2


@pytest.mark.trio
async def test_new_controller_reelects_leader_that_restarted_unnoticed(etcd: EtcdProcess) -> None:
    async with harness(etcd) as h:
        store = await h.store()
        brokers = {n: await h.broker(store, n) for n in (1, 2, 3)}
        _controller, scope = await h.controller(store, 1)
        await store.create_topic("t", 6, 3)
        before = await wait_for(store, lambda s: s.topic_complete("t"))
        scope.cancel()  # no controller while broker 3 restarts
        await wait_for(store, lambda s: s.controller is None)
        brokers[3].crash()
        restarted = await h.broker(store, 3)  # waits until the old registration lapsed
        assert restarted.registration.broker_epoch > brokers[3].registration.broker_epoch
        assert store.snapshot().partitions["t"] == before.partitions["t"]
        # the restarted broker does not resume the leaderships of its previous incarnation
        assert any(state.leader == 3 for state in before.partitions["t"].values())
        for p in before.partitions["t"]:
            assert not store.snapshot().is_leader("t", p, 3, restarted.registration.broker_epoch)
        await h.controller(store, 2)
        after = await wait_for(
            store, lambda s: all(3 not in st.isr for st in s.partitions["t"].values()), timeout=15
        )
        for p, old in before.partitions["t"].items():
            new = after.partitions["t"][p]
            if old.leader == 3:
                assert new.leader == next(b for b in old.replicas if b != 3)
                assert new.leader_epoch == old.leader_epoch + 1
            else:
                assert new.leader == old.leader


# ---- a watch that silently stops delivering


class FreezableProxy:
    """A TCP relay to etcd that can stop relaying without closing anything, like a partitioned link."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frozen = False
        self.port = 0

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._relay_connection, listeners)

    async def _relay_connection(self, client: trio.SocketStream) -> None:
        try:
            server = await trio.open_tcp_stream("127.0.0.1", self.target_port)
        except OSError:
            return
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, client, server)
            nursery.start_soon(self._pump, server, client)

    async def _pump(self, source: trio.SocketStream, sink: trio.SocketStream) -> None:
        try:
            while data := await source.receive_some(65536):
                while self.frozen:  # noqa: ASYNC110
                    await trio.sleep(0.05)
                await sink.send_all(data)
        except trio.BrokenResourceError:
            pass


@pytest.mark.trio
async def test_stuck_watch_is_restarted_on_another_endpoint(etcd: EtcdProcess) -> None:
    async with trio.open_nursery() as nursery:
        proxy = FreezableProxy(etcd.client_port)
        await nursery.start(proxy.run)
        client = EtcdClient([f"http://127.0.0.1:{proxy.port}", etcd.endpoint], request_timeout=1)
        store = MetadataStore(client, "test", watch_check_interval=0.3)
        await nursery.start(store.run)
        async with EtcdClient.from_url(etcd.url) as direct:
            topic = TopicMetadata("a", uuid.uuid4(), 1, 1)
            await direct.put(store.keys.topic("a"), topic.to_json())
            await wait_for(store, lambda s: "a" in s.topics, timeout=5)
            proxy.frozen = True
            await direct.put(store.keys.topic("b"), replace(topic, name="b").to_json())
            await wait_for(store, lambda s: "b" in s.topics, timeout=15)
            await direct.delete(store.keys.topic("a"))
            await wait_for(store, lambda s: "a" not in s.topics, timeout=5)
        nursery.cancel_scope.cancel()
    await client.aclose()


# ---- a broker process's view: run_cluster_member


@pytest.mark.trio
async def test_cluster_members(etcd: EtcdProcess) -> None:
    url = etcd.url + "/members"
    async with trio.open_nursery() as nursery:
        scopes = {}
        members = {}
        for node_id in (1, 2, 3):
            scope = trio.CancelScope()

            async def run(
                node_id: int, scope: trio.CancelScope, task_status: trio.TaskStatus[ClusterMember]
            ) -> None:
                with scope:
                    await run_cluster_member(
                        url,
                        node_id,
                        "127.0.0.1",
                        9000 + node_id,
                        session_timeout=TTL,
                        task_status=task_status,
                    )

            members[node_id] = await nursery.start(run, node_id, scope)
            scopes[node_id] = scope
        store = members[1].store
        await wait_for(store, lambda s: len(s.brokers) == 3 and s.controller is not None)
        await store.create_topic("orders", 3, 3)
        snapshot = await wait_for(members[3].store, lambda s: s.topic_complete("orders"))
        controller_id = snapshot.controller.node_id if snapshot.controller else 0
        assert [m.controller.controller_epoch is not None for m in members.values()].count(True) == 1
        # stop the controller's process cleanly: another member takes over and moves its leaderships
        scopes[controller_id].cancel()
        survivor = members[1 if controller_id != 1 else 2].store
        after = await wait_for(
            survivor,
            lambda s: (
                s.controller is not None
                and s.controller.node_id != controller_id
                and all(st.leader != controller_id for st in s.partitions["orders"].values())
            ),
        )
        assert controller_id not in after.brokers
        nursery.cancel_scope.cancel()
