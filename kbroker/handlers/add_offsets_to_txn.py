"""AddOffsetsToTxn (25), v0-4.

A transactional producer about to commit a group's offsets in its transaction (sendOffsetsToTransaction): the
group's `__consumer_offsets` partition joins the transaction, so its offsets become visible exactly when the
transaction commits. It needs WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ
on the group (else GROUP_AUTHORIZATION_FAILED). Answers as AddPartitionsToTxn does for that partition
(PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2).
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse


@handles(AddOffsetsToTxnRequest, 0, 4)
async def handle(ctx: RequestContext, req: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    if not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = await ctx.services.transactions.add_offsets(
        req.transactional_id, req.producer_id, req.producer_epoch, req.group_id
    )
    if error is ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return AddOffsetsToTxnResponse(error_code=error)
