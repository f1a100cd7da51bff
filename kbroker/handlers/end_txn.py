"""EndTxn (26), v0-4.

Commit or abort the producer's transaction (WRITE on the transactional id, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED). The answer comes once the decision (PrepareCommit / PrepareAbort) is
written to `__transaction_state`, acknowledged by its in-sync replicas: from then on the transaction completes even if
the coordinator fails. The coordinator then writes the markers on every partition of the transaction, and the
Complete state; until that is done the id's next requests get CONCURRENT_TRANSACTIONS. Errors: INVALID_TXN_STATE (no
transaction, or the other decision was taken), PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2),
INVALID_PRODUCER_ID_MAPPING, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS; a retried end already complete gets NONE.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.end_txn_request import EndTxnRequest
from protocol.messages.end_txn_response import EndTxnResponse


@handles(EndTxnRequest, 0, 4)
async def handle(ctx: RequestContext, req: EndTxnRequest) -> EndTxnResponse:
    if not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id):
        return EndTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    error = await ctx.services.transactions.end_txn(
        req.transactional_id, req.producer_id, req.producer_epoch, req.committed
    )
    if error is ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return EndTxnResponse(error_code=error)
