"""InitProducerId (22), v0-5.

For idempotent producers (null transactional id) every call returns a fresh producer id with epoch 0, unique across
restarts (ids are reserved in blocks persisted in the data directory, or in etcd in a cluster). The Java client bumps
an idempotent producer's epoch itself (KIP-360), so no epoch bump is needed here.
Not implemented: transactions. A transactional id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED with a clear message
(docs/kafka-differences.md).
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
        return _refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    # An idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (Kafka's rule).
    if not (ctx.authorize_cluster(Op.IDEMPOTENT_WRITE) or ctx.authorize_by_resource_type(Op.WRITE, R.TOPIC)):
        return _refused(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    try:
        producer_id = await ctx.services.producer_ids.next_producer_id()
    except KafkaError as exc:
        # The cluster's producer id counter is in etcd; unreachable, the client retries.
        return _refused(exc.code)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)
