"""ListOffsets (2), v1-9 (v1 is Kafka 4.0's minimum).

Timestamp -2 gives the log start offset, -1 the high watermark (at read_committed, v2+: the last stable offset),
-3 (v7+) the offset and timestamp of the record with the largest timestamp, and any other timestamp the first offset
whose record timestamp is at or after it, or offset, timestamp and epoch -1 if there is none. -4 (earliest local,
v8+) is answered like -2, since everything is local, and -5 (latest tiered) with -1, as Kafka without remote
storage. The leader epoch is the one of the offset answered (an empty partition's: its leader's). Errors come from
the partition's check chain (kbroker/replication/partition.py): UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR,
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a stale / newer `current_leader_epoch`, NOT_LEADER_OR_FOLLOWER. v0's
`max_num_offsets` list form is below our minimum version.
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.list_offsets_request import ListOffsetsRequest
from protocol.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)


@handles(ListOffsetsRequest, 1, 9)
async def handle(ctx: RequestContext, req: ListOffsetsRequest) -> ListOffsetsResponse:
    replicas = ctx.services.replicas
    topics = []
    for t in req.topics:
        topic_response = ListOffsetsTopicResponse(name=t.name)
        topics.append(topic_response)
        for p in t.partitions:
            response = ListOffsetsPartitionResponse(partition_index=p.partition_index)
            topic_response.partitions.append(response)
            if not ctx.authorize(Op.DESCRIBE, R.TOPIC, t.name):
                response.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            try:
                response.offset, response.timestamp, response.leader_epoch = replicas.list_offset(
                    TopicPartition(t.name, p.partition_index),
                    p.timestamp,
                    p.current_leader_epoch,
                    req.replica_id,
                    req.isolation_level,
                )
            except KafkaError as exc:
                response.error_code = exc.code
    return ListOffsetsResponse(topics=topics)
