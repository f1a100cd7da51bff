"""CreatePartitions (37), v0-3 (Kafka 4 still has v0).

Raises each topic's partition count to `count`, the new partitions on the replicas `assignments` names (one list per
new partition, each as long as the topic's replication factor, every broker registered) or where the controller
places them. Producers and consumers see the new partitions at their next Metadata refresh. Errors, as Kafka's
controller gives them: an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a count that is not an increase
INVALID_PARTITIONS, a bad assignment INVALID_REPLICA_ASSIGNMENT, more replicas than registered brokers
INVALID_REPLICATION_FACTOR; a topic named twice INVALID_REQUEST (answered once); without ALTER on the topic
TOPIC_AUTHORIZATION_FAILED. validate_only checks without changing anything.
"""

from __future__ import annotations

from collections import Counter

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.create_partitions_request import CreatePartitionsRequest
from protocol.messages.create_partitions_response import CreatePartitionsResponse, CreatePartitionsTopicResult


@handles(CreatePartitionsRequest, 0, 3)
async def handle(ctx: RequestContext, req: CreatePartitionsRequest) -> CreatePartitionsResponse:
    admin = ctx.services.topic_admin
    counts = Counter(t.name for t in req.topics)
    results: list[CreatePartitionsTopicResult] = []
    answered: set[str] = set()
    for topic in req.topics:
        if topic.name in answered:
            continue
        answered.add(topic.name)
        result = CreatePartitionsTopicResult(name=topic.name, error_message=None)
        results.append(result)
        if counts[topic.name] > 1:
            result.error_code = ErrorCode.INVALID_REQUEST
            result.error_message = "Duplicate topic name."
            continue
        if not ctx.authorize(Op.ALTER, R.TOPIC, topic.name):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.error_message = "Topic authorization failed."
            continue
        assignments = (
            [list(a.broker_ids) for a in topic.assignments] if topic.assignments is not None else None
        )
        try:
            await admin.create_partitions(
                topic.name, topic.count, assignments, validate_only=req.validate_only
            )
        except KafkaError as exc:
            result.error_code = exc.code
            result.error_message = exc.message
    return CreatePartitionsResponse(results=results)
