"""OffsetCommit (8), v2-9 (v2 is Kafka 4.0's minimum).

Stores each partition's offset, leader epoch (v6+) and metadata for the group, and answers once the records are
durable in `__consumer_offsets`. A member commits with its generation and member id (v7+ also its
`group_instance_id`); generation -1 with an empty member id is a commit from outside the group (admin, manual
assignment), accepted only while the group has no members. v2-4 may set `retention_time_ms` (-1: the broker's
`offsets.retention.minutes`). Errors per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that does not
exist, OFFSET_METADATA_TOO_LARGE beyond `offset.metadata.max.bytes`, and the group's verdict (ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE when the
write failed) on every other partition. v9's member epoch (KIP-848) is read as the classic generation.
Not implemented: transactional commits (TxnOffsetCommit).
"""

from __future__ import annotations

from kbroker.coordinator.offsets import OffsetCommitEntry, PartitionResult
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.offset_commit_request import OffsetCommitRequest
from protocol.messages.offset_commit_response import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)


@handles(OffsetCommitRequest, 2, 9)
async def handle(ctx: RequestContext, req: OffsetCommitRequest) -> OffsetCommitResponse:
    version = ctx.api_version
    image = ctx.services.metadata.image()
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return OffsetCommitResponse(
            topics=[
                OffsetCommitResponseTopic(
                    name=t.name,
                    partitions=[
                        OffsetCommitResponsePartition(
                            partition_index=p.partition_index, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
                        )
                        for p in t.partitions
                    ],
                )
                for t in req.topics
            ]
        )
    # Answers by topic; a topic named twice is answered once. As in Kafka, the partitions refused as unknown or
    # unauthorized come first (in request order, topics too), then the coordinator's answers.
    answers: dict[str, list[tuple[int, ErrorCode]]] = {}
    entries: list[OffsetCommitEntry] = []
    for t in req.topics:
        topic = image.topics.get(t.name)
        readable = ctx.authorize(Op.READ, R.TOPIC, t.name)
        for p in t.partitions:
            if not readable:
                answers.setdefault(t.name, []).append(
                    (p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                )
                continue
            if topic is None or not 0 <= p.partition_index < topic.num_partitions:
                answers.setdefault(t.name, []).append(
                    (p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                )
                continue
            entries.append(
                OffsetCommitEntry(
                    topic=t.name,
                    partition=p.partition_index,
                    offset=p.committed_offset,
                    leader_epoch=p.committed_leader_epoch if version >= 6 else -1,
                    metadata=p.committed_metadata,
                )
            )
    results: tuple[PartitionResult, ...] = ()
    if entries:
        results = await ctx.services.groups.commit_offsets(
            req.group_id,
            req.member_id,
            req.group_instance_id if version >= 7 else None,
            req.generation_id_or_member_epoch,
            entries,
            req.retention_time_ms if 2 <= version <= 4 else -1,
        )
    for r in results:
        answers.setdefault(r.topic, []).append((r.partition, r.error))
    return OffsetCommitResponse(
        topics=[
            OffsetCommitResponseTopic(
                name=name,
                partitions=[
                    OffsetCommitResponsePartition(partition_index=partition, error_code=error)
                    for partition, error in partitions
                ],
            )
            for name, partitions in answers.items()
        ]
    )
