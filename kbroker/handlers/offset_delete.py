"""OffsetDelete (47), v0.

Deletes committed offsets of a group (tombstones in `__consumer_offsets`), answering once they are durable. Group
errors go in the top-level error code alone: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a group with members whose protocol
is not `consumer`, so we cannot tell what it consumes), NOT_COORDINATOR, INVALID_GROUP_ID. Per partition:
GROUP_SUBSCRIBED_TO_TOPIC for a topic the members consume, UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that
does not exist.
"""

from __future__ import annotations

from kbroker.coordinator.offsets import PartitionResult
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.offset_delete_request import OffsetDeleteRequest
from protocol.messages.offset_delete_response import (
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)


@handles(OffsetDeleteRequest, 0, 0)
async def handle(ctx: RequestContext, req: OffsetDeleteRequest) -> OffsetDeleteResponse:
    image = ctx.services.metadata.image()
    if not ctx.authorize(Op.DELETE, R.GROUP, req.group_id):
        return OffsetDeleteResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    answers: dict[str, list[tuple[int, ErrorCode]]] = {}
    known: dict[str, list[int]] = {}
    unknown: list[tuple[str, int]] = []
    refused: list[tuple[str, int]] = []
    for t in req.topics:
        answers.setdefault(t.name, [])
        topic = image.topics.get(t.name)
        readable = ctx.authorize(Op.READ, R.TOPIC, t.name)
        for p in t.partitions:
            if not readable:
                refused.append((t.name, p.partition_index))
            elif topic is None or not 0 <= p.partition_index < topic.num_partitions:
                unknown.append((t.name, p.partition_index))
            else:
                known.setdefault(t.name, []).append(p.partition_index)
    # The group is checked even when every partition is unknown, so a missing group is reported as such.
    result = await ctx.services.groups.delete_offsets(req.group_id, list(known.items()))
    if result.error != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=result.error)
    partitions: list[PartitionResult] = list(result.partitions)
    partitions.extend(PartitionResult(name, p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for name, p in unknown)
    partitions.extend(PartitionResult(name, p, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for name, p in refused)
    for r in partitions:
        answers[r.topic].append((r.partition, r.error))
    return OffsetDeleteResponse(
        topics=[
            OffsetDeleteResponseTopic(
                name=name,
                partitions=[
                    OffsetDeleteResponsePartition(partition_index=partition, error_code=error)
                    for partition, error in entries
                ],
            )
            for name, entries in answers.items()
        ]
    )
