"""ListTransactions (66), v0-1.

The transactional ids this node coordinates (kafka-transactions.sh list), filtered by state names (unknown names
are returned in `unknown_state_filters`), producer ids and, from v1, by how long the transaction has been running
(`duration_filter` ms, -1 for any). COORDINATOR_NOT_AVAILABLE while the coordinator is not running. Only the ids the
principal may DESCRIBE are listed (Kafka's rule; the others are left out without an error).
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.messages.list_transactions_request import ListTransactionsRequest
from protocol.messages.list_transactions_response import ListTransactionsResponse, TransactionState


@handles(ListTransactionsRequest, 0, 1)
async def handle(ctx: RequestContext, req: ListTransactionsRequest) -> ListTransactionsResponse:
    duration = req.duration_filter if ctx.api_version >= 1 else -1
    error, listings, unknown = ctx.services.transactions.list_transactions(
        req.state_filters, req.producer_id_filters, duration
    )
    return ListTransactionsResponse(
        error_code=error,
        unknown_state_filters=unknown,
        transaction_states=[
            TransactionState(
                transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state
            )
            for t in listings
            if ctx.authorize(Op.DESCRIBE, R.TRANSACTIONAL_ID, t.transactional_id)
        ],
    )
