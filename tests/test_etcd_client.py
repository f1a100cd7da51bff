"""kbroker.cluster.etcd against a real etcd (the JSON gateway)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio

from kbroker.cluster.etcd import (
    Compacted,
    Delete,
    EtcdClient,
    EtcdUnavailable,
    Get,
    LeaseNotFound,
    Put,
    RangeResult,
    key_absent,
    mod_revision_is,
    parse_etcd_url,
    prefix_range_end,
    value_is,
)
from tests.broker_process import free_port
from tests.etcd_process import EtcdProcess, running_etcd

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def etcd() -> Iterator[EtcdProcess]:
    with running_etcd() as server:
        yield server


def test_parse_etcd_url() -> None:
    assert parse_etcd_url("etcd://a:1,b:2") == (["http://a:1", "http://b:2"], None)
    assert parse_etcd_url("etcd://a/kbroker/c1") == (["http://a:2379"], "kbroker/c1")
    with pytest.raises(ValueError, match="etcd://"):
        parse_etcd_url("http://a:1")


def test_prefix_range_end() -> None:
    assert prefix_range_end(b"/a/") == b"/a0"
    assert prefix_range_end(b"a\xff") == b"b"
    assert prefix_range_end(b"\xff") == b"\x00"


@pytest.mark.trio
async def test_put_get_delete(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        assert await client.get(b"/k") is None
        put = await client.put(b"/k", b"\x00\xffvalue")
        kv = await client.get(b"/k")
        assert kv is not None
        assert kv.value == b"\x00\xffvalue"
        assert kv.create_revision == kv.mod_revision == put.revision
        assert kv.version == 1
        second = await client.put(b"/k", b"v2", prev_kv=True)
        assert second.prev_kv is not None
        assert second.prev_kv.value == b"\x00\xffvalue"
        await client.put(b"/k/child", b"c")
        await client.put(b"/l", b"other")
        listed = await client.get_prefix(b"/k")
        assert [kv.key for kv in listed.kvs] == [b"/k", b"/k/child"]
        deleted = await client.delete(b"/k", prefix=True)
        assert deleted.deleted == 2
        assert (await client.get_prefix(b"/k")).kvs == []
        assert (await client.get(b"/l")) is not None


@pytest.mark.trio
async def test_a_closed_client_fails_as_unavailable(etcd: EtcdProcess) -> None:
    client = EtcdClient.from_url(etcd.url)
    await client.put(b"/k", b"v")
    await client.aclose()
    # As an unreachable etcd (which every caller handles), not httpx's RuntimeError (which crashed a broker whose
    # AlterPartition was in flight when it lost its registration and replaced its client).
    with pytest.raises(EtcdUnavailable):
        await client.txn([key_absent(b"/x")], [Put(b"/x", b"1")], [Get(b"/x")])


@pytest.mark.trio
async def test_txn_compare_and_swap(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        created = await client.txn([key_absent(b"/x")], [Put(b"/x", b"1")], [Get(b"/x")])
        assert created.succeeded
        again = await client.txn([key_absent(b"/x")], [Put(b"/x", b"2")], [Get(b"/x")])
        assert not again.succeeded
        current = again.responses[0]
        assert isinstance(current, RangeResult)
        assert current.kvs[0].value == b"1"
        stale = await client.txn([mod_revision_is(b"/x", created.revision - 1)], [Put(b"/x", b"3")])
        assert not stale.succeeded
        fresh = await client.txn(
            [mod_revision_is(b"/x", created.revision), value_is(b"/x", b"1")],
            [Put(b"/x", b"4"), Delete(b"/y")],
        )
        assert fresh.succeeded
        kv = await client.get(b"/x")
        assert kv is not None
        assert kv.value == b"4"


@pytest.mark.trio
async def test_lease_grant_keepalive_revoke(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        lease = await client.lease_grant(5)
        assert lease.ttl == 5
        await client.put(b"/leased", b"v", lease=lease.id)
        kv = await client.get(b"/leased")
        assert kv is not None
        assert kv.lease == lease.id
        assert await client.lease_keepalive(lease.id) == 5
        assert 0 < await client.lease_time_to_live(lease.id) <= 5
        await client.lease_revoke(lease.id)
        assert await client.get(b"/leased") is None
        with pytest.raises(LeaseNotFound):
            await client.lease_keepalive(lease.id)
        assert await client.lease_time_to_live(lease.id) == -1
        await client.lease_revoke(lease.id)  # revoking twice is harmless


@pytest.mark.trio
async def test_lease_expiry_deletes_keys(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        lease = await client.lease_grant(2)
        await client.put(b"/ephemeral", b"v", lease=lease.id)
        with trio.fail_after(10):
            while await client.get(b"/ephemeral") is not None:  # noqa: ASYNC110
                await trio.sleep(0.2)
        with pytest.raises(LeaseNotFound):
            await client.lease_keepalive(lease.id)


@pytest.mark.trio
async def test_watch_prefix(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        first = await client.put(b"/w/before", b"0")
        async with client.watch(b"/w/", prefix=True, prev_kv=True) as stream:
            await client.put(b"/w/a", b"1")
            await client.put(b"/outside", b"x")
            await client.delete(b"/w/a")
            seen: list[tuple[str, bytes, bytes | None]] = []
            async for response in stream:
                seen.extend(
                    (e.type, e.kv.key, e.prev_kv.value if e.prev_kv else None) for e in response.events
                )
                if len(seen) == 2:
                    break
        assert seen == [("PUT", b"/w/a", None), ("DELETE", b"/w/a", b"1")]
        # A watch from an old revision replays history.
        async with client.watch(b"/w/", prefix=True, start_revision=first.revision) as stream:
            response = await stream.__anext__()
            assert response.events[0].kv.key == b"/w/before"


@pytest.mark.trio
async def test_watch_compacted_revision(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client:
        await client.put(b"/c", b"1")
        latest = await client.put(b"/c", b"2")
        await client._call("/v3/kv/compaction", {"revision": str(latest.revision)})
        with pytest.raises(Compacted) as info:
            async with client.watch(b"/c", start_revision=1) as stream:
                await stream.__anext__()
        assert info.value.compact_revision == latest.revision
        with pytest.raises(Compacted):
            await client.range(b"/c", revision=1)


@pytest.mark.trio
async def test_failover_to_second_endpoint(etcd: EtcdProcess) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    async with EtcdClient([dead, etcd.endpoint], request_timeout=2) as client:
        await client.put(b"/f", b"1")
        kv = await client.get(b"/f")
        assert kv is not None
        assert kv.value == b"1"
        async with client.watch(b"/f") as stream:
            await client.put(b"/f", b"2")
            response = await stream.__anext__()
            assert response.events[0].kv.value == b"2"


@pytest.mark.trio
async def test_unavailable_when_no_endpoint_answers() -> None:
    async with EtcdClient([f"http://127.0.0.1:{free_port()}"], request_timeout=1) as client:
        with pytest.raises(EtcdUnavailable):
            await client.get(b"/x")


@pytest.mark.trio
async def test_watch_breaks_when_server_stops(etcd: EtcdProcess) -> None:
    async with EtcdClient.from_url(etcd.url) as client, client.watch(b"/z") as stream:
        etcd.stop()
        with pytest.raises(EtcdUnavailable), trio.fail_after(10):
            await stream.__anext__()
