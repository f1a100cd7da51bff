"""DescribeTopicPartitions (75), v0: the Java Admin's describeTopics.

Topics are answered in name order (all topics when the list is empty), partitions in index order, at most
`response_partition_limit` partitions per response; when the limit cuts a topic, `next_cursor` says where to resume,
and a request's `cursor` resumes there. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION. Eligible leader replicas
(KIP-966) are not tracked: reported as empty lists
(the Java Admin cannot read null there).
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.describe_topic_partitions_request import DescribeTopicPartitionsRequest
from protocol.messages.describe_topic_partitions_response import (
    Cursor,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)


@handles(DescribeTopicPartitionsRequest, 0, 0)
async def handle(ctx: RequestContext, req: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    image = ctx.services.metadata.image()
    names = sorted({t.name for t in req.topics}) if req.topics else sorted(image.topics)
    start_topic, start_partition = "", 0
    if req.cursor is not None:
        start_topic, start_partition = req.cursor.topic_name, req.cursor.partition_index
    budget = max(req.response_partition_limit, 1)
    response = DescribeTopicPartitionsResponse()
    for name in names:
        if name < start_topic:
            continue
        topic = image.topics.get(name)
        if topic is None:
            response.topics.append(
                DescribeTopicPartitionsResponseTopic(
                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name
                )
            )
            continue
        first = start_partition if name == start_topic else 0
        tresp = DescribeTopicPartitionsResponseTopic(
            name=name, topic_id=topic.topic_id, is_internal=topic.is_internal
        )
        response.topics.append(tresp)
        states = image.partitions.get(name, {})
        for p in range(first, topic.num_partitions):
            if budget == 0:
                response.next_cursor = Cursor(topic_name=name, partition_index=p)
                return response
            state = states.get(p)
            leader = image.live_leader(name, p)
            replicas = list(state.replicas) if state is not None else []
            tresp.partitions.append(
                DescribeTopicPartitionsResponsePartition(
                    error_code=ErrorCode.NONE if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                    partition_index=p,
                    leader_id=leader,
                    leader_epoch=state.leader_epoch if state is not None else -1,
                    replica_nodes=replicas,
                    isr_nodes=list(state.isr) if state is not None else [],
                    offline_replicas=[r for r in replicas if r not in image.brokers],
                    # The Java Admin streams these lists without a null check, so send empty lists, not null.
                    eligible_leader_replicas=[],
                    last_known_elr=[],
                )
            )
            budget -= 1
    return response
