"""Fetch (1), v4-17 (v4 is Kafka 4.0's minimum).

Returns whole stored batches from `fetch_offset` up to the high watermark (consumers) or the log end (followers,
replica_id >= 0). Size limits are Kafka's (KIP-74): each partition gets at most its `partition_max_bytes` and the
whole response at most `max_bytes`, except that the first batch of the first partition with data comes whole even if
it is larger than both, so a consumer can always make progress. Long poll: if fewer than `min_bytes` are ready, the
request parks (kbroker/replication/purgatory.py) until the partitions it asks for have them, or `max_wait_ms` passes.
Every requested partition is answered. Topics are named by id from v13 (UNKNOWN_TOPIC_ID for unknown ids).
An offset below the log start or above the log end gets OFFSET_OUT_OF_RANGE; a stale current_leader_epoch gets
FENCED_LEADER_EPOCH and a newer one UNKNOWN_LEADER_EPOCH. Every partition carries its last stable offset; at
read_committed (isolation level 1) consumers read only up to it, and get the aborted transactions (producer id, first
offset) whose records overlap what they read, so they can skip those records (docs/transactions.md).
From v16 (KIP-951) a partition refused with NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH names its current leader
and epoch, and the response lists that leader's endpoint, as Kafka 3.9 does (Kafka 4 leaves the endpoints out of
the answer to a follower's fetch).
Fetch sessions (KIP-227, from v7): the request's session id and epoch pick a fetch context
(kbroker/replication/fetch_session.py): a full fetch (epoch 0) answers every partition and may create a session, an
incremental one reads the partitions of its session that may have something new (those woken since their last
read: FetchSession.unsettled) and answers those that have, with the same answer as reading all; epoch -1 or a version
before 7 is sessionless (session id 0), and a session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
FETCH_SESSION_TOPIC_ID_ERROR) is a top-level error with no partitions, answered at once.
Not implemented: preferred read replicas (KIP-392: always -1).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from kbroker.handlers.registry import RequestContext, handles
from kbroker.replication.fetch_session import (
    INVALID_SESSION_ID,
    CachedPartition,
    FetchContext,
    IncrementalFetchContext,
    PartitionKey,
)
from kbroker.replication.partition import PartitionRead
from kbroker.replication.replica_manager import FetchParams, FetchPartition
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchRequest
from protocol.messages.fetch_response import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchResponse,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)

ZERO_UUID = uuid.UUID(int=0)
LEADER_HINTS_VERSION = 16
SESSIONS_VERSION = 7
REFUSED = PartitionRead(ErrorCode.UNKNOWN_SERVER_ERROR)


@handles(FetchRequest, 4, 17)
async def handle(ctx: RequestContext, req: FetchRequest) -> FetchResponse:
    by_id = ctx.api_version >= 13
    image = ctx.services.metadata.image()
    replica_id = req.replica_state.replica_id if ctx.api_version >= 15 else req.replica_id
    context = _fetch_context(ctx, req, replica_id)
    if context.error != ErrorCode.NONE:
        return FetchResponse(error_code=context.error, session_id=INVALID_SESSION_ID)
    # A follower needs CLUSTER_ACTION on the cluster; a consumer READ on each topic (Kafka's rules).
    follower_allowed = replica_id >= 0 and ctx.authorize_cluster(Op.CLUSTER_ACTION)

    def plan() -> _Plan:
        """The context's partitions now: each one's refusal (unknown topic id, not authorized), or its read."""
        partitions = context.partitions()
        reads: list[PartitionRead] = []
        # (index in `reads`, the partition as the replica manager reads it) of the partitions not refused.
        wanted: list[tuple[int, FetchPartition]] = []
        for part in partitions:
            if by_id and part.topic is None:
                # As Kafka: an id is resolved once, and a session's unknown id is tried again on each fetch.
                topic = image.topics_by_id.get(part.topic_id)
                part.topic = topic.name if topic is not None else None
            name = part.topic
            if name is None:
                reads.append(PartitionRead(ErrorCode.UNKNOWN_TOPIC_ID))
            elif not (follower_allowed if replica_id >= 0 else ctx.authorize(Op.READ, R.TOPIC, name)):
                reads.append(PartitionRead(ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                fetch = part.fetch_partition(name)
                context.listen(part, fetch.tp)
                wanted.append((len(reads), fetch))
                reads.append(REFUSED)  # replaced by the read
        params = FetchParams(
            replica_id=replica_id,
            max_wait_ms=req.max_wait_ms,
            min_bytes=req.min_bytes,
            max_bytes=req.max_bytes,
            partitions=[partition for _, partition in wanted],
            isolation_level=req.isolation_level,
        )
        return _Plan(params, partitions, reads, [index for index, _ in wanted])

    if isinstance(context, IncrementalFetchContext) and context.session.listeners is not None:
        # Only the partitions that may have something to answer are read, and the long poll waits on the session.
        session = context.session

        def session_plan() -> _Plan:
            context.refresh()
            return plan()

        done, replica_reads = await ctx.services.replicas.fetch_in_session(session, session_plan)
        context.fetch_data = done.partitions
    else:
        done = plan()
        replica_reads = await ctx.services.replicas.fetch_messages(done.params)
    partitions, reads = done.partitions, done.reads
    for index, read in zip(done.wanted, replica_reads, strict=True):
        reads[index] = read
    # An incremental fetch answers only the partitions with something new: response entries are built for those.
    error, session_id, included = context.respond(reads)
    if error != ErrorCode.NONE:
        return FetchResponse(error_code=error, session_id=session_id)
    responses = _topic_responses(partitions, reads, included, by_id)
    endpoints = _leader_hints(ctx, responses) if ctx.api_version >= LEADER_HINTS_VERSION else []
    return FetchResponse(responses=responses, session_id=session_id, node_endpoints=endpoints)


@dataclass(slots=True)
class _Plan:
    params: FetchParams
    partitions: Sequence[CachedPartition]
    reads: list[PartitionRead]
    """Each partition's refusal, or REFUSED where the replica manager's read goes (at the `wanted` indexes)."""
    wanted: list[int]


def _fetch_context(ctx: RequestContext, req: FetchRequest, replica_id: int) -> FetchContext:
    """The request's partitions as a FetchContext (kbroker/replication/fetch_session.py): sessionless before v7
    (no session fields), else whatever its session id and epoch ask for."""
    by_id = ctx.api_version >= 13
    fetch_data = [
        CachedPartition(
            topic_id=fetch_topic.topic_id if by_id else ZERO_UUID,
            topic=None if by_id else fetch_topic.topic,
            partition=part.partition,
            fetch_offset=part.fetch_offset,
            max_bytes=part.partition_max_bytes,
            current_leader_epoch=part.current_leader_epoch,
            fetcher_log_start_offset=part.log_start_offset,
            last_fetched_epoch=part.last_fetched_epoch,
        )
        for fetch_topic in req.topics
        for part in fetch_topic.partitions
    ]
    if ctx.api_version < SESSIONS_VERSION:
        return FetchContext(fetch_data)
    forgotten: list[PartitionKey] = [
        (forgotten_topic.topic_id if by_id else forgotten_topic.topic, index)
        for forgotten_topic in req.forgotten_topics_data
        for index in forgotten_topic.partitions
    ]
    return ctx.services.fetch_sessions.new_context(
        session_id=req.session_id,
        epoch=req.session_epoch,
        privileged=replica_id >= 0,
        uses_topic_ids=by_id,
        fetch_data=fetch_data,
        forgotten=forgotten,
    )


def _topic_responses(
    partitions: Sequence[CachedPartition], reads: list[PartitionRead], included: list[bool], by_id: bool
) -> list[FetchableTopicResponse]:
    """The included partitions, in the context's order, each run of one topic's partitions as one topic entry (as
    Kafka builds its response: a topic comes twice if a session's order splits it)."""
    responses: list[FetchableTopicResponse] = []
    last: CachedPartition | None = None
    for part, read, include in zip(partitions, reads, included, strict=True):
        if not include:
            continue
        if last is None or (part.topic_id if by_id else part.topic) != (
            last.topic_id if by_id else last.topic
        ):
            responses.append(
                FetchableTopicResponse(
                    topic="" if by_id else (part.topic or ""), topic_id=part.topic_id if by_id else ZERO_UUID
                )
            )
        responses[-1].partitions.append(_partition_data(part.partition, read))
        last = part
    return responses


def _partition_data(index: int, read: PartitionRead) -> PartitionData:
    if read.error in (ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED):
        # refused before any read
        return PartitionData(partition_index=index, error_code=read.error, high_watermark=-1, records=b"")
    return PartitionData(
        partition_index=index,
        error_code=read.error,
        high_watermark=read.high_watermark,
        last_stable_offset=read.last_stable_offset,
        log_start_offset=read.log_start_offset,
        # A large read is a FileRecords (a protocol.primitives.Splice, sent with sendfile by the connection): the
        # codec takes it in a records field, which the generated type (what decoding gives) does not say.
        records=read.records,  # type: ignore[arg-type]
        aborted_transactions=_aborted_transactions(read),
    )


def _leader_hints(ctx: RequestContext, responses: list[FetchableTopicResponse]) -> list[NodeEndpoint]:
    """KIP-951: each partition refused for leadership names the leader as this node knows it now."""
    image = ctx.services.metadata.image()
    endpoints: dict[int, NodeEndpoint] = {}
    for topic_response in responses:
        name = topic_response.topic
        if topic_response.topic_id != ZERO_UUID:
            topic = image.topics_by_id.get(topic_response.topic_id)
            name = topic.name if topic is not None else ""
        for data in topic_response.partitions:
            if data.error_code not in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH):
                continue
            leader, epoch, broker = image.current_leader(name, data.partition_index)
            data.current_leader = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            address = broker.endpoint(ctx.listener) if broker is not None else None
            if broker is not None and address is not None:
                # the leader's address on the listener this client uses
                endpoints[broker.node_id] = NodeEndpoint(
                    node_id=broker.node_id, host=address[0], port=address[1], rack=broker.rack
                )
    return [endpoints[node] for node in sorted(endpoints)]


def _aborted_transactions(read: PartitionRead) -> list[AbortedTransaction]:
    """As Kafka: a partition the log was read for has null aborted transactions, except a read_committed read that
    succeeded (then the aborted transactions in range); a partition refused before any read (unknown topic or
    partition, unknown topic id) has an empty list."""
    if read.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return []
    if read.aborted_transactions is None:
        return None  # type: ignore[return-value]  # nullable in the spec; the generated type says list
    return [
        AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
        for txn in read.aborted_transactions
    ]
