"""DeleteTopics (20), v1-6 (v1 is Kafka 4.0's minimum).

Deletes topics by name (v0-5 `topic_names`, v6 `topics[].name`) or by id (v6). Unknown names get
UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID, internal topics INVALID_REQUEST. As Kafka's controller: a
broker with `delete.topic.enable=false` refuses every entry with TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3);
a name or id given twice, or a v6 entry with both or neither, is answered once with INVALID_REQUEST and not deleted.
Partition directories are renamed then removed.
"""

from __future__ import annotations

import uuid
from collections import Counter

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
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
    if not services.config.delete_topic_enable:
        # As Kafka: the whole request is refused before any topic is looked at (INVALID_REQUEST before v3).
        code = ErrorCode.TOPIC_DELETION_DISABLED if ctx.api_version >= 3 else ErrorCode.INVALID_REQUEST
        return DeleteTopicsResponse(
            responses=[
                DeletableTopicResult(name=name, topic_id=topic_id, error_code=code, error_message=DISABLED)
                for name, topic_id in wanted
            ]
        )
    names = Counter(name for name, topic_id in wanted if name is not None and topic_id == ZERO_UUID)
    ids = Counter(topic_id for name, topic_id in wanted if name is None)
    results = []
    answered: set[str | uuid.UUID] = set()
    for name, topic_id in wanted:
        result = DeletableTopicResult(name=name, topic_id=topic_id, error_message=None)
        refusal = _refusal(name, topic_id, names, ids)
        if refusal is not None:
            key: str | uuid.UUID = name if name is not None else topic_id
            if key not in answered:
                answered.add(key)
                result.error_code, result.error_message = ErrorCode.INVALID_REQUEST, refusal
                results.append(result)
            continue
        results.append(result)
        image = services.metadata.image()
        topic = image.topics.get(name) if name is not None else image.topics_by_id.get(topic_id)
        if name is not None and not ctx.authorize(Op.DESCRIBE, R.TOPIC, name):
            # As Kafka: who may not describe a topic is not told whether it exists.
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.error_message = "Authorization failed."
            continue
        if topic is None:
            result.error_code = (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name is not None else ErrorCode.UNKNOWN_TOPIC_ID
            )
            # As Kafka: the error's standard text.
            result.error_message = UNKNOWN_TOPIC if name is not None else UNKNOWN_TOPIC_ID
            continue
        result.name = topic.name
        result.topic_id = topic.topic_id
        if not ctx.authorize(Op.DELETE, R.TOPIC, topic.name):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.error_message = "Authorization failed."
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


DISABLED = "Topic deletion is disabled."
UNKNOWN_TOPIC = "This server does not host this topic-partition."
UNKNOWN_TOPIC_ID = "This server does not host this topic ID."


def _refusal(
    name: str | None, topic_id: uuid.UUID, names: Counter[str], ids: Counter[uuid.UUID]
) -> str | None:
    """Kafka's INVALID_REQUEST reasons for one entry (a duplicate is answered once, nothing deleted for it)."""
    if name is not None and topic_id != ZERO_UUID:
        return "You may not specify both topic name and topic id."
    if name is None and topic_id == ZERO_UUID:
        return "Neither topic name nor id were specified."
    if name is not None and names[name] > 1:
        return "Duplicate topic name."
    if name is None and ids[topic_id] > 1:
        return "Duplicate topic id."
    return None
