"""OffsetForLeaderEpoch (23), v0-4 (flexible from v4).

For each partition: the largest leader epoch at or below the requested one that the leader's log knows, and where it
ends (the start offset of the next epoch, or the log end offset for the latest), from the leader-epoch cache
(KIP-101, KIP-279). Followers use it to find where their log diverged from the new leader's and truncate there
(replica_id >= 0, v3+); consumers use it to check that their position still exists after a leader change (KIP-320:
the Java consumer validates positions once this API is advertised at v3 or later). An epoch newer than any in the
log gets UNDEFINED epoch and offset (-1, -1).

Only the leader answers (Kafka serves this API from leaders only, whoever asks): NOT_LEADER_OR_FOLLOWER otherwise.
A `current_leader_epoch` (v2+) older than ours gets FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH; that
check comes first, as in Kafka. Unknown topics and partitions get UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from kbroker.broker import Broker
from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
)
from protocol.messages.offset_for_leader_epoch_response import (
    EpochEndOffset,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)


def _end_offset(broker: Broker, topic: str, p: OffsetForLeaderPartition) -> EpochEndOffset:
    result = EpochEndOffset(partition=p.partition)
    metadata = broker.topics.get(topic)
    if metadata is None or not 0 <= p.partition < metadata.num_partitions:
        result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return result
    plog = broker.partition_log(topic, p.partition)
    if plog is None:
        # The topic exists but this node holds no replica of the partition.
        result.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return result
    epoch_error = broker.check_leader_epoch(topic, p.partition, p.current_leader_epoch)
    if epoch_error:
        result.error_code = epoch_error
        return result
    if not broker.is_leader(topic, p.partition):
        result.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return result
    if plog.offline:
        result.error_code = ErrorCode.KAFKA_STORAGE_ERROR
        return result
    result.leader_epoch, result.end_offset = plog.leader_epoch_cache.end_offset_for(
        p.leader_epoch, plog.log_end_offset
    )
    return result


@handles(23, 0, 4)
async def handle(ctx: RequestContext, req: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    topics = []
    for t in req.topics:
        topics.append(
            OffsetForLeaderTopicResult(
                topic=t.topic, partitions=[_end_offset(ctx.broker, t.topic, p) for p in t.partitions]
            )
        )
    return OffsetForLeaderEpochResponse(topics=topics)
