"""InitProducerId (22), v0-5.

For idempotent producers (null transactional id) every call returns a fresh producer id with epoch 0, unique across
restarts (ids are reserved in blocks persisted in the data directory, or in etcd in a cluster). The Java client bumps
an idempotent producer's epoch itself (KIP-360), so no epoch bump is needed here.

With a transactional id the request goes to the id's transaction coordinator (kbroker/transaction/): NOT_COORDINATOR
elsewhere; the id's producer id with its next epoch, which fences every older producer of the id (an open
transaction of theirs is aborted first: the answer is then CONCURRENT_TRANSACTIONS and the client asks again);
INVALID_TRANSACTION_TIMEOUT beyond transaction.max.timeout.ms; v3+ may name the producer id and epoch it had
(KIP-360), PRODUCER_FENCED if another producer took over (INVALID_PRODUCER_EPOCH before v4, as Kafka); an empty
transactional id is INVALID_REQUEST, and so is a producer id without an epoch or the reverse.
"""

from __future__ import annotations

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.init_producer_id_response import InitProducerIdResponse


def _refused(code: ErrorCode) -> InitProducerIdResponse:
    # Kafka's error answer names no producer: id and epoch -1.
    return InitProducerIdResponse(error_code=code, producer_id=-1, producer_epoch=-1)


@handles(InitProducerIdRequest, 0, 5)
async def handle(ctx: RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse:
    if req.transactional_id is not None:
        return await _transactional(ctx, req)
    # An idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (Kafka's rule).
    if not (ctx.authorize_cluster(Op.IDEMPOTENT_WRITE) or ctx.authorize_by_resource_type(Op.WRITE, R.TOPIC)):
        return _refused(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    try:
        producer_id = await ctx.services.producer_ids.next_producer_id()
    except KafkaError as exc:
        # The cluster's producer id counter is in etcd; unreachable, the client retries.
        return _refused(exc.code)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)


async def _transactional(ctx: RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse:
    assert req.transactional_id is not None
    if not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id):
        return _refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    producer_id, epoch = (req.producer_id, req.producer_epoch) if ctx.api_version >= 3 else (-1, -1)
    if (producer_id < 0) != (epoch < 0):
        return _refused(ErrorCode.INVALID_REQUEST)
    error, producer_id, epoch = await ctx.services.transactions.init_producer_id(
        req.transactional_id, req.transaction_timeout_ms, producer_id, epoch
    )
    if error is not ErrorCode.NONE:
        if error is ErrorCode.PRODUCER_FENCED and ctx.api_version < 4:
            error = ErrorCode.INVALID_PRODUCER_EPOCH
        return _refused(error)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=epoch)
