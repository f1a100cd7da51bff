"""The table: each row one request, built for a broker at a version, sent to both brokers at every version of its
API that both advertise (narrowed by `since`/`until` where the request cannot be said at a version).

Rows run in table order, each version against kbroker then Kafka, so both brokers see the same requests in the
same order: the rows that change state (CreateTopics, DeleteTopics, Produce, Metadata's auto-creation) come last,
on names of their own (`rd-ct-v5` for version 5's topic), and every row before them reads the world of world.py.

`known` names the differences from Kafka this row shows (compat/response_diff/known.py): any other difference
fails the row, and so does a known one the row no longer shows. `unordered` names lists (paths in the plain tree,
`[]` for "every item") whose order Kafka does not define (it iterates a hash map): they are sorted on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compat.response_diff.peer import UNKNOWN_TOPIC_ID, Peer
from compat.response_diff.world import (
    ASSIGNOR,
    COMMITS,
    COMPLETING_GROUP,
    CONFIGURED,
    CONFIGURED_CONFIGS,
    DELETED_GROUP,
    EMPTY,
    EMPTY_GROUP,
    EVERY_GROUP,
    IDEMPOTENT,
    LOG,
    LOG_END,
    MEMBER_TIMEOUT_MS,
    OFFSET_DELETE_GROUP,
    OFFSETS_TOPIC,
    PREPARING_GROUP,
    PRODUCE,
    PROTOCOL_TYPE,
    SMALL,
    SMALL_MAX_MESSAGE_BYTES,
    STABLE_GROUP,
    TOPIC_API_VERSIONS,
    UNKNOWN_GROUP,
    UNKNOWN_TOPIC,
    await_transaction_coordinator,
    batch_of_size,
    delete_by_id_topic,
    delete_group,
    delete_topic,
    leave_group,
)
from protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.alter_configs_request import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from protocol.messages.alter_partition_reassignments_request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.create_partitions_request import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from protocol.messages.delete_topics_request import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_cluster_request import DescribeClusterRequest
from protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.describe_log_dirs_request import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.describe_producers_request import DescribeProducersRequest
from protocol.messages.describe_producers_request import TopicRequest as DescribeProducersTopicRequest
from protocol.messages.describe_topic_partitions_request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from protocol.messages.elect_leaders_request import ElectLeadersRequest
from protocol.messages.elect_leaders_request import TopicPartitions as ElectTopicPartitions
from protocol.messages.end_txn_request import EndTxnRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic, ReplicaState
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.heartbeat_request import HeartbeatRequest
from protocol.messages.incremental_alter_configs_request import AlterableConfig as IncrementalAlterableConfig
from protocol.messages.incremental_alter_configs_request import (
    AlterConfigsResource as IncrementalAlterConfigsResource,
)
from protocol.messages.incremental_alter_configs_request import IncrementalAlterConfigsRequest
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups_request import ListGroupsRequest
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.list_partition_reassignments_request import ListPartitionReassignmentsRequest
from protocol.messages.list_transactions_request import ListTransactionsRequest
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_delete_request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from protocol.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.sync_group_request import SyncGroupRequest
from protocol.messages.write_txn_markers_request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from protocol.records import Record, build_batch
from tests.test_groups_support import subscription

Build = Callable[[int, Peer], Any]

UNORDERED_BY_API = {
    # Kafka gathers the topics asked for into a Scala Set and reads the partitions out of its metadata image's
    # hash map: neither order is defined (clients index both by name and number).
    "Metadata": ("topics", "topics[].partitions"),
    # Kafka lists a resource's configs out of a hash map (clients index them by name).
    "DescribeConfigs": ("results[].configs",),
    "CreateTopics": ("topics[].configs",),
    # A classic group's members live in a hash map in Kafka's coordinator; Kafka 4's coordinator answers the
    # groups asked for by the __consumer_offsets partition that holds each.
    "DescribeGroups": ("groups", "groups[].members"),
    # Kafka lists the groups out of its coordinator's hash map.
    "ListGroups": ("groups",),
    # Kafka 4's coordinator answers the groups by the __consumer_offsets partition that holds each.
    "DeleteGroups": ("results",),
}
"""Lists whose order Kafka leaves undefined in every row of an API, with the reason."""


@dataclass(frozen=True)
class Row:
    id: str
    build: Build
    since: int = 0
    until: int = 1_000
    known: tuple[str, ...] = ()
    unordered: tuple[str, ...] = ()
    masked: tuple[tuple[str, str], ...] = ()
    """(path glob, why): fields this row does not compare, each with its reason."""


def row(
    id: str,
    build: Build | Any,
    *,
    since: int = 0,
    until: int = 1_000,
    known: tuple[str, ...] = (),
    unordered: tuple[str, ...] = (),
    masked: tuple[tuple[str, str], ...] = (),
) -> Row:
    """A row; `build` is a request (the same at every version, for both brokers) or a function (version, peer)."""
    if callable(build):
        return Row(id, build, since, until, known, unordered, masked)

    def same(_version: int, _peer: Peer) -> Any:
        return build

    return Row(id, same, since, until, known, unordered, masked)


"""DescribeTopicPartitions always sends authorized operations (it has no flag asking for them)."""

# ---- ApiVersions -------------------------------------------------------------------------------------------------

API_VERSIONS = [
    row(
        "api-versions",
        ApiVersionsRequest(client_software_name="rd-client", client_software_version="1.0"),
        known=(
            "apis-not-implemented",
            "kip-896-minimum-versions",
            "offset-for-leader-epoch-v0",
            "kafka-39-maximum-versions",
            "features",
        ),
    ),
    row(
        "api-versions-illegal-software-name",
        ApiVersionsRequest(client_software_name="-no good-", client_software_version="1.0"),
        since=3,
    ),
]

# ---- Metadata, DescribeCluster, DescribeTopicPartitions ----------------------------------------------------------


def metadata(*names: str, auto_create: bool = False) -> MetadataRequest:
    return MetadataRequest(
        topics=[MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=auto_create
    )


def every_topic(version: int, _peer: Peer) -> MetadataRequest:
    # v0 has no null list: an empty one means every topic there.
    topics: list[MetadataRequestTopic] | None = [] if version == 0 else None
    return MetadataRequest(topics=topics, allow_auto_topic_creation=False)  # type: ignore[arg-type]


METADATA = [
    row("metadata-named-topics", metadata(LOG, CONFIGURED)),
    row("metadata-every-topic", every_topic),
    row("metadata-no-topic", metadata(), since=1),
    # Before v4 a Metadata request always auto-creates.
    row("metadata-unknown-topic", metadata(UNKNOWN_TOPIC), since=4),
    row("metadata-illegal-name", metadata("a b", auto_create=True)),
    row("metadata-internal-topic", metadata(OFFSETS_TOPIC)),
    row(
        "metadata-by-topic-id",
        lambda v, p: MetadataRequest(topics=[MetadataRequestTopic(name=None, topic_id=p.topic_id(LOG))]),
        since=10,
    ),
    row(
        "metadata-authorized-operations",
        MetadataRequest(
            topics=[MetadataRequestTopic(name=LOG)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=True,
            include_topic_authorized_operations=True,
        ),
        since=8,
    ),
]

DESCRIBE_CLUSTER = [
    row("describe-cluster", DescribeClusterRequest()),
    row("describe-cluster-controllers", DescribeClusterRequest(endpoint_type=2), since=1),
    row(
        "describe-cluster-authorized-operations",
        DescribeClusterRequest(include_cluster_authorized_operations=True),
    ),
]


def dtp(
    *names: str, limit: int = 2000, cursor: tuple[str, int] | None = None
) -> DescribeTopicPartitionsRequest:
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=n) for n in names],
        response_partition_limit=limit,
        cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


DESCRIBE_TOPIC_PARTITIONS = [
    row("dtp-named-topics", dtp(LOG, CONFIGURED)),
    row("dtp-every-topic", dtp()),
    row("dtp-partition-limit", dtp(CONFIGURED, LOG, limit=1)),
    row("dtp-cursor", dtp(CONFIGURED, LOG, cursor=(CONFIGURED, 1))),
    row("dtp-unknown-topic", dtp(UNKNOWN_TOPIC)),
    row("dtp-illegal-name", dtp("a b")),
]

# ---- DescribeConfigs -----------------------------------------------------------------------------------------------

DYNAMIC = ("no-dynamic-broker-configs",)
"""A Kafka 4 cluster starts with a cluster-wide dynamic min.insync.replicas."""
SYNONYMS = ("config-default-synonyms",)
"""The settings both brokers get at start-up (SHARED_OVERRIDES) have defaults of their own."""
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
BROKER_ID = "1"
TOPIC_KEYS = [*CONFIGURED_CONFIGS, "retention.bytes", "segment.ms", "message.timestamp.type"]
HARNESS_SETTINGS = (
    "set by the harness that starts each broker: its own port, data directory and (Kafka) KRaft controller "
    "listener; kbroker is not given advertised.listeners"
)
BROKER_KEYS = [
    "log.retention.ms",
    "num.partitions",
    "auto.create.topics.enable",
    "message.max.bytes",
    "log.segment.bytes",
    "log.retention.hours",
    "offsets.topic.replication.factor",
    "group.initial.rebalance.delay.ms",
]


def describe_configs(
    resource_type: int,
    name: str,
    keys: list[str] | None = None,
    *,
    synonyms: bool = False,
    documentation: bool = False,
) -> DescribeConfigsRequest:
    return DescribeConfigsRequest(
        resources=[
            DescribeConfigsResource(resource_type=resource_type, resource_name=name, configuration_keys=keys)  # type: ignore[arg-type]
        ],
        include_synonyms=synonyms,
        include_documentation=documentation,
    )


DESCRIBE_CONFIGS = [
    row("configs-topic-keys", describe_configs(TOPIC_RESOURCE, CONFIGURED, TOPIC_KEYS)),
    row(
        "configs-topic-keys-synonyms",
        describe_configs(TOPIC_RESOURCE, CONFIGURED, TOPIC_KEYS, synonyms=True),
        known=(*DYNAMIC, *SYNONYMS),
    ),
    row(
        "configs-topic-defaults-synonyms",
        describe_configs(TOPIC_RESOURCE, EMPTY, TOPIC_KEYS, synonyms=True),
        known=(*DYNAMIC, *SYNONYMS),
    ),
    row(
        "configs-topic-every-config",
        describe_configs(TOPIC_RESOURCE, CONFIGURED),
        known=("topic-configs-subset",),
    ),
    row(
        "configs-topic-documentation",
        describe_configs(TOPIC_RESOURCE, LOG, ["retention.ms"], documentation=True),
        since=3,
        known=("topic-config-documentation",),
    ),
    row("configs-unknown-topic", describe_configs(TOPIC_RESOURCE, UNKNOWN_TOPIC)),
    row(
        "configs-broker-keys",
        describe_configs(BROKER_RESOURCE, BROKER_ID, BROKER_KEYS, synonyms=True),
        known=SYNONYMS,
    ),
    row(
        "configs-broker-every-config",
        describe_configs(BROKER_RESOURCE, BROKER_ID),
        known=(
            "broker-configs-subset",
            "kbroker-broker-configs",
            "static-broker-configs",
            "data-dir-default",
            "flush-interval-default",
            "replica-fetch-default",
            *DYNAMIC,
            "kafka-4-list-configs",
            "kafka-4-empty-list-defaults",
        ),
        masked=tuple(
            (f"results[1].configs[{name}].{field}", HARNESS_SETTINGS)
            for name in (
                "listeners",
                "advertised.listeners",
                "log.dirs",
                "inter.broker.listener.name",
                "listener.security.protocol.map",
            )
            for field in ("value", "config_source")
        ),
    ),
    row("configs-other-broker", describe_configs(BROKER_RESOURCE, "2")),
    row("configs-cluster-defaults", describe_configs(BROKER_RESOURCE, ""), known=DYNAMIC),
    row("configs-unknown-resource-type", describe_configs(1, "x")),
]

# ---- The admin APIs of issue 14: rows that change nothing (validate_only, refusals, a single node's answers) -------


def grow(name: str, count: int) -> CreatePartitionsRequest:
    return CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=name, count=count)], timeout_ms=30_000, validate_only=True
    )


def alter_incrementally(name: str, *changes: tuple[str, int, str | None]) -> IncrementalAlterConfigsRequest:
    return IncrementalAlterConfigsRequest(
        resources=[
            IncrementalAlterConfigsResource(
                resource_type=TOPIC_RESOURCE,
                resource_name=name,
                configs=[
                    IncrementalAlterableConfig(name=n, config_operation=op, value=v) for n, op, v in changes
                ],
            )
        ],
        validate_only=True,
    )


def alter_all(name: str, **configs: str) -> AlterConfigsRequest:
    return AlterConfigsRequest(
        resources=[
            AlterConfigsResource(
                resource_type=TOPIC_RESOURCE,
                resource_name=name,
                configs=[AlterableConfig(name=n.replace("_", "."), value=v) for n, v in configs.items()],
            )
        ],
        validate_only=True,
    )


def delete_records(name: str, offset: int) -> DeleteRecordsRequest:
    return DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(
                name=name, partitions=[DeleteRecordsPartition(partition_index=0, offset=offset)]
            )
        ],
        timeout_ms=30_000,
    )


def elect(election_type: int, name: str | None) -> ElectLeadersRequest:
    partitions = None if name is None else [ElectTopicPartitions(topic=name, partitions=[0])]
    return ElectLeadersRequest(election_type=election_type, topic_partitions=partitions)  # type: ignore[arg-type]


SET, APPEND = 0, 2
LOG_DIR_PLACES = (
    ("results[*].log_dir", "each broker's own data directory"),
    ("results[*].total_bytes", "the file system the data directory is on"),
    ("results[*].usable_bytes", "the file system the data directory is on"),
)

ADMIN = [
    row("create-partitions-unknown-topic", grow(UNKNOWN_TOPIC, 3)),
    row("create-partitions-not-an-increase", grow(CONFIGURED, 1)),
    row("create-partitions-same-count", grow(CONFIGURED, 2)),
    row("create-partitions-validate-only", grow(LOG, 4)),
    row("incremental-alter-configs", alter_incrementally(CONFIGURED, ("retention.ms", SET, "5000"))),
    row(
        "incremental-alter-configs-bad-value", alter_incrementally(CONFIGURED, ("retention.ms", SET, "soon"))
    ),
    row(
        "incremental-alter-configs-unknown-name",
        alter_incrementally(CONFIGURED, ("no.such.config", SET, "1")),
    ),
    row(
        "incremental-alter-configs-append-to-a-long",
        alter_incrementally(CONFIGURED, ("retention.ms", APPEND, "1")),
    ),
    row(
        "incremental-alter-configs-unknown-topic",
        alter_incrementally(UNKNOWN_TOPIC, ("retention.ms", SET, "1")),
    ),
    row("alter-configs", alter_all(CONFIGURED, retention_ms="5000")),
    row("alter-configs-bad-value", alter_all(CONFIGURED, retention_ms="soon")),
    row("alter-configs-unknown-topic", alter_all(UNKNOWN_TOPIC, retention_ms="1")),
    row("delete-records-beyond-the-high-watermark", delete_records(LOG, LOG_END + 5)),
    row("delete-records-unknown-topic", delete_records(UNKNOWN_TOPIC, 1)),
    row("elect-preferred-leader", elect(0, LOG)),
    row("elect-unclean-leader", elect(1, LOG), since=1),
    row("elect-unknown-partition", elect(0, UNKNOWN_TOPIC)),
    row("list-reassignments", ListPartitionReassignmentsRequest(topics=None)),
    row(
        "cancel-no-reassignment",
        AlterPartitionReassignmentsRequest(
            topics=[
                ReassignableTopic(
                    name=LOG, partitions=[ReassignablePartition(partition_index=0, replicas=None)]
                )
            ]
        ),
    ),
    row(
        "describe-log-dirs-unknown-topic",
        DescribeLogDirsRequest(topics=[DescribableLogDirTopic(topic=UNKNOWN_TOPIC, partitions=[0])]),
        masked=LOG_DIR_PLACES,
    ),
    row(
        "describe-log-dirs-of-a-topic",
        DescribeLogDirsRequest(topics=[DescribableLogDirTopic(topic=LOG, partitions=[0])]),
        masked=LOG_DIR_PLACES,
    ),
]

# ---- ListOffsets, OffsetForLeaderEpoch ---------------------------------------------------------------------------

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


def list_offsets(
    timestamp: int, topic: str = LOG, partition: int = 0, *, epoch: int = -1, isolation: int = 0
) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation,
        topics=[
            ListOffsetsTopic(
                name=topic,
                partitions=[
                    ListOffsetsPartition(
                        partition_index=partition, timestamp=timestamp, current_leader_epoch=epoch
                    )
                ],
            )
        ],
    )


LIST_OFFSETS = [
    row("list-offsets-latest", list_offsets(LATEST)),
    row("list-offsets-earliest", list_offsets(EARLIEST)),
    row("list-offsets-max-timestamp", list_offsets(MAX_TIMESTAMP), since=7),
    row("list-offsets-earliest-local", list_offsets(EARLIEST_LOCAL), since=8),
    row("list-offsets-latest-tiered", list_offsets(LATEST_TIERED), since=9),
    row("list-offsets-timestamp-between", list_offsets(2500)),
    row("list-offsets-timestamp-exact", list_offsets(3000)),
    row("list-offsets-timestamp-before-all", list_offsets(0)),
    row("list-offsets-timestamp-after-all", list_offsets(5000)),
    row("list-offsets-empty-latest", list_offsets(LATEST, EMPTY)),
    row("list-offsets-empty-max-timestamp", list_offsets(MAX_TIMESTAMP, EMPTY), since=7),
    row("list-offsets-empty-timestamp", list_offsets(1000, EMPTY)),
    row("list-offsets-read-committed", list_offsets(LATEST, isolation=1), since=2),
    row("list-offsets-unknown-partition", list_offsets(LATEST, LOG, 3)),
    row("list-offsets-unknown-topic", list_offsets(LATEST, UNKNOWN_TOPIC)),
    row("list-offsets-current-epoch", list_offsets(LATEST, epoch=0), since=4),
    row("list-offsets-newer-epoch", list_offsets(LATEST, epoch=1), since=4),
]


def epochs(
    epoch: int, topic: str = LOG, partition: int = 0, *, current: int = -1, replica_id: int = -2
) -> OffsetForLeaderEpochRequest:
    return OffsetForLeaderEpochRequest(
        replica_id=replica_id,
        topics=[
            OffsetForLeaderTopic(
                topic=topic,
                partitions=[
                    OffsetForLeaderPartition(
                        partition=partition, leader_epoch=epoch, current_leader_epoch=current
                    )
                ],
            )
        ],
    )


OFFSET_FOR_LEADER_EPOCH = [
    row("epoch-current", epochs(0)),
    row("epoch-newer", epochs(3)),
    row("epoch-before-any", epochs(-1)),
    row("epoch-empty-partition", epochs(0, EMPTY)),
    row("epoch-unknown-partition", epochs(0, LOG, 2)),
    row("epoch-unknown-topic", epochs(0, UNKNOWN_TOPIC)),
    row("epoch-current-leader-epoch", epochs(0, current=0), since=2),
    row("epoch-newer-leader-epoch", epochs(0, current=1), since=2),
    row("epoch-consumer", epochs(0, replica_id=-1), since=3),
]

# ---- Fetch ---------------------------------------------------------------------------------------------------------


def fetch(
    *partitions: tuple[str, int, int],
    partition_max_bytes: int = 1 << 20,
    max_bytes: int = 1 << 24,
    epoch: int = -1,
    isolation: int = 0,
    replica: int = -1,
) -> Build:
    """(topic, partition, offset) each; a topic by name before v13, by this broker's id for it from v13. `replica`:
    a follower's broker id (replica_id before v15, replica_state from v15)."""

    def build(_version: int, peer: Peer) -> FetchRequest:
        topics: dict[str, FetchTopic] = {}
        for topic, partition, offset in partitions:
            entry = topics.setdefault(topic, FetchTopic(topic=topic, topic_id=peer.topic_id(topic)))
            entry.partitions.append(
                FetchPartition(
                    partition=partition,
                    fetch_offset=offset,
                    partition_max_bytes=partition_max_bytes,
                    current_leader_epoch=epoch,
                )
            )
        return FetchRequest(
            replica_id=replica,
            replica_state=ReplicaState(replica_id=replica),
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=max_bytes,
            isolation_level=isolation,
            session_id=0,
            session_epoch=-1,
            topics=list(topics.values()),
        )

    return build


