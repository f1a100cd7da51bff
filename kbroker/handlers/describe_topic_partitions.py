"""DescribeTopicPartitions (75), v0: the Java Admin's describeTopics.

Topics are answered in name order (all topics when the list is empty), partitions in index order, at most
`response_partition_limit` partitions per response; when the limit is used up, `next_cursor` says where to resume
(and nothing after it is answered), and a request's `cursor` resumes there (a cursor naming a topic the request does
not list gets INVALID_REQUEST for every topic, as Kafka). Unknown topics get UNKNOWN_TOPIC_OR_PARTITION, illegal names
INVALID_TOPIC_EXCEPTION. Eligible leader replicas (KIP-966) are not tracked: reported as empty lists (the Java Admin
cannot read null there).
"""

from __future__ import annotations

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.metadata.topics import validate_topic_name
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
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
    # A topic one may not describe is left out of a listing of all, and refused when named (Kafka's rules).
    names = (
        sorted({t.name for t in req.topics})
        if req.topics
        else sorted(n for n in image.topics if ctx.authorize(Op.DESCRIBE, R.TOPIC, n))
    )
    start_topic, start_partition = "", 0
    if req.cursor is not None:
        start_topic, start_partition = req.cursor.topic_name, req.cursor.partition_index
        if req.topics and start_topic not in names:
            # As Kafka: a cursor must name a topic of the request.
            return DescribeTopicPartitionsResponse(
                topics=[
                    DescribeTopicPartitionsResponseTopic(error_code=ErrorCode.INVALID_REQUEST, name=name)
                    for name in names
                ]
            )
    budget = max(req.response_partition_limit, 1)
    response = DescribeTopicPartitionsResponse()
    for name in names:
        if name < start_topic:
            continue
        first = start_partition if name == start_topic else 0
        if budget == 0:
            # The limit ran out at the end of the previous topic: only the cursor says where to go on.
            response.next_cursor = Cursor(topic_name=name, partition_index=first)
            return response
        topic = image.topics.get(name)
        if not ctx.authorize(Op.DESCRIBE, R.TOPIC, name):
            response.topics.append(
                DescribeTopicPartitionsResponseTopic(
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name
                )
            )
            continue
        if topic is None:
            try:
                validate_topic_name(name)
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            except KafkaError as exc:
                code = exc.code
            # As Kafka: the operations on the name, even for a topic that does not exist.
            response.topics.append(
                DescribeTopicPartitionsResponseTopic(
                    error_code=code,
                    name=name,
                    topic_authorized_operations=ctx.authorized_operations(R.TOPIC, name),
                )
            )
            continue
        tresp = DescribeTopicPartitionsResponseTopic(
            name=name,
            topic_id=topic.topic_id,
            is_internal=topic.is_internal,
            topic_authorized_operations=ctx.authorized_operations(R.TOPIC, name),
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
