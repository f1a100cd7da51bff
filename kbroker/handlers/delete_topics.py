"""DeleteTopics (20), v1-6 (v1 is Kafka 4.0's minimum).

Deletes topics by name (v0-5 `topic_names`, v6 `topics[].name`) or by id (v6). Unknown names get
UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID; internal topics and a broker with `delete.topic.enable=false`
get INVALID_REQUEST / TOPIC_DELETION_DISABLED as in Kafka. Partition directories are renamed then removed.
"""

from __future__ import annotations

import uuid

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.delete_topics_request import DeleteTopicsRequest
from protocol.messages.delete_topics_response import DeletableTopicResult, DeleteTopicsResponse
from protocol.primitives import ZERO_UUID


@handles(DeleteTopicsRequest, 1, 6)
async def handle(ctx: RequestContext, req: DeleteTopicsRequest) -> DeleteTopicsResponse:
    services = ctx.services
    wanted: list[tuple[str | None, uuid.UUID]] = []
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in req.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in req.topic_names]
    results = []
    for name, topic_id in wanted:
        result = DeletableTopicResult(name=name, error_message=None)
        results.append(result)
        image = services.metadata.image()
        topic = image.topics.get(name) if name is not None else image.topics_by_id.get(topic_id)
        if topic is None:
            result.error_code = (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name is not None else ErrorCode.UNKNOWN_TOPIC_ID
            )
            if name is None:
                result.topic_id = topic_id
            continue
        result.name = topic.name
        result.topic_id = topic.topic_id
        if not services.config.delete_topic_enable:
            result.error_code = ErrorCode.TOPIC_DELETION_DISABLED
            continue
        if topic.is_internal:
            result.error_code = ErrorCode.INVALID_REQUEST
            result.error_message = f"Cannot delete internal topic {topic.name}"
            continue
        try:
            await services.topic_admin.delete_topic(topic.name)
        except KafkaError as exc:
            result.error_code = exc.code
            result.error_message = exc.message
    return DeleteTopicsResponse(responses=results)