FETCH = [
    row("fetch-from-start", fetch((LOG, 0, 0))),
    row("fetch-inside-first-batch", fetch((LOG, 0, 1))),
    row("fetch-second-batch", fetch((LOG, 0, 3))),
    row("fetch-at-log-end", fetch((LOG, 0, LOG_END))),
    row("fetch-after-log-end", fetch((LOG, 0, LOG_END + 1)), known=("fetch-error-offsets",)),
    row("fetch-before-log-start", fetch((LOG, 0, -1)), known=("fetch-error-offsets",)),
    row("fetch-empty-partition", fetch((EMPTY, 0, 0))),
    row("fetch-partition-max-bytes-below-a-batch", fetch((LOG, 0, 0), partition_max_bytes=10)),
    row("fetch-max-bytes-below-a-batch", fetch((LOG, 0, 0), (EMPTY, 0, 0), max_bytes=10)),
    row("fetch-several-partitions", fetch((LOG, 0, 3), (EMPTY, 0, 0), (CONFIGURED, 1, 0))),
    row("fetch-unknown-partition", fetch((LOG, 4, 0))),
    row("fetch-unknown-topic", fetch((UNKNOWN_TOPIC, 0, 0))),
    row("fetch-read-committed", fetch((LOG, 0, 0), isolation=1)),
    row("fetch-current-leader-epoch", fetch((LOG, 0, 0), epoch=0), since=9),
    row("fetch-newer-leader-epoch", fetch((LOG, 0, 0), epoch=1), since=9),
    # A follower's fetch from a broker that holds no replica: NOT_LEADER_OR_FOLLOWER, the one leadership error a
    # single node can be made to answer, and so the row that shows KIP-951's leader hints (Fetch v16+).
    row(
        "fetch-from-a-non-replica",
        fetch((LOG, 0, 0), replica=2),
        known=("follower-fetch-node-endpoints",),
    ),
]

