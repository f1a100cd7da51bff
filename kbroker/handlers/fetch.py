"""Fetch (1), v4-17 (v4 is Kafka 4.0's minimum).

Returns whole stored batches from `fetch_offset` up to the high watermark (consumers) or the log end (followers,
replica_id >= 0), within `partition_max_bytes` and the request's `max_bytes`, except that the first partition with
data always gets at least one whole batch so a batch larger than the limits can still be consumed (Kafka's rule).
Long poll: if fewer than `min_bytes` are ready, wait up to `max_wait_ms` for more.
Every requested partition is answered. Topics are named by id from v13 (UNKNOWN_TOPIC_ID for unknown ids).
Fetch sessions (KIP-227) are not kept: we always answer session_id 0, which makes clients send full fetches.
An offset below the log start or above the high watermark gets OFFSET_OUT_OF_RANGE; a stale current_leader_epoch
gets FENCED_LEADER_EPOCH and a newer one UNKNOWN_LEADER_EPOCH. Without transactions the last stable offset equals
the high watermark, so read_committed and read_uncommitted see the same records.
Not implemented: preferred read replicas (KIP-392: always -1).
"""

from __future__ import annotations

import uuid

import trio

from kbroker.broker import Broker, FetchResult, now_ms
from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest
from protocol.messages.fetch_response import FetchableTopicResponse, FetchResponse, PartitionData

EMPTY = b""


def _read_partition(
    broker: Broker, topic: str, part: FetchPartition, replica_id: int, max_bytes: int, first: bool
) -> tuple[PartitionData, int]:
    result: FetchResult = broker.read_partition(
        topic,
        part.partition,
        fetch_offset=part.fetch_offset,
        max_bytes=min(part.partition_max_bytes, max_bytes) if not first else part.partition_max_bytes,
        current_leader_epoch=part.current_leader_epoch,
        replica_id=replica_id,
        follower_log_start_offset=part.log_start_offset,
        now=now_ms(),
        min_one_batch=first,
    )
    data = PartitionData(
        partition_index=part.partition,
        error_code=result.error_code,
        high_watermark=result.high_watermark,
        last_stable_offset=result.high_watermark,
        log_start_offset=result.log_start_offset,
        records=result.records,
    )
    if result.diverging_epoch is not None:
        data.diverging_epoch.epoch, data.diverging_epoch.end_offset = result.diverging_epoch
    return data, len(result.records)


def _fetch_once(ctx: RequestContext, req: FetchRequest, replica_id: int) -> tuple[FetchResponse, int]:
    broker = ctx.broker
    by_id = ctx.api_version >= 13
    responses: list[FetchableTopicResponse] = []
    budget = req.max_bytes if ctx.api_version >= 3 else 2**31 - 1
    total = 0
    for ft in req.topics:
        if by_id:
            topic = broker.topics.by_id.get(ft.topic_id)
            name = topic.name if topic is not None else None
            unknown = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = broker.topics.get(ft.topic)
            name = ft.topic
            unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        tresp = FetchableTopicResponse(
            topic=ft.topic if not by_id else "", topic_id=ft.topic_id if by_id else uuid.UUID(int=0)
        )
        responses.append(tresp)
        for part in ft.partitions:
            if topic is None or name is None or not 0 <= part.partition < topic.num_partitions:
                tresp.partitions.append(
                    PartitionData(
                        partition_index=part.partition, error_code=unknown, high_watermark=-1, records=EMPTY
                    )
                )
                continue
            data, size = _read_partition(
                broker, name, part, replica_id, max(budget - total, 0), first=total == 0
            )
            total += size
            tresp.partitions.append(data)
    return FetchResponse(responses=responses, session_id=0), total


@handles(1, 4, 17)
async def handle(ctx: RequestContext, req: FetchRequest) -> FetchResponse:
    replica_id = req.replica_state.replica_id if ctx.api_version >= 15 else req.replica_id
    deadline = trio.current_time() + max(req.max_wait_ms, 0) / 1000
    while True:
        response, total = _fetch_once(ctx, req, replica_id)
        errors = any(p.error_code for t in response.responses for p in t.partitions)
        if total >= max(req.min_bytes, 1) or errors or trio.current_time() >= deadline:
            if replica_id >= 0:
                ctx.broker.on_follower_fetch_done(replica_id, req)
            return response
        with trio.move_on_at(deadline):
            await ctx.broker.wait_data_arrived()
