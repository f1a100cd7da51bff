"""OffsetFetch (9), v1-9 (v1 is Kafka 4.0's minimum).

The committed offset, leader epoch (v5+) and metadata of each requested partition, whatever the group's state; -1,
epoch -1 and "" where nothing is committed (which also keeps librdkafka from validating the offset). Null topics (v2+)
ask for every offset the group committed. v8+ ask for several groups at once, each with its own error. Group errors
(NOT_COORDINATOR, ...) go in the top-level error code from v2, and in every requested partition in v1, which has no
top-level error. With `require_stable` (v7+, KIP-447: read_committed consumers set it) a partition whose offset is
part of an open transaction gets UNSTABLE_OFFSET_COMMIT (retriable), so a consumer never starts from an offset a
transaction may yet change; without it the last committed offset is answered. v9's member id and epoch only matter
to KIP-848 groups and are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbroker.coordinator.coordinator import OffsetFetchResult
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch_request import OffsetFetchRequest
from protocol.messages.offset_fetch_response import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)

Topics = list[tuple[str, Sequence[int]]] | None


def _by_topic(result: OffsetFetchResult) -> dict[str, list[OffsetFetchResponsePartitions]]:
    """The result's partitions grouped by topic, in the order the coordinator gave them."""
    out: dict[str, list[OffsetFetchResponsePartitions]] = {}
    for f in result.partitions:
        out.setdefault(f.topic, []).append(
            OffsetFetchResponsePartitions(
                partition_index=f.partition,
                committed_offset=f.offset,
                committed_leader_epoch=f.leader_epoch,
                metadata=f.metadata,
                error_code=f.error,
            )
        )
    return out


def _fetch_group(
    ctx: RequestContext, group_id: str, topics: Topics, require_stable: bool
) -> OffsetFetchResponseGroup:
    # Kafka's rules: DESCRIBE on the group, then on each topic; a topic one may not describe is answered
    # TOPIC_AUTHORIZATION_FAILED when asked for by name, and left out when every committed offset is asked for.
    if not ctx.authorize(Op.DESCRIBE, R.GROUP, group_id):
        return OffsetFetchResponseGroup(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    refused: list[tuple[str, Sequence[int]]] = []
    if topics is not None:
        refused = [(name, ps) for name, ps in topics if not ctx.authorize(Op.DESCRIBE, R.TOPIC, name)]
        topics = [(name, ps) for name, ps in topics if ctx.authorize(Op.DESCRIBE, R.TOPIC, name)]
    result = ctx.services.groups.fetch_offsets(group_id, topics, require_stable)
    by_topic = {
        name: partitions
        for name, partitions in _by_topic(result).items()
        if topics is not None or ctx.authorize(Op.DESCRIBE, R.TOPIC, name)
    }
    for name, partitions in refused:
        by_topic[name] = [
            OffsetFetchResponsePartitions(
                partition_index=p,
                committed_offset=-1,
                committed_leader_epoch=-1,
                metadata="",
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            )
            for p in partitions
        ]
    return OffsetFetchResponseGroup(
        group_id=group_id,
        error_code=result.error,
        topics=[
            OffsetFetchResponseTopics(name=name, partitions=partitions)
            for name, partitions in by_topic.items()
        ],
    )


@handles(OffsetFetchRequest, 1, 9)
async def handle(ctx: RequestContext, req: OffsetFetchRequest) -> OffsetFetchResponse:
    version = ctx.api_version
    if version >= 8:
        groups = []
        for g in req.groups:
            topics: Topics = None if g.topics is None else [(t.name, t.partition_indexes) for t in g.topics]
            groups.append(_fetch_group(ctx, g.group_id, topics, req.require_stable))
        return OffsetFetchResponse(groups=groups)

    topics = None if req.topics is None else [(t.name, t.partition_indexes) for t in req.topics]
    group = _fetch_group(ctx, req.group_id, topics, version >= 7 and req.require_stable)
    if group.error_code != ErrorCode.NONE and version < 2:
        # v1 has no top-level error: every requested partition carries the group's error (as Kafka answers).
        return OffsetFetchResponse(
            topics=[
                OffsetFetchResponseTopic(
                    name=name,
                    partitions=[
                        OffsetFetchResponsePartition(
                            partition_index=p,
                            committed_offset=-1,
                            committed_leader_epoch=-1,
                            metadata="",
                            error_code=group.error_code,
                        )
                        for p in partitions
                    ],
                )
                for name, partitions in topics or []
            ]
        )
    return OffsetFetchResponse(
        error_code=group.error_code,
        topics=[
            OffsetFetchResponseTopic(
                name=t.name,
                partitions=[
                    OffsetFetchResponsePartition(
                        partition_index=p.partition_index,
                        committed_offset=p.committed_offset,
                        committed_leader_epoch=p.committed_leader_epoch,
                        metadata=p.metadata,
                        error_code=p.error_code,
                    )
                    for p in t.partitions
                ],
            )
            for t in group.topics
        ],
    )