# ---- Groups --------------------------------------------------------------------------------------------------------


def offset_fetch(group: str, topics: list[tuple[str, list[int]]] | None, *, stable: bool = False) -> Build:
    """One group's committed offsets of `topics` (None: all), as v0-7 and v8+ say it."""

    def build(_version: int, _peer: Peer) -> OffsetFetchRequest:
        return OffsetFetchRequest(
            group_id=group,
            topics=None  # type: ignore[arg-type]
            if topics is None
            else [OffsetFetchRequestTopic(name=t, partition_indexes=p) for t, p in topics],
            groups=[
                OffsetFetchRequestGroup(
                    group_id=group,
                    topics=None  # type: ignore[arg-type]
                    if topics is None
                    else [OffsetFetchRequestTopics(name=t, partition_indexes=p) for t, p in topics],
                )
            ],
            require_stable=stable,
        )

    return build


def rebalancing(group: str) -> tuple[str, ...]:
    return ("assignment-while-rebalancing",) if group == PREPARING_GROUP else ()


GROUP_ROWS = [
    *(
        row(f"describe-group-{group}", DescribeGroupsRequest(groups=[group]), known=rebalancing(group))
        for group in EVERY_GROUP
    ),
    row(
        "describe-groups-every-state",
        DescribeGroupsRequest(groups=list(EVERY_GROUP)),
        known=rebalancing(PREPARING_GROUP),
    ),
    row(
        "describe-groups-authorized-operations",
        DescribeGroupsRequest(groups=[STABLE_GROUP], include_authorized_operations=True),
        since=3,
        known=("group-config-operations",),
    ),
    row("list-groups", ListGroupsRequest()),
    *(
        row(f"list-groups-{state}", ListGroupsRequest(states_filter=[state]), since=4)
        for state in ("Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead")
    ),
    row("list-groups-several-states", ListGroupsRequest(states_filter=["Empty", "Stable"]), since=4),
    row("list-groups-unknown-state", ListGroupsRequest(states_filter=["NoSuchState"]), since=4),
    row("list-groups-classic", ListGroupsRequest(types_filter=["classic"]), since=5),
    row("list-groups-consumer", ListGroupsRequest(types_filter=["consumer"]), since=5),
    *(row(f"offset-fetch-{group}", offset_fetch(group, [(LOG, [0])])) for group in EVERY_GROUP),
    *(
        row(f"offset-fetch-all-{group}", offset_fetch(group, None), since=2)
        for group in (EMPTY_GROUP, STABLE_GROUP, DELETED_GROUP, UNKNOWN_GROUP)
    ),
    row("offset-fetch-unknown-partition", offset_fetch(EMPTY_GROUP, [(LOG, [0, 7]), (UNKNOWN_TOPIC, [0])])),
    row("offset-fetch-require-stable", offset_fetch(COMPLETING_GROUP, [(LOG, [0])], stable=True), since=7),
    row(
        "offset-fetch-several-groups",
        OffsetFetchRequest(
            groups=[
                OffsetFetchRequestGroup(
                    group_id=g, topics=[OffsetFetchRequestTopics(name=LOG, partition_indexes=[0])]
                )
                for g in (EMPTY_GROUP, STABLE_GROUP, UNKNOWN_GROUP)
            ]
        ),
        since=8,
    ),
    row(
        "find-coordinator",
        lambda v, _p: FindCoordinatorRequest(
            key=STABLE_GROUP, coordinator_keys=[STABLE_GROUP, PREPARING_GROUP]
        ),
    ),
]

