"""A blocking Kafka client over our own codec, for the `kbroker topic` / `kbroker group` commands and the web console.

One `KafkaSession` holds a connection to the bootstrap server and one to each broker it has had to reach: Produce,
Fetch and ListOffsets go to each partition's leader, the group APIs to the group's coordinator (FindCoordinator),
ListGroups to every broker, as Kafka's own tools do. Versions are ones both kbroker and Apache Kafka 3.9/4.x serve,
so the same commands work against either. Errors come back as `ToolError` with Kafka's error name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from kbroker.replication.client import BrokerClientError, SyncBrokerClient, parse_host_port
from protocol import compression as codecs
from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.delete_topics_request import DeleteTopicsRequest
from protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.list_groups_request import ListGroupsRequest
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch, decode_records, iter_batches

T = TypeVar("T")

EARLIEST = -2
LATEST = -1
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4

# Versions served by kbroker and by Apache Kafka 3.9 and 4.x alike.
V_METADATA = 12
V_CREATE_TOPICS = 5
V_DELETE_TOPICS = 4
V_DESCRIBE_CONFIGS = 4
V_LIST_OFFSETS = 7
V_PRODUCE = 9
V_FETCH = 12
V_FIND_COORDINATOR = 3
V_LIST_GROUPS = 4
V_DESCRIBE_GROUPS = 5
V_OFFSET_FETCH = 7
V_OFFSET_COMMIT = 8


class ToolError(Exception):
    """A request failed: the broker answered an error, or no broker could be reached."""


class RetriableError(ToolError):
    """An error a client waits out (a coordinator still loading, a leader moving): retried until the timeout."""


RETRIABLE = frozenset({
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
})  # fmt: skip
RETRY_BACKOFF_S = 0.1


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _check(code: int, what: str, message: str | None = None) -> None:
    if code != ErrorCode.NONE:
        kind = RetriableError if code in RETRIABLE else ToolError
        raise kind(f"{what}: {error_name(code)}" + (f" ({message})" if message else ""))


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    topic_id: str
    is_internal: bool
    error_code: int
    partitions: tuple[PartitionInfo, ...]


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    cluster_id: str | None
    controller_id: int
    brokers: Mapping[int, tuple[str, int, str | None]]
    topics: Mapping[str, TopicInfo]


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    name: str
    value: str | None
    source: int
    is_default: bool
    read_only: bool
    is_sensitive: bool


@dataclass(frozen=True, slots=True)
class Message:
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


@dataclass(frozen=True, slots=True)
class MemberInfo:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class GroupInfo:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    coordinator: int
    members: tuple[MemberInfo, ...]


@dataclass(frozen=True, slots=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int
    log_end: int
    log_start: int
    member_id: str | None = None
    client_id: str | None = None
    host: str | None = None

    @property
    def lag(self) -> int | None:
        return None if self.committed < 0 else max(self.log_end - self.committed, 0)


class KafkaSession:
    """`with KafkaSession("127.0.0.1:9092") as kafka: kafka.cluster()`."""

    def __init__(self, bootstrap: str, *, timeout_s: float = 10.0, client_id: str = "kbroker-cli") -> None:
        self.bootstrap = bootstrap
        self.timeout_s = timeout_s
        self.client_id = client_id
        self._bootstrap: SyncBrokerClient | None = None
        self._brokers: dict[int, tuple[str, int]] = {}
        self._clients: dict[int, SyncBrokerClient] = {}

    # ---- connections -----------------------------------------------------------------------------------------

    def __enter__(self) -> KafkaSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        if self._bootstrap is not None:
            self._bootstrap.close()
            self._bootstrap = None

    def _any(self) -> SyncBrokerClient:
        if self._bootstrap is not None:
            return self._bootstrap
        last: Exception | None = None
        for server in self.bootstrap.split(","):
            try:
                host, port = parse_host_port(server)
                self._bootstrap = SyncBrokerClient(
                    host, port, timeout=self.timeout_s, client_id=self.client_id
                )
                return self._bootstrap
            except (BrokerClientError, ValueError) as exc:
                last = exc
        raise ToolError(f"no bootstrap server of {self.bootstrap} answered: {last}")

    def _node(self, node_id: int) -> SyncBrokerClient:
        client = self._clients.get(node_id)
        if client is not None:
            return client
        if node_id not in self._brokers:
            self.cluster()
        if node_id not in self._brokers:
            raise ToolError(f"broker {node_id} is not in the cluster's metadata")
        host, port = self._brokers[node_id]
        try:
            client = SyncBrokerClient(host, port, timeout=self.timeout_s, client_id=self.client_id)
        except BrokerClientError as exc:
            raise ToolError(str(exc)) from exc
        self._clients[node_id] = client
        return client

    def _retrying(self, work: Callable[[], T]) -> T:
        """`work()`, again after a retriable error (fresh metadata, a new coordinator) until the timeout."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return work()
            except RetriableError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(RETRY_BACKOFF_S)

    def _call(self, client: SyncBrokerClient, message: object, version: int) -> Any:
        try:
            return client.request(message, version)
        except BrokerClientError as exc:
            # The connection is unusable now: drop it so the next call reconnects.
            self.close()
            raise ToolError(str(exc)) from exc

    # ---- topics ----------------------------------------------------------------------------------------------

    def cluster(self, topics: Sequence[str] | None = None) -> ClusterInfo:
        """Metadata: brokers, controller and topics (every topic when `topics` is None)."""
        wanted = None if topics is None else [MetadataRequestTopic(name=t) for t in topics]
        request = MetadataRequest(
            topics=cast(list[MetadataRequestTopic], wanted), allow_auto_topic_creation=False
        )
        response = self._call(self._any(), request, V_METADATA)
        self._brokers = {b.node_id: (b.host, b.port) for b in response.brokers}
        out: dict[str, TopicInfo] = {}
        for t in response.topics:
            partitions = tuple(
                sorted(
                    (
                        PartitionInfo(
                            p.partition_index,
                            p.leader_id,
                            p.leader_epoch,
                            tuple(p.replica_nodes),
                            tuple(p.isr_nodes),
                            tuple(p.offline_replicas),
                            p.error_code,
                        )
                        for p in t.partitions
                    ),
                    key=lambda p: p.partition,
                )
            )
            out[t.name or ""] = TopicInfo(
                t.name or "", str(t.topic_id), t.is_internal, t.error_code, partitions
            )
        return ClusterInfo(
            response.cluster_id,
            response.controller_id,
            {b.node_id: (b.host, b.port, b.rack) for b in response.brokers},
            out,
        )

    def topic(self, name: str) -> TopicInfo:
        info = self.cluster([name]).topics.get(name)
        if info is None:
            raise ToolError(f"topic {name}: UNKNOWN_TOPIC_OR_PARTITION")
        _check(info.error_code, f"topic {name}")
        return info

    def create_topic(
        self, name: str, partitions: int = -1, replication_factor: int = -1, configs: Mapping[str, str] = {}
    ) -> None:
        request = CreateTopicsRequest(
            topics=[
                CreatableTopic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=replication_factor,
                    configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
                )
            ],
            timeout_ms=int(self.timeout_s * 1000),
        )
        response = self._call(self._controller(), request, V_CREATE_TOPICS)
        for result in response.topics:
            _check(result.error_code, f"cannot create topic {result.name}", result.error_message)

    def delete_topic(self, name: str) -> None:
        request = DeleteTopicsRequest(topic_names=[name], timeout_ms=int(self.timeout_s * 1000))
        response = self._call(self._controller(), request, V_DELETE_TOPICS)
        for result in response.responses:
            _check(result.error_code, f"cannot delete topic {result.name}", result.error_message)

    def _controller(self) -> SyncBrokerClient:
        controller = self.cluster([]).controller_id
        return self._node(controller) if controller >= 0 else self._any()

    def topic_configs(self, name: str) -> list[ConfigEntry]:
        request = DescribeConfigsRequest(
            resources=[DescribeConfigsResource(resource_type=TOPIC_RESOURCE, resource_name=name)]
        )
        response = self._call(self._any(), request, V_DESCRIBE_CONFIGS)
        (result,) = response.results
        _check(result.error_code, f"configs of topic {name}", result.error_message)
        return [
            ConfigEntry(c.name, c.value, c.config_source, c.config_source == 5, c.read_only, c.is_sensitive)
            for c in result.configs
        ]

    # ---- offsets ---------------------------------------------------------------------------------------------

    def _list_offsets(self, topic: str, partitions: Iterable[int], timestamp: int) -> dict[int, int]:
        """The offset of each partition at `timestamp` (EARLIEST, LATEST or milliseconds): -1 where no record is
        that recent."""
        info = self.topic(topic)
        leaders = {p.partition: p.leader for p in info.partitions}
        by_leader: dict[int, list[int]] = {}
        for partition in partitions:
            if partition not in leaders:
                raise ToolError(f"{topic} has no partition {partition}")
            by_leader.setdefault(leaders[partition], []).append(partition)
        out: dict[int, int] = {}
        for leader, parts in by_leader.items():
            if leader < 0:
                raise RetriableError(f"{topic} partitions {parts} have no leader")
            request = ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    ListOffsetsTopic(
                        name=topic,
                        partitions=[
                            ListOffsetsPartition(partition_index=p, timestamp=timestamp) for p in parts
                        ],
                    )
                ],
            )
            response = self._call(self._node(leader), request, V_LIST_OFFSETS)
            for t in response.topics:
                for p in t.partitions:
                    _check(p.error_code, f"offsets of {topic}-{p.partition_index}")
                    out[p.partition_index] = p.offset
        return out

    # ---- records ---------------------------------------------------------------------------------------------

    def _produce(
        self,
        topic: str,
        partition: int,
        records: Sequence[tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]],
        *,
        acks: int = -1,
        compression: int = codecs.NONE,
    ) -> int:
        """Write (key, value, headers) records as one batch; the base offset the broker gave them."""
        info = self.topic(topic)
        leader = next((p.leader for p in info.partitions if p.partition == partition), None)
        if leader is None:
            raise ToolError(f"{topic} has no partition {partition}")
        if leader < 0:
            raise RetriableError(f"{topic}-{partition} has no leader")
        now = int(time.time() * 1000)
        batch = build_batch(
            [Record(i, now, key, value, headers) for i, (key, value, headers) in enumerate(records)],
            compression=compression,
        )
        request = ProduceRequest(
            acks=acks,
            timeout_ms=int(self.timeout_s * 1000),
            topic_data=[
                TopicProduceData(
                    name=topic, partition_data=[PartitionProduceData(index=partition, records=bytes(batch))]
                )
            ],
        )
        response = self._call(self._node(leader), request, V_PRODUCE)
        (p,) = response.responses[0].partition_responses
        _check(p.error_code, f"produce to {topic}-{partition}", p.error_message)
        return int(p.base_offset)

    def _fetch(
        self, topic: str, partition: int, offset: int, *, max_bytes: int = 1 << 20, max_wait_ms: int = 0
    ) -> tuple[list[Message], int]:
        """Records from `offset` (whole batches, so some may come before it: they are dropped) and the high
        watermark."""
        info = self.topic(topic)
        leader = next((p.leader for p in info.partitions if p.partition == partition), None)
        if leader is None:
            raise ToolError(f"{topic} has no partition {partition}")
        if leader < 0:
            raise RetriableError(f"{topic}-{partition} has no leader")
        request = FetchRequest(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=max_bytes,
            isolation_level=0,
            topics=[
                FetchTopic(
                    topic=topic,
                    partitions=[
                        FetchPartition(
                            partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes
                        )
                    ],
                )
            ],
        )
        response = self._call(self._node(leader), request, V_FETCH)
        _check(response.error_code, f"fetch from {topic}-{partition}")
        (data,) = response.responses[0].partitions
        _check(data.error_code, f"fetch from {topic}-{partition} at offset {offset}")
        messages: list[Message] = []
        for batch in iter_batches(data.records or b""):
            if batch.is_control:
                continue
            for r in decode_records(batch):
                if r.offset >= offset:
                    messages.append(
                        Message(topic, partition, r.offset, r.timestamp, r.key, r.value, r.headers)
                    )
        return messages, int(data.high_watermark)

    # ---- groups ----------------------------------------------------------------------------------------------

    def coordinator(self, group: str) -> int:
        response = self._call(self._any(), FindCoordinatorRequest(key=group, key_type=0), V_FIND_COORDINATOR)
        _check(response.error_code, f"coordinator of group {group}", response.error_message)
        return int(response.node_id)

    def list_groups(self) -> list[tuple[str, str, str, int]]:
        """(group id, state, protocol type, coordinator) of every group on every broker."""
        self.cluster([])
        out: list[tuple[str, str, str, int]] = []
        for node_id in sorted(self._brokers):
            response = self._call(self._node(node_id), ListGroupsRequest(), V_LIST_GROUPS)
            _check(response.error_code, f"list groups on broker {node_id}")
            out.extend((g.group_id, g.group_state, g.protocol_type, node_id) for g in response.groups)
        return sorted(out)

    def _describe_group(self, group: str) -> GroupInfo:
        node_id = self.coordinator(group)
        response = self._call(self._node(node_id), DescribeGroupsRequest(groups=[group]), V_DESCRIBE_GROUPS)
        (g,) = response.groups
        _check(g.error_code, f"group {group}")
        members = tuple(
            MemberInfo(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                _assignment(m.member_assignment) if g.protocol_type == "consumer" else (),
            )
            for m in g.members
        )
        return GroupInfo(g.group_id, g.group_state, g.protocol_type, g.protocol_data, node_id, members)

    def _committed(self, group: str, topics: Sequence[str] | None = None) -> dict[tuple[str, int], int]:
        node_id = self.coordinator(group)
        wanted = (
            None
            if topics is None
            else [OffsetFetchRequestTopic(name=t, partition_indexes=[]) for t in topics]
        )
        if topics is not None:
            assert wanted is not None
            for t, request_topic in zip(topics, wanted, strict=True):
                request_topic.partition_indexes = [p.partition for p in self.topic(t).partitions]
        request = OffsetFetchRequest(group_id=group, topics=cast(list[OffsetFetchRequestTopic], wanted))
        response = self._call(self._node(node_id), request, V_OFFSET_FETCH)
        _check(response.error_code, f"committed offsets of group {group}")
        out = {}
        for t in response.topics:
            for p in t.partitions:
                _check(p.error_code, f"committed offset of group {group} on {t.name}-{p.partition_index}")
                out[(t.name, p.partition_index)] = int(p.committed_offset)
        return out

    def lag(self, group: str) -> tuple[GroupInfo, list[PartitionLag]]:
        """The group, and for every partition it committed or is assigned: committed offset, log end, lag."""
        info = self.describe_group(group)
        owners = {(t, p): m for m in info.members for t, p in m.assignment}
        committed = self.committed(group)
        keys = set(committed) | set(owners)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in keys:
            by_topic.setdefault(topic, []).append(partition)
        out: list[PartitionLag] = []
        for topic, parts in sorted(by_topic.items()):
            try:
                ends = self.list_offsets(topic, parts, LATEST)
                starts = self.list_offsets(topic, parts, EARLIEST)
            except ToolError:
                ends = starts = {}
            for partition in sorted(parts):
                member = owners.get((topic, partition))
                out.append(
                    PartitionLag(
                        topic,
                        partition,
                        committed.get((topic, partition), -1),
                        ends.get(partition, -1),
                        starts.get(partition, -1),
                        member.member_id if member else None,
                        member.client_id if member else None,
                        member.client_host if member else None,
                    )
                )
        return info, out

    def _commit(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit offsets outside any generation (what kafka-consumer-groups --reset-offsets does): Kafka accepts
        it only while the group has no members."""
        node_id = self.coordinator(group)
        topics: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            topics.setdefault(topic, []).append(
                OffsetCommitRequestPartition(partition_index=partition, committed_offset=offset)
            )
        request = OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()],
        )
        response = self._call(self._node(node_id), request, V_OFFSET_COMMIT)
        for t in response.topics:
            for p in t.partitions:
                _check(p.error_code, f"commit of group {group} on {t.name}-{p.partition_index}")

    # Retried on coordinator and leadership moves, as a Kafka client waits them out.

    def list_offsets(self, topic: str, partitions: Iterable[int], timestamp: int) -> dict[int, int]:
        """The offset of each partition at `timestamp` (EARLIEST, LATEST or milliseconds): -1 where no record is
        that recent."""
        parts = list(partitions)
        return self._retrying(lambda: self._list_offsets(topic, parts, timestamp))

    def produce(
        self,
        topic: str,
        partition: int,
        records: Sequence[tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]],
        *,
        acks: int = -1,
        compression: int = codecs.NONE,
    ) -> int:
        """Write (key, value, headers) records as one batch; the base offset the broker gave them."""
        return self._retrying(
            lambda: self._produce(topic, partition, records, acks=acks, compression=compression)
        )

    def fetch(
        self, topic: str, partition: int, offset: int, *, max_bytes: int = 1 << 20, max_wait_ms: int = 0
    ) -> tuple[list[Message], int]:
        """Records from `offset` (whole batches are read: earlier records in them are dropped) and the high
        watermark."""
        return self._retrying(
            lambda: self._fetch(topic, partition, offset, max_bytes=max_bytes, max_wait_ms=max_wait_ms)
        )

    def describe_group(self, group: str) -> GroupInfo:
        return self._retrying(lambda: self._describe_group(group))

    def committed(self, group: str, topics: Sequence[str] | None = None) -> dict[tuple[str, int], int]:
        return self._retrying(lambda: self._committed(group, topics))

    def commit(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit offsets outside any generation (what kafka-consumer-groups --reset-offsets does): Kafka accepts
        it only while the group has no members."""
        self._retrying(lambda: self._commit(group, offsets))


def _assignment(data: bytes) -> tuple[tuple[str, int], ...]:
    """The topic-partitions of a ConsumerProtocol assignment (any version: they come first)."""
    try:
        view = memoryview(data)
        pos = 2  # version
        (count,) = _i32(view, pos)
        pos += 4
        out: list[tuple[str, int]] = []
        for _ in range(max(count, 0)):
            length = int.from_bytes(view[pos : pos + 2], "big", signed=True)
            pos += 2
            topic = bytes(view[pos : pos + length]).decode()
            pos += length
            (n,) = _i32(view, pos)
            pos += 4
            for _ in range(n):
                out.append((topic, _i32(view, pos)[0]))
                pos += 4
        return tuple(out)
    except (ValueError, IndexError, UnicodeDecodeError):
        return ()


def _i32(view: memoryview, pos: int) -> tuple[int]:
    if pos + 4 > len(view):
        raise ValueError("short assignment")
    return (int.from_bytes(view[pos : pos + 4], "big", signed=True),)
