"""TxnOffsetCommit (28), v0-4.

A transactional producer commits a group's offsets in its transaction (sendOffsetsToTransaction, after
AddOffsetsToTxn), at the group's coordinator. The offsets are written at once, in a transactional batch of the
producer, but stay pending (OffsetFetch does not show them; with require_stable it answers UNSTABLE_OFFSET_COMMIT)
until the transaction's marker: COMMIT makes them the group's, ABORT drops them (kbroker/coordinator/).
v3+ carry the consumer's group metadata (KIP-447): a member id, generation and instance id that are not current get
UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID, so a zombie that lost its partitions cannot commit;
without them (v0-2, or a producer that names no member) any state of the group accepts the commit. The group's
partition must be in the producer's transaction (AddOffsetsToTxn; checked with the transaction coordinator, KIP-890):
TRANSACTION_ABORTABLE otherwise (INVALID_TXN_STATE before v4). A fenced producer gets INVALID_PRODUCER_EPOCH;
NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE as OffsetCommit.
"""

from __future__ import annotations

from kbroker.coordinator.offsets import OffsetCommitEntry
from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.txn_offset_commit_request import TxnOffsetCommitRequest
from protocol.messages.txn_offset_commit_response import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)


@handles(TxnOffsetCommitRequest, 0, 4)
async def handle(ctx: RequestContext, req: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    entries = [
        OffsetCommitEntry(
            topic=t.name,
            partition=p.partition_index,
            offset=p.committed_offset,
            leader_epoch=p.committed_leader_epoch if ctx.api_version >= 2 else -1,
            metadata=p.committed_metadata,
        )
        for t in req.topics
        for p in t.partitions
    ]
    member_info = ctx.api_version >= 3
    results = await ctx.services.groups.txn_commit_offsets(
        req.transactional_id,
        req.group_id,
        req.producer_id,
        req.producer_epoch,
        req.member_id if member_info else "",
        req.group_instance_id if member_info else None,
        req.generation_id if member_info else -1,
        entries,
    )
    topics: dict[str, TxnOffsetCommitResponseTopic] = {}
    for r in results:
        error = r.error
        if error is ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version < 4:
            error = ErrorCode.INVALID_TXN_STATE  # the error code clients before v4 know (KIP-890)
        topics.setdefault(r.topic, TxnOffsetCommitResponseTopic(name=r.topic)).partitions.append(
            TxnOffsetCommitResponsePartition(partition_index=r.partition, error_code=error)
        )
    return TxnOffsetCommitResponse(topics=list(topics.values()))