# ---- transactions -------------------------------------------------------------------------------------------------
# These rows come before any FindCoordinator for a transactional id (TRANSACTIONS, last), so __transaction_state does
# not exist yet: every request that needs a coordinator meets a broker that coordinates nothing.

TXN_ID = "rd-txn"


def add_partitions(version: int, _peer: Peer) -> AddPartitionsToTxnRequest:
    topics = [
        AddPartitionsToTxnTopic(name=LOG, partitions=[0]),
        AddPartitionsToTxnTopic(name=UNKNOWN_TOPIC, partitions=[0]),
    ]
    if version >= 4:
        return AddPartitionsToTxnRequest(
            transactions=[
                AddPartitionsToTxnTransaction(
                    transactional_id=TXN_ID,
                    producer_id=5,
                    producer_epoch=0,
                    verify_only=True,
                    topics=topics[:1],
                )
            ]
        )
    return AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=TXN_ID,
        v3_and_below_producer_id=5,
        v3_and_below_producer_epoch=0,
        v3_and_below_topics=topics,
    )


TRANSACTION_ROWS = [
    row(
        "init-producer-id-zero-timeout",
        InitProducerIdRequest(transactional_id=TXN_ID, transaction_timeout_ms=0),
    ),
    row(
        "init-producer-id-empty-id", InitProducerIdRequest(transactional_id="", transaction_timeout_ms=60_000)
    ),
    row(
        "init-producer-id-no-coordinator",
        InitProducerIdRequest(transactional_id=TXN_ID, transaction_timeout_ms=60_000),
    ),
    # Kafka gathers the partitions by topic in a hash map.
    row("add-partitions-no-coordinator", add_partitions, unordered=("results_by_topic_v3_and_below",)),
    # A client may not add an internal topic's partition, ACLs or not (v4+ come from brokers: not checked)
    row(
        "add-partitions-internal-topic",
        AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TXN_ID,
            v3_and_below_producer_id=5,
            v3_and_below_producer_epoch=0,
            v3_and_below_topics=[
                AddPartitionsToTxnTopic(name=LOG, partitions=[0]),
                AddPartitionsToTxnTopic(name=OFFSETS_TOPIC, partitions=[0]),
            ],
        ),
        until=3,
        unordered=("results_by_topic_v3_and_below",),
    ),
    row(
        "add-offsets-no-coordinator",
        AddOffsetsToTxnRequest(
            transactional_id=TXN_ID, producer_id=5, producer_epoch=0, group_id=STABLE_GROUP
        ),
    ),
    row(
        "end-txn-no-coordinator",
        EndTxnRequest(transactional_id=TXN_ID, producer_id=5, producer_epoch=0, committed=True),
    ),
    row("describe-transactions-no-coordinator", DescribeTransactionsRequest(transactional_ids=[TXN_ID, ""])),
    row("list-transactions", ListTransactionsRequest(state_filters=["Ongoing", "NoSuchState"])),
    row(
        "write-txn-markers-unknown-partition",
        WriteTxnMarkersRequest(
            markers=[
                WritableTxnMarker(
                    producer_id=5,
                    producer_epoch=0,
                    transaction_result=True,
                    coordinator_epoch=0,
                    topics=[WritableTxnMarkerTopic(name=UNKNOWN_TOPIC, partition_indexes=[0])],
                )
            ]
        ),
    ),
]

