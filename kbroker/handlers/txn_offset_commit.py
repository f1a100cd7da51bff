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

Before any of that, in Kafka's order: WRITE on the transactional id (else every partition gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else GROUP_AUTHORIZATION_FAILED), then per topic READ
(TOPIC_AUTHORIZATION_FAILED) and existence (UNKNOWN_TOPIC_OR_PARTITION, also for a partition the topic lacks); only the
remaining partitions go to the group coordinator, and their answers follow the refused ones.
"""

from __future__ import annotations

from kbroker.coordinator.offsets import OffsetCommitEntry
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.txn_offset_commit_request import TxnOffsetCommitRequest
from protocol.messages.txn_offset_commit_response import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)


def _answer(answers: dict[str, list[tuple[int, ErrorCode]]]) -> TxnOffsetCommitResponse:
    return TxnOffsetCommitResponse(
        topics=[
            TxnOffsetCommitResponseTopic(
                name=name,
                partitions=[
                    TxnOffsetCommitResponsePartition(partition_index=partition, error_code=error)
                    for partition, error in partitions
                ],
            )
            for name, partitions in answers.items()
        ]
    )


def _refused(req: TxnOffsetCommitRequest, error: ErrorCode) -> TxnOffsetCommitResponse:
    answers: dict[str, list[tuple[int, ErrorCode]]] = {}
    for t in req.topics:
        answers.setdefault(t.name, []).extend((p.partition_index, error) for p in t.partitions)
    return _answer(answers)


@handles(TxnOffsetCommitRequest, 0, 4)
async def handle(ctx: RequestContext, req: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    if not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id):
        return _refused(req, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return _refused(req, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    image = ctx.services.metadata.image()
    answers: dict[str, list[tuple[int, ErrorCode]]] = {}
    entries: list[OffsetCommitEntry] = []
    for t in req.topics:
        readable = ctx.authorize(Op.READ, R.TOPIC, t.name)
        for p in t.partitions:
            if not readable:
                answers.setdefault(t.name, []).append(
                    (p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                )
            elif not image.has_partition(t.name, p.partition_index):
                answers.setdefault(t.name, []).append(
                    (p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                )
            else:
                entries.append(
                    OffsetCommitEntry(
                        topic=t.name,
                        partition=p.partition_index,
                        offset=p.committed_offset,
                        leader_epoch=p.committed_leader_epoch if ctx.api_version >= 2 else -1,
                        metadata=p.committed_metadata,
                    )
                )
    if not entries:
        return _answer(answers)
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
    for r in results:
        error = r.error
        if error is ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version < 4:
            error = ErrorCode.INVALID_TXN_STATE  # the error code clients before v4 know (KIP-890)
        answers.setdefault(r.topic, []).append((r.partition, error))
    return _answer(answers)
