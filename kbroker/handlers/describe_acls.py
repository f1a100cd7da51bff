"""DescribeAcls (29), v1-3 (v1 is Kafka 4.0's minimum).

The ACLs matching a filter (AclBindingFilter: ANY and MATCH patterns, null fields match everything), grouped by
resource pattern. Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED); SECURITY_DISABLED without an
authorizer; INVALID_REQUEST for a filter with unknown values.
"""

from __future__ import annotations

from kbroker.handlers.create_acls import SECURITY_DISABLED
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclBindingFilter, AclOperation
from protocol.errors import ErrorCode
from protocol.messages.describe_acls_request import DescribeAclsRequest
from protocol.messages.describe_acls_response import (
    AclDescription,
    DescribeAclsResource,
    DescribeAclsResponse,
)


@handles(DescribeAclsRequest, 1, 3)
async def handle(ctx: RequestContext, req: DescribeAclsRequest) -> DescribeAclsResponse:
    if not ctx.services.authorizer.enabled:
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED, error_message=SECURITY_DISABLED)
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        return DescribeAclsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None)
    acl_filter = AclBindingFilter(
        req.resource_type_filter,
        req.resource_name_filter,
        req.pattern_type_filter,
        req.principal_filter,
        req.host_filter,
        req.operation,
        req.permission_type,
    )
    problem = acl_filter.check()
    if problem is not None:
        return DescribeAclsResponse(error_code=ErrorCode.INVALID_REQUEST, error_message=problem)
    resources: dict[tuple[int, str, int], DescribeAclsResource] = {}
    for acl in ctx.services.metadata.image().security.acls.values():
        if not acl_filter.matches(acl):
            continue
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        resource = resources.get(key)
        if resource is None:
            resource = resources[key] = DescribeAclsResource(
                resource_type=acl.resource_type,
                resource_name=acl.resource_name,
                pattern_type=acl.pattern_type,
            )
        resource.acls.append(
            AclDescription(
                principal=acl.principal,
                host=acl.host,
                operation=acl.operation,
                permission_type=acl.permission_type,
            )
        )
    return DescribeAclsResponse(error_message=None, resources=[resources[k] for k in sorted(resources)])
