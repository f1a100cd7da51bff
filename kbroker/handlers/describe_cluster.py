"""DescribeCluster (60), v0-1: the cluster id, the controller and every live broker.

Only the broker endpoint type (1) is served; asking for controllers (2, v1) gets MISMATCHED_ENDPOINT_TYPE as in Kafka
when the request reaches a broker, and any other type UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST at v0).
Authorized operations are not reported (no ACLs).
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import CLUSTER_NAME
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.describe_cluster_request import DescribeClusterRequest
from protocol.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse

BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2


@handles(DescribeClusterRequest, 0, 1)
async def handle(ctx: RequestContext, req: DescribeClusterRequest) -> DescribeClusterResponse:
    image = ctx.services.metadata.image()
    if req.endpoint_type == CONTROLLERS_ENDPOINT:
        # As Kafka's brokers answer: the answer keeps its default endpoint type.
        return DescribeClusterResponse(
            error_code=ErrorCode.MISMATCHED_ENDPOINT_TYPE,
            error_message=(
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
            ),
        )
    if req.endpoint_type != BROKERS_ENDPOINT:
        code = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE if ctx.api_version >= 1 else ErrorCode.INVALID_REQUEST
        return DescribeClusterResponse(
            error_code=code, error_message=f"Unsupported endpoint type {req.endpoint_type}"
        )
    operations = -2147483648  # "not asked" (Kafka's INT32_MIN)
    if req.include_cluster_authorized_operations:
        # As Kafka: the bit field whatever the principal may do (0: nothing).
        operations = ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME)
    return DescribeClusterResponse(
        cluster_authorized_operations=operations,
        cluster_id=image.cluster_id,
        controller_id=image.controller_id,
        endpoint_type=BROKERS_ENDPOINT,
        brokers=[
            DescribeClusterBroker(broker_id=b.node_id, host=address[0], port=address[1], rack=b.rack)
            for _, b in sorted(image.brokers.items())
            if (address := b.endpoint(ctx.listener)) is not None
        ],
    )