# ---- Group membership: JoinGroup, SyncGroup, Heartbeat, LeaveGroup -------------------------------------------------
# A row speaks as the first member the world's setup joined to a group (Peer.members: its id and generation), or as
# a member no broker knows. Rows that join make groups of their own per version (`rd-g-join-v3`), so no row waits on
# another's member; the ids they get are compared through stand-ins (run.py) naming the row and version.

NO_GROUP = "rd-g-nowhere"
"""A group no row or setup creates (UNKNOWN_GROUP's rows must find it unused; these might create this one)."""
BOGUS_MEMBER = "rd-no-such-member"
LATER_GENERATION = 10
"""Added to a member's generation: a generation the group never had."""


def as_member(peer: Peer, group: str) -> tuple[str, int]:
    return peer.members[group]


def join_group(
    group: str,
    member_id: str = "",
    *,
    protocol_type: str = PROTOCOL_TYPE,
    assignor: str = ASSIGNOR,
    instance: str | None = None,
) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=MEMBER_TIMEOUT_MS,
        rebalance_timeout_ms=MEMBER_TIMEOUT_MS,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type=protocol_type,
        protocols=[JoinGroupRequestProtocol(name=assignor, metadata=subscription(LOG))],
    )


def sync_group(group: str, *, generation_delta: int = 0, protocol_type: str = PROTOCOL_TYPE) -> Build:
    """SyncGroup as `group`'s first member, without assignments (a follower's)."""

    def build(_version: int, peer: Peer) -> SyncGroupRequest:
        member_id, generation = as_member(peer, group)
        return SyncGroupRequest(
            group_id=group,
            generation_id=generation + generation_delta,
            member_id=member_id,
            protocol_type=protocol_type,
            protocol_name=ASSIGNOR,
        )

    return build


