"""ListOffsets (2), v1-9 (v1 is Kafka 4.0's minimum).

Timestamp -2 gives the log start offset, -1 the high watermark (equal to the last stable offset: no transactions),
-3 (v7+) the offset and timestamp of the record with the largest timestamp, and any other timestamp the first offset
whose record timestamp is at or after it, or offset -1 / timestamp -1 if there is none. -4 and -5 (tiered storage,
v8+) are answered like -2, since everything is local. Stale/newer `current_leader_epoch` gets FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH. v0's `max_num_offsets` list form is below our minimum version.
"""

from __future__ import annotations

from kbroker.broker import OffsetLookupError
from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.list_offsets_request import ListOffsetsRequest
from protocol.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)


@handles(2, 1, 9)
async def handle(ctx: RequestContext, req: ListOffsetsRequest) -> ListOffsetsResponse:
    broker = ctx.broker
    topics = []
    for t in req.topics:
        tresp = ListOffsetsTopicResponse(name=t.name)
        topics.append(tresp)
        topic = broker.topics.get(t.name)
        for p in t.partitions:
            presp = ListOffsetsPartitionResponse(partition_index=p.partition_index)
            tresp.partitions.append(presp)
            if topic is None or not 0 <= p.partition_index < topic.num_partitions:
                presp.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            try:
                offset, timestamp, epoch = broker.list_offset(
                    t.name, p.partition_index, p.timestamp, p.current_leader_epoch, req.replica_id
                )
            except OffsetLookupError as exc:
                presp.error_code = exc.code
                continue
            presp.offset, presp.timestamp, presp.leader_epoch = offset, timestamp, epoch
    return ListOffsetsResponse(topics=topics)
