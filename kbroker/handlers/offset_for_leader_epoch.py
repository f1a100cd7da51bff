"""OffsetForLeaderEpoch (23), v0-4 (flexible from v4).

For each partition: the largest leader epoch at or below the requested one that the leader's log knows, and where it
ends (the start offset of the next epoch, or the log end offset for the latest), from the leader-epoch cache
(KIP-101, KIP-279). Followers use it to find where their log diverged from the new leader's and truncate there
(replica_id >= 0, v3+); consumers use it to check that their position still exists after a leader change (KIP-320:
the Java consumer validates positions once this API is advertised at v3 or later). An epoch newer than any in the
log gets UNDEFINED epoch and offset (-1, -1).

Only the leader answers (Kafka serves this API from leaders only, whoever asks). Errors come from the partition's
check chain (kbroker/replication/partition.py), in Kafka's order: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER
for a partition this node holds no replica of, KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a
`current_leader_epoch` (v2+) older / newer than ours, NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.offset_for_leader_epoch_request import OffsetForLeaderEpochRequest
from protocol.messages.offset_for_leader_epoch_response import (
    EpochEndOffset,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)


@handles(OffsetForLeaderEpochRequest, 0, 4)
async def handle(ctx: RequestContext, req: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    replicas = ctx.services.replicas
    # A follower (v3+ names its replica id) needs CLUSTER_ACTION on the cluster; a client DESCRIBE on each topic.
    follower = ctx.api_version >= 3 and req.replica_id >= 0
    cluster_allowed = follower and ctx.authorize_cluster(Op.CLUSTER_ACTION)
    topics = []
    for t in req.topics:
        results = []
        allowed = cluster_allowed if follower else ctx.authorize(Op.DESCRIBE, R.TOPIC, t.topic)
        for p in t.partitions:
            result = EpochEndOffset(partition=p.partition)
            if not allowed:
                result.error_code = (
                    ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                    if follower
                    else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                )
                results.append(result)
                continue
            try:
                result.leader_epoch, result.end_offset = replicas.last_offset_for_leader_epoch(
                    TopicPartition(t.topic, p.partition), p.current_leader_epoch, p.leader_epoch
                )
            except KafkaError as exc:
                result.error_code = exc.code
            results.append(result)
        topics.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=results))
    return OffsetForLeaderEpochResponse(topics=topics)
