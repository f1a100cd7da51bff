"""DescribeTransactions (65), v0.

The state of each transactional id at its coordinator (kafka-transactions.sh describe): state name (Kafka's: Empty,
Ongoing, PrepareCommit, ...), producer id and epoch, timeout, start time (-1 when none is open) and the partitions of
the open transaction. TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know, NOT_COORDINATOR on another
node than its coordinator, INVALID_REQUEST for an empty id. An id the principal may not DESCRIBE gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (and nothing else), and of a transaction's partitions only those of topics it may
DESCRIBE are listed (Kafka's rules).
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from protocol.messages.describe_transactions_response import (
    DescribeTransactionsResponse,
    TopicData,
    TransactionState,
)


@handles(DescribeTransactionsRequest, 0, 0)
async def handle(ctx: RequestContext, req: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    states = []
    for transactional_id in req.transactional_ids:
        if not ctx.authorize(Op.DESCRIBE, R.TRANSACTIONAL_ID, transactional_id):
            states.append(
                TransactionState(
                    error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    transactional_id=transactional_id,
                )
            )
            continue
        d = ctx.services.transactions.describe(transactional_id)
        topics: dict[str, TopicData] = {}
        for tp in d.partitions:
            if tp.topic not in topics and not ctx.authorize(Op.DESCRIBE, R.TOPIC, tp.topic):
                continue
            topics.setdefault(tp.topic, TopicData(topic=tp.topic)).partitions.append(tp.partition)
        states.append(
            TransactionState(
                error_code=d.error,
                transactional_id=transactional_id,
                transaction_state=d.state,
                transaction_timeout_ms=d.timeout_ms,
                transaction_start_time_ms=d.start_ms,
                producer_id=d.producer_id,
                producer_epoch=d.producer_epoch,
                topics=list(topics.values()),
            )
        )
    return DescribeTransactionsResponse(transaction_states=states)
