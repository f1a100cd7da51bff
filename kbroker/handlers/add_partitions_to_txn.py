"""AddPartitionsToTxn (24), v0-5.

A transactional producer names the partitions it is about to write to (v0-3: one transaction). It needs WRITE on
the transactional id (else every partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and on each topic: a topic it
may not write, or an internal topic (never added this way, as in Kafka, whatever the ACLs), gets
TOPIC_AUTHORIZATION_FAILED, then a partition that does not exist UNKNOWN_TOPIC_OR_PARTITION; if any partition got one,
the others get OPERATION_NOT_ATTEMPTED and nothing is added. Then the transaction coordinator adds them to the
producer's transaction, beginning it (kbroker/transaction/): every partition gets the one answer, NONE or
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS (the previous
transaction is still completing: retry), NOT_COORDINATOR.

v4+ is for brokers (KIP-890), so it needs CLUSTER_ACTION on the cluster (else the top-level
CLUSTER_AUTHORIZATION_FAILED) and checks no other ACL: several transactions at once, each either added or, with
`verify_only`, checked (a partition leader asking before a batch may begin a transaction on its partition;
TRANSACTION_ABORTABLE for a partition not in the transaction).
"""

from __future__ import annotations

from kbroker.common import TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.metadata.image import INTERNAL_TOPICS
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn_request import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.add_partitions_to_txn_response import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopicResult,
)


async def _one(
    ctx: RequestContext,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    topics: list[AddPartitionsToTxnTopic],
    verify_only: bool,
) -> dict[TopicPartition, ErrorCode]:
    partitions = [TopicPartition(t.name, p) for t in topics for p in t.partitions]
    from_client = ctx.api_version < 4  # v4+ come from brokers, authorized for the cluster as a whole
    if from_client and not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, transactional_id):
        return dict.fromkeys(partitions, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    image = ctx.services.metadata.image()
    writable = {
        t.name
        for t in topics
        if not from_client or (t.name not in INTERNAL_TOPICS and ctx.authorize(Op.WRITE, R.TOPIC, t.name))
    }
    refused: dict[TopicPartition, ErrorCode] = {}
    for tp in partitions:
        if tp.topic not in writable:
            refused[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif not image.has_partition(tp.topic, tp.partition):
            refused[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if refused:
        errors = dict.fromkeys(partitions, ErrorCode.OPERATION_NOT_ATTEMPTED)
        errors.update(refused)
        return errors
    transactions = ctx.services.transactions
    if verify_only:
        return transactions.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
    error = await transactions.add_partitions(transactional_id, producer_id, producer_epoch, partitions)
    if error is ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return dict.fromkeys(partitions, error)


def _by_topic(errors: dict[TopicPartition, ErrorCode]) -> list[AddPartitionsToTxnTopicResult]:
    topics: dict[str, AddPartitionsToTxnTopicResult] = {}
    for tp, error in errors.items():
        topic = topics.setdefault(tp.topic, AddPartitionsToTxnTopicResult(name=tp.topic))
        topic.results_by_partition.append(
            AddPartitionsToTxnPartitionResult(partition_index=tp.partition, partition_error_code=error)
        )
    return list(topics.values())


@handles(AddPartitionsToTxnRequest, 0, 5)
async def handle(ctx: RequestContext, req: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    if ctx.api_version < 4:
        errors = await _one(
            ctx,
            req.v3_and_below_transactional_id,
            req.v3_and_below_producer_id,
            req.v3_and_below_producer_epoch,
            req.v3_and_below_topics,
            False,
        )
        return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=_by_topic(errors))
    if not ctx.authorize_cluster(Op.CLUSTER_ACTION):
        return AddPartitionsToTxnResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    results = []
    for txn in req.transactions:
        errors = await _one(
            ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics, txn.verify_only
        )
        results.append(
            AddPartitionsToTxnResult(transactional_id=txn.transactional_id, topic_results=_by_topic(errors))
        )
    return AddPartitionsToTxnResponse(results_by_transaction=results)
