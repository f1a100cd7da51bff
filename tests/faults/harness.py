"""A kbroker cluster whose members each live in their own network namespace (tests/faults/netns.py): etcd and every
node on a 127.77.0.x address of its own (port 2379 and 9092), the test's clients in a namespace of their own. The
links between any two of them can then be cut, made lossy or slow, in one direction or both.

    with fault_cluster(tmp_path, request) as cluster:          # the calling thread runs in the clients' namespace
        cluster.create_topic("t", partitions=3, replication_factor=3, configs={"min.insync.replicas": "2"})
        cluster.net.isolate("n1", from_=["n2", "n3"])           # node 1 cut off from its peers, not from etcd
        ...
        cluster.net.heal()

Everything the context starts is stopped by pid and every namespace deleted on exit, also when the test fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cluster_fixture import DEFAULT_OVERRIDES, Cluster
from tests.conftest import missing_tool
from tests.etcd_process import ETCD_BINARY, EtcdProcess
from tests.faults import netns

BROKER_PORT = 9092


def member(node_id: int) -> str:
    """The network member name of a node."""
    return f"n{node_id}"


class FaultCluster(Cluster):
    """A Cluster (tests/cluster_fixture.py) in namespaces, with the network at `net`."""

    net: netns.Network

    def member(self, node_id: int) -> str:
        return member(node_id)

    def peers(self, node_id: int) -> list[str]:
        return [member(i) for i in self.nodes if i != node_id]


@contextmanager
def fault_cluster(
    root: Path,
    request: pytest.FixtureRequest | None = None,
    *,
    size: int = 3,
    overrides: Mapping[str, str] | None = None,
    base_overrides: Mapping[str, str] = DEFAULT_OVERRIDES,
    start: bool = True,
) -> Iterator[FaultCluster]:
    """etcd and `size` nodes, each in a namespace of its own; the caller's thread in the clients' namespace."""
    reason = netns.available()
    if reason is not None:
        missing_tool(reason)
    if ETCD_BINARY is None:
        missing_tool("etcd is not installed (apt package etcd-server)")
    members = ["etcd", *(member(i) for i in range(1, size + 1)), "client"]
    with netns.Network(members) as net, net.entered("client"):
        (root / "etcd").mkdir(parents=True, exist_ok=True)
        etcd = EtcdProcess(root / "etcd", host=net.address("etcd"), command_prefix=net.exec_prefix("etcd"))
        cluster: FaultCluster | None = None
        try:
            etcd.start()
            cluster = FaultCluster(root, etcd, size, overrides, request, base_overrides=base_overrides)
            cluster.net = net
            for node_id, node in cluster.nodes.items():
                node.host = net.address(member(node_id))
                node.port = BROKER_PORT
                node.command_prefix = net.exec_prefix(member(node_id))
            if start:
                cluster.start()
            yield cluster
        finally:
            if cluster is not None:
                cluster.stop()
            etcd.stop()