def heartbeat(group: str, *, generation_delta: int = 0) -> Build:
    def build(_version: int, peer: Peer) -> HeartbeatRequest:
        member_id, generation = as_member(peer, group)
        return HeartbeatRequest(
            group_id=group, generation_id=generation + generation_delta, member_id=member_id
        )

    return build


def leave_group_request(group: str, member_id: str, instance: str | None = None) -> LeaveGroupRequest:
    """v0-2 name one member; v3+ a list."""
    return LeaveGroupRequest(
        group_id=group,
        member_id=member_id,
        members=[MemberIdentity(member_id=member_id, group_instance_id=instance)],
    )


JOIN_GROUP = [
    # v0-3: the new member joins at once and leads its group; v4+ (KIP-394): MEMBER_ID_REQUIRED with its new id.
    row("join-group-new-member", lambda v, _p: join_group(f"rd-g-join-v{v}")),
    # A static member (KIP-345) joins at once at every version.
    row(
        "join-group-static-member",
        lambda v, _p: join_group(f"rd-g-static-v{v}", instance=f"rd-static-v{v}"),
        since=5,
    ),
    row("join-group-unknown-member", join_group(STABLE_GROUP, BOGUS_MEMBER)),
    row("join-group-unknown-member-no-group", join_group(NO_GROUP, BOGUS_MEMBER)),
    row("join-group-empty-group-id", join_group("")),
    row("join-group-other-protocol-type", join_group(STABLE_GROUP, protocol_type="connect")),
    row("join-group-no-common-assignor", join_group(STABLE_GROUP, assignor="roundrobin")),
]

SYNC_GROUP = [
    # A member of a Stable group asks again: its assignment.
    row("sync-group-stable-member", sync_group(STABLE_GROUP)),
    row(
        "sync-group-unknown-member",
        SyncGroupRequest(group_id=STABLE_GROUP, generation_id=1, member_id=BOGUS_MEMBER),
    ),
    row("sync-group-illegal-generation", sync_group(STABLE_GROUP, generation_delta=LATER_GENERATION)),
    row("sync-group-rebalance-in-progress", sync_group(PREPARING_GROUP)),
    row("sync-group-no-group", SyncGroupRequest(group_id=NO_GROUP, generation_id=1, member_id=BOGUS_MEMBER)),
    row("sync-group-empty-group-id", SyncGroupRequest(group_id="", generation_id=1, member_id=BOGUS_MEMBER)),
    row("sync-group-other-protocol-type", sync_group(STABLE_GROUP, protocol_type="connect"), since=5),
]

HEARTBEAT = [
    row("heartbeat-stable-member", heartbeat(STABLE_GROUP)),
    # A member that has joined but not yet synced heartbeats as usual.
    row("heartbeat-completing-rebalance", heartbeat(COMPLETING_GROUP)),
    row("heartbeat-rebalance-in-progress", heartbeat(PREPARING_GROUP)),
    row("heartbeat-illegal-generation", heartbeat(STABLE_GROUP, generation_delta=LATER_GENERATION)),
    row(
        "heartbeat-unknown-member",
        HeartbeatRequest(group_id=STABLE_GROUP, generation_id=1, member_id=BOGUS_MEMBER),
    ),
    row("heartbeat-no-group", HeartbeatRequest(group_id=NO_GROUP, generation_id=1, member_id=BOGUS_MEMBER)),
    row("heartbeat-empty-group-id", HeartbeatRequest(group_id="", generation_id=1, member_id=BOGUS_MEMBER)),
]

LEAVE_GROUP = [
    # The only member of its group (one per version) leaves: the group is Empty.
    row(
        "leave-group-member",
        lambda v, p: leave_group_request(leave_group(v), as_member(p, leave_group(v))[0]),
    ),
    row("leave-group-unknown-member", leave_group_request(STABLE_GROUP, BOGUS_MEMBER)),
    row("leave-group-unknown-instance", leave_group_request(STABLE_GROUP, "", "rd-nobody"), since=3),
    row("leave-group-no-group", leave_group_request(NO_GROUP, BOGUS_MEMBER)),
    row("leave-group-empty-group-id", leave_group_request("", BOGUS_MEMBER)),
]

# ---- OffsetCommit ------------------------------------------------------------------------------------------------

SIMPLE_GROUP = "rd-g-simple"
"""Offsets committed from outside any group (generation -1), as an admin or a manually assigned consumer does."""


def offset_commit(
    group: str,
    *,
    member: str = "",
    generation: int = -1,
    topics: tuple[tuple[str, tuple[int, ...]], ...] = ((LOG, (0,)),),
    metadata: str | None = None,
) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member,
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    OffsetCommitRequestPartition(
                        partition_index=p, committed_offset=1, committed_metadata=metadata
                    )
                    for p in partitions
                ],
            )
            for topic, partitions in topics
        ],
    )


def commit_as_member(group: str, *, generation_delta: int = 0) -> Build:
    """`group`'s first member commits the offset the world's setup committed for it (nothing changes)."""

    def build(_version: int, peer: Peer) -> OffsetCommitRequest:
        member_id, generation = as_member(peer, group)
        request = offset_commit(group, member=member_id, generation=generation + generation_delta)
        offset, metadata = COMMITS.get(group, (1, None))
        request.topics[0].partitions[0].committed_offset = offset
        request.topics[0].partitions[0].committed_metadata = metadata
        return request

    return build


