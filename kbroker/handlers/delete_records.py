"""DeleteRecords (21), v0-2 (Kafka 4 still has v0).

For each partition this node leads, moves the log start offset up to `offset` (-1: the high watermark) and deletes
the segments wholly below it; the answer waits (up to `timeout_ms`) until every live replica has moved its own log
start there and carries that low watermark. Consumers asking for an offset below it get OFFSET_OUT_OF_RANGE and reset
(auto.offset.reset). An offset above the high watermark gets OFFSET_OUT_OF_RANGE, a partition led elsewhere
NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION, replicas that do not catch up in time
REQUEST_TIMED_OUT, one without DELETE on the topic TOPIC_AUTHORIZATION_FAILED; the low watermark is -1 with an
error.
"""

from __future__ import annotations

import trio

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.delete_records_request import DeleteRecordsRequest
from protocol.messages.delete_records_response import (
    DeleteRecordsPartitionResult,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)


@handles(DeleteRecordsRequest, 0, 2)
async def handle(ctx: RequestContext, req: DeleteRecordsRequest) -> DeleteRecordsResponse:
    replicas = ctx.services.replicas
    topics: list[DeleteRecordsTopicResult] = []

    async def delete(tp: TopicPartition, offset: int, result: DeleteRecordsPartitionResult) -> None:
        if not ctx.authorize(Op.DELETE, R.TOPIC, tp.topic):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            return
        try:
            result.low_watermark = await replicas.delete_records(tp, offset, req.timeout_ms)
        except KafkaError as exc:
            result.error_code = exc.code

    async with trio.open_nursery() as nursery:
        for topic in req.topics:
            answer = DeleteRecordsTopicResult(name=topic.name)
            topics.append(answer)
            for part in topic.partitions:
                result = DeleteRecordsPartitionResult(partition_index=part.partition_index, low_watermark=-1)
                answer.partitions.append(result)
                nursery.start_soon(
                    delete, TopicPartition(topic.name, part.partition_index), part.offset, result
                )
    return DeleteRecordsResponse(topics=topics)
