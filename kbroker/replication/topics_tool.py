"""`kbroker topics`: describe topics like kafka-topics.sh, from a Metadata request over a plain socket.

    kbroker topics --bootstrap 127.0.0.1:9092 --describe [--topic NAME]
    kbroker topics --bootstrap 127.0.0.1:9092 --describe --under-replicated-partitions
    kbroker topics --bootstrap 127.0.0.1:9092 --list

`--under-replicated-partitions` prints only partitions whose ISR is smaller than their replica set (a follower is
catching up, or a replica is down); `--unavailable-partitions` only those without a live leader. The ISR shown is
the cluster's (every node answers Metadata from the same etcd metadata), so any node can be asked.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from kbroker.replication.client import (
    METADATA_VERSION,
    BrokerClientError,
    SyncBrokerClient,
    parse_host_port,
)
from protocol.errors import ErrorCode
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.metadata_response import MetadataResponse


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def unavailable(self) -> bool:
        return self.leader < 0


@dataclass(frozen=True, slots=True)
class TopicDescription:
    name: str
    topic_id: uuid.UUID
    error_code: int
    partitions: tuple[PartitionDescription, ...]


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    cluster_id: str | None
    controller_id: int
    brokers: dict[int, tuple[str, int]]
    topics: dict[str, TopicDescription]


def describe(
    bootstrap: str, topics: Sequence[str] | None = None, *, timeout_s: float = 10.0
) -> ClusterDescription:
    """Metadata from the first bootstrap server (HOST:PORT[,HOST:PORT...]) that answers."""
    last_error: Exception | None = None
    for server in bootstrap.split(","):
        host, port = parse_host_port(server)
        try:
            with SyncBrokerClient(host, port, timeout=timeout_s) as client:
                # A null topic list asks for every topic (the generated class types the field as a list).
                wanted = None if topics is None else [MetadataRequestTopic(name=t) for t in topics]
                request = MetadataRequest(
                    topics=cast(list[MetadataRequestTopic], wanted), allow_auto_topic_creation=False
                )
                response: MetadataResponse = client.request(request, METADATA_VERSION)
        except BrokerClientError as exc:
            last_error = exc
            continue
        return _description(response)
    raise BrokerClientError(f"no bootstrap server answered: {last_error}")


def _description(response: MetadataResponse) -> ClusterDescription:
    topics = {}
    for t in response.topics:
        name = t.name or ""
        partitions = tuple(
            sorted(
                (
                    PartitionDescription(
                        topic=name,
                        partition=p.partition_index,
                        leader=p.leader_id,
                        leader_epoch=p.leader_epoch,
                        replicas=tuple(p.replica_nodes),
                        isr=tuple(p.isr_nodes),
                        offline_replicas=tuple(p.offline_replicas),
                        error_code=p.error_code,
                    )
                    for p in t.partitions
                ),
                key=lambda p: p.partition,
            )
        )
        topics[name] = TopicDescription(name, t.topic_id, t.error_code, partitions)
    return ClusterDescription(
        cluster_id=response.cluster_id,
        controller_id=response.controller_id,
        brokers={b.node_id: (b.host, b.port) for b in response.brokers},
        topics=topics,
    )


def _ids(nodes: Sequence[int]) -> str:
    return ",".join(str(n) for n in nodes)


def partition_line(p: PartitionDescription) -> str:
    line = (
        f"\tTopic: {p.topic}\tPartition: {p.partition}\tLeader: {p.leader if p.leader >= 0 else 'none'}"
        f"\tLeaderEpoch: {p.leader_epoch}\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}"
    )
    if p.offline_replicas:
        line += f"\tOffline: {_ids(p.offline_replicas)}"
    return line


def build_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--bootstrap", "--bootstrap-server", required=True, help="HOST:PORT[,HOST:PORT...]")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--describe", action="store_true", help="describe topics (the default)")
    action.add_argument("--list", action="store_true", help="list topic names")
    parser.add_argument("--topic", action="append", help="only this topic (repeatable)")
    parser.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="only partitions whose ISR is smaller than their replica set",
    )
    parser.add_argument(
        "--unavailable-partitions", action="store_true", help="only partitions without a live leader"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        cluster = describe(args.bootstrap, args.topic)
    except (BrokerClientError, ValueError) as exc:
        print(f"kbroker topics: {exc}", file=sys.stderr)
        return 1
    status = 0
    names = sorted(cluster.topics)
    if args.list:
        for name in names:
            if cluster.topics[name].error_code == ErrorCode.NONE:
                print(name)
        return 0
    filtered = args.under_replicated_partitions or args.unavailable_partitions
    for name in names:
        topic = cluster.topics[name]
        if topic.error_code != ErrorCode.NONE:
            print(f"Error for topic {name}: {_error_name(topic.error_code)}", file=sys.stderr)
            status = 1
            continue
        if filtered:
            for p in topic.partitions:
                if (args.under_replicated_partitions and p.under_replicated) or (
                    args.unavailable_partitions and p.unavailable
                ):
                    print(partition_line(p))
            continue
        replication_factor = len(topic.partitions[0].replicas) if topic.partitions else 0
        print(
            f"Topic: {name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(topic.partitions)}"
            f"\tReplicationFactor: {replication_factor}"
        )
        for p in topic.partitions:
            print(partition_line(p))
    return status


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"