OFFSET_COMMIT = [
    row("offset-commit-simple", offset_commit(SIMPLE_GROUP)),
    row("offset-commit-stable-member", commit_as_member(STABLE_GROUP)),
    row(
        "offset-commit-illegal-generation", commit_as_member(STABLE_GROUP, generation_delta=LATER_GENERATION)
    ),
    row("offset-commit-unknown-member", offset_commit(STABLE_GROUP, member=BOGUS_MEMBER, generation=1)),
    # Without a generation, into a group that has members.
    row("offset-commit-outside-active-group", offset_commit(STABLE_GROUP)),
    # A member that has joined but not synced must wait for its assignment.
    row("offset-commit-completing-rebalance", commit_as_member(COMPLETING_GROUP)),
    # A member of the generation before a rebalance still commits what it processed.
    row("offset-commit-preparing-rebalance", commit_as_member(PREPARING_GROUP)),
    # A member of a group that was deleted, or that never existed here (v9: KIP-848's coordinator's answer).
    row(
        "offset-commit-deleted-group",
        offset_commit(DELETED_GROUP, member=BOGUS_MEMBER, generation=1),
        known=("offset-commit-v9-group-id-not-found",),
    ),
    row(
        "offset-commit-no-group",
        offset_commit(NO_GROUP, member=BOGUS_MEMBER, generation=1),
        known=("offset-commit-v9-group-id-not-found",),
    ),
    row(
        "offset-commit-unknown-topic-partition",
        offset_commit(SIMPLE_GROUP, topics=((LOG, (0, 7)), (UNKNOWN_TOPIC, (0,)))),
    ),
    row("offset-commit-metadata-too-large", offset_commit(SIMPLE_GROUP, metadata="m" * 5000)),
    row("offset-commit-empty-group-id", offset_commit("")),
]

# ---- DeleteGroups, OffsetDelete ----------------------------------------------------------------------------------


def offset_delete(group: str, *topics: tuple[str, tuple[int, ...]]) -> OffsetDeleteRequest:
    return OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(
                name=topic, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in partitions]
            )
            for topic, partitions in topics
        ],
    )


GROUP_ADMIN = [
    row("delete-groups-non-empty", DeleteGroupsRequest(groups_names=[STABLE_GROUP])),
    row("delete-groups-unknown", DeleteGroupsRequest(groups_names=[NO_GROUP, DELETED_GROUP])),
    row("delete-groups-empty-group-id", DeleteGroupsRequest(groups_names=[""])),
    row("delete-groups", lambda v, _p: DeleteGroupsRequest(groups_names=[delete_group(v)])),
    row("offset-delete-no-group", offset_delete(NO_GROUP, (LOG, (0,)))),
    # STABLE_GROUP's member subscribes to LOG.
    row("offset-delete-subscribed-topic", offset_delete(STABLE_GROUP, (LOG, (0,)))),
    row(
        "offset-delete-unknown-topic-partition",
        offset_delete(OFFSET_DELETE_GROUP, (LOG, (7,)), (UNKNOWN_TOPIC, (0,))),
    ),
    row("offset-delete", offset_delete(OFFSET_DELETE_GROUP, (LOG, (0,)))),
    row("offset-delete-empty-group-id", offset_delete("", (LOG, (0,)))),
]

# ---- InitProducerId, DescribeProducers, FindCoordinator's refusals ------------------------------------------------

PRODUCER_ROWS = [
    row("init-producer-id", InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)),
    row(
        "describe-producers",
        DescribeProducersRequest(
            topics=[
                DescribeProducersTopicRequest(name=IDEMPOTENT, partition_indexes=[0]),
                DescribeProducersTopicRequest(name=LOG, partition_indexes=[0, 5]),
                DescribeProducersTopicRequest(name=UNKNOWN_TOPIC, partition_indexes=[0]),
            ]
        ),
    ),
    row(
        "find-coordinator-empty-group-id",
        lambda v, _p: FindCoordinatorRequest(key="", coordinator_keys=[""]),
    ),
    row(
        "find-coordinator-unknown-key-type",
        FindCoordinatorRequest(key=STABLE_GROUP, key_type=7, coordinator_keys=[STABLE_GROUP]),
        since=1,
    ),
    row(
        "find-coordinator-share-group",
        FindCoordinatorRequest(key=STABLE_GROUP, key_type=2, coordinator_keys=[STABLE_GROUP]),
        since=1,
        known=("share-group-coordinator",),
    ),
]

# ---- Produce ---------------------------------------------------------------------------------------------------------


def produce(topic: str, batch: bytes | None, *, acks: int = 1, partition: int = 0) -> ProduceRequest:
    return ProduceRequest(
        acks=acks,
        timeout_ms=10_000,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=batch)]
            )
        ],
    )


def good_batch() -> bytes:
    return bytes(build_batch([Record(0, 7000, b"k", b"v"), Record(1, 7001, None, b"w")]))


def corrupt_batch() -> bytes:
    batch = bytearray(good_batch())
    batch[-1] ^= 0xFF  # a byte of the last record: covered by the CRC
    return bytes(batch)


def transactional_batch(*, control: bool = False) -> bytes:
    return bytes(
        build_batch(
            [Record(0, 7000, b"k", b"v")],
            producer_id=5,
            producer_epoch=0,
            base_sequence=0,
            is_transactional=True,
            is_control=control,
        )
    )


def transactional_produce(batch: bytes, transactional_id: str | None) -> ProduceRequest:
    request = produce(PRODUCE, batch)
    request.transactional_id = transactional_id
    return request


PRODUCE_ROWS = [
    # Transactional batches refused (nothing written): without a transactional id; before the leader could verify
    # with a coordinator (KIP-890: there is none yet); a control batch from a client.
    row("produce-transactional-without-id", transactional_produce(transactional_batch(), None)),
    row("produce-transactional-not-verified", transactional_produce(transactional_batch(), TXN_ID)),
    row("produce-control-batch", transactional_produce(transactional_batch(control=True), TXN_ID)),
    row("produce-acks-1", produce(PRODUCE, good_batch())),
    row("produce-acks-all", produce(PRODUCE, good_batch(), acks=-1)),
    row("produce-invalid-acks", produce(PRODUCE, good_batch(), acks=2)),
    row("produce-too-large", produce(SMALL, batch_of_size(2 * SMALL_MAX_MESSAGE_BYTES))),
    row("produce-corrupt-crc", produce(PRODUCE, corrupt_batch())),
    row("produce-unknown-partition", produce(LOG, good_batch(), partition=3)),
    row("produce-unknown-topic", produce(UNKNOWN_TOPIC, good_batch())),
    # CONFIGURED is compacted: a record without a key fails validation (KIP-467's record errors).
    row(
        "produce-keyless-to-compacted",
        produce(CONFIGURED, bytes(build_batch([Record(0, 7000, b"k", b"v"), Record(1, 7000, None, b"v")]))),
        known=("record-errors",),
    ),
]

# ---- CreateTopics, DeleteTopics, auto-creation ---------------------------------------------------------------------


def create(*topics: CreatableTopic, validate_only: bool = False) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=list(topics), timeout_ms=30_000, validate_only=validate_only)


