"""Everything a broker process runs to take part in the cluster, from ``--node-id N --metadata etcd://...``:
the metadata cache, its broker registration, and a controller candidate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import trio

from kbroker.cluster.controller import Controller
from kbroker.cluster.store import MetadataStore
from kbroker.metadata.image import BrokerRegistration


@dataclass
class ClusterMember:
    store: MetadataStore
    registration: BrokerRegistration
    """This incarnation, with its broker_epoch."""
    controller: Controller


async def run_cluster_member(
    metadata_url: str,
    node_id: int,
    host: str,
    port: int,
    rack: str | None = None,
    *,
    session_timeout: int = 10,
    endpoints: Mapping[str, tuple[str, int]] | None = None,
    unclean_leader_election_default: bool = False,
    auto_leader_rebalance: bool = False,
    leader_imbalance_check_interval_s: float = 300.0,
    new_log_dir: bool = False,
    task_status: trio.TaskStatus[ClusterMember] = trio.TASK_STATUS_IGNORED,
) -> None:
    """``member = await nursery.start(run_cluster_member, url, node_id, host, port)``.

    Started once the cache holds the current metadata including this broker's registration. Runs until
    cancelled (then the registration and any controllership are revoked at once), or raises LeaseExpired if
    the registration was lost (etcd unreachable for session_timeout seconds, or the lease lapsed): the broker
    must then stop serving as this incarnation, since the controller has moved its leaderships away.
    """
    store = MetadataStore.from_url(metadata_url)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run)
            registration = BrokerRegistration(
                node_id, host, port, rack, endpoints=dict(endpoints or {}), new_log_dir=new_log_dir
            )
            registered: BrokerRegistration = await nursery.start(
                partial(store.register_broker, registration, ttl=session_timeout)
            )
            await store.wait_for_revision(registered.broker_epoch)
            controller = Controller(
                store,
                node_id,
                lease_ttl=session_timeout,
                unclean_leader_election_default=unclean_leader_election_default,
                auto_leader_rebalance=auto_leader_rebalance,
                leader_imbalance_check_interval_s=leader_imbalance_check_interval_s,
            )
            nursery.start_soon(controller.run)
            task_status.started(ClusterMember(store, registered, controller))
    finally:
        with trio.CancelScope(shield=True):
            await store.aclose()