def new_topic(name: str, partitions: int = 2, replication: int = 1, **configs: str) -> CreatableTopic:
    return CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication,
        configs=[CreatableTopicConfig(name=k.replace("_", "."), value=v) for k, v in configs.items()],
    )


CONFIGS = ("topic-configs-subset", "no-dynamic-broker-configs")
"""CreateTopics v5+ lists the new topic's configs."""

CREATE_TOPICS = [
    row("create-topic", lambda v, _p: create(new_topic(f"rd-ct-v{v}")), known=CONFIGS),
    row(
        "create-topic-with-configs",
        lambda v, _p: create(new_topic(f"rd-ctc-v{v}", retention_ms="1000")),
        known=CONFIGS,
    ),
    row(
        "create-topic-broker-defaults",
        lambda v, _p: create(new_topic(f"rd-ctd-v{v}", partitions=-1, replication=-1)),
        since=4,
        known=CONFIGS,
    ),
    row(
        "create-topic-assignment",
        lambda v, _p: create(
            CreatableTopic(
                name=f"rd-cta-v{v}",
                num_partitions=-1,
                replication_factor=-1,
                assignments=[CreatableReplicaAssignment(partition_index=0, broker_ids=[1])],
            )
        ),
        known=CONFIGS,
    ),
    row(
        "create-topic-validate-only",
        lambda v, _p: create(new_topic(f"rd-vo-v{v}"), validate_only=True),
        known=(*CONFIGS, "validate-only-topic-id"),
    ),
    row("create-topic-exists", create(new_topic(LOG))),
    row("create-topic-internal", create(new_topic(OFFSETS_TOPIC))),
    row("create-topic-zero-partitions", create(new_topic("rd-ct-zero", partitions=0))),
    row("create-topic-replication-above-brokers", create(new_topic("rd-ct-rf3", replication=3))),
    row("create-topic-unknown-config", create(new_topic("rd-ct-badname", no_such_config="1"))),
    row("create-topic-bad-config-value", create(new_topic("rd-ct-badvalue", retention_ms="soon"))),
    row("create-topic-illegal-name", create(new_topic("a b"))),
    row("create-topic-duplicate", create(new_topic("rd-ct-dup"), new_topic("rd-ct-dup"))),
    row(
        "create-topic-assignment-to-missing-broker",
        create(
            CreatableTopic(
                name="rd-ct-badassign",
                num_partitions=-1,
                replication_factor=-1,
                assignments=[CreatableReplicaAssignment(partition_index=0, broker_ids=[7])],
            )
        ),
    ),
    # Whether validate_only created anything, at every version: Metadata of every name it was asked for.
    row("after-validate-only", metadata(*(f"rd-vo-v{v}" for v in TOPIC_API_VERSIONS)), since=4),
]


def delete_topics(names: list[str], ids: list[Any] | None = None) -> DeleteTopicsRequest:
    return DeleteTopicsRequest(
        topic_names=names,
        topics=[DeleteTopicState(name=n) for n in names]
        + [DeleteTopicState(name=None, topic_id=i) for i in ids or []],
        timeout_ms=30_000,
    )


DELETE_TOPICS = [
    row("delete-topic", lambda v, _p: delete_topics([delete_topic(v)])),
    row("delete-topic-by-id", lambda v, p: delete_topics([], [p.topic_id(delete_by_id_topic(v))]), since=6),
    row("delete-unknown-topic", delete_topics([UNKNOWN_TOPIC])),
    row("delete-unknown-topic-id", delete_topics([], [UNKNOWN_TOPIC_ID]), since=6),
    # Kafka deletes __consumer_offsets (and recreates it at the next FindCoordinator): this row comes after every
    # group row.
    row("delete-internal-topic", delete_topics([OFFSETS_TOPIC]), known=("internal-topic-deletion",)),
]

AUTO_CREATE = [
    row(
        "metadata-auto-create",
        lambda v, _p: metadata(f"rd-auto-v{v}", auto_create=True),
        known=("auto-create",),
    ),
    # What was deleted: Metadata of every delete topic (those of versions not sent to both are still there). Last,
    # so that Kafka's broker has long had its controller's deletions.
    row("after-delete", metadata(*(delete_topic(v) for v in TOPIC_API_VERSIONS)), since=4),
]

# ---- Transactions ------------------------------------------------------------------------------------------------
# A transactional id's coordinator and producer id (docs/transactions.md). These rows come last, because Kafka
# creates its __transaction_state topic at the first FindCoordinator for a transactional id (every row that lists all
# topics would then see it); each row's request is built once that transactional id's coordinator is ready, on a
# broker that advertises transactions (world.py).


def transactional(build: Callable[[int], Any], transactional_id: Callable[[int], str]) -> Build:
    def after_the_coordinator(version: int, peer: Peer) -> Any:
        await_transaction_coordinator(peer, transactional_id(version))
        return build(version)

    return after_the_coordinator


def txn_id(version: int) -> str:
    return f"rd-txn-v{version}"


TRANSACTIONS = [
    row(
        "find-coordinator-transaction",
        transactional(
            lambda v: FindCoordinatorRequest(key=txn_id(v), key_type=1, coordinator_keys=[txn_id(v)]), txn_id
        ),
        since=1,
    ),
    row(
        "init-producer-id-transactional",
        transactional(
            lambda v: InitProducerIdRequest(transactional_id=txn_id(v), transaction_timeout_ms=60_000), txn_id
        ),
    ),
]

TABLE: list[Row] = [
    *API_VERSIONS,
    *METADATA,
    *DESCRIBE_CLUSTER,
    *DESCRIBE_TOPIC_PARTITIONS,
    *DESCRIBE_CONFIGS,
    *ADMIN,
    *LIST_OFFSETS,
    *OFFSET_FOR_LEADER_EPOCH,
    *FETCH,
    *GROUP_ROWS,
    *JOIN_GROUP,
    *SYNC_GROUP,
    *HEARTBEAT,
    *LEAVE_GROUP,
    *OFFSET_COMMIT,
    *GROUP_ADMIN,
    *PRODUCER_ROWS,
    *TRANSACTION_ROWS,
    *PRODUCE_ROWS,
    *CREATE_TOPICS,
    *DELETE_TOPICS,
    *AUTO_CREATE,
    *TRANSACTIONS,
]
