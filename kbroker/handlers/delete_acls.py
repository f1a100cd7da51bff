"""DeleteAcls (31), v2-3 (v2 is Kafka 4.0's minimum).

Deletes every ACL matching each filter and lists them. Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for
each filter); SECURITY_DISABLED without an authorizer; INVALID_REQUEST for a filter with unknown values.
"""

from __future__ import annotations

from kbroker.common import KafkaError
from kbroker.handlers.create_acls import SECURITY_DISABLED
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclBindingFilter, AclOperation
from kbroker.security.image import SecurityChange
from protocol.errors import ErrorCode
from protocol.messages.delete_acls_request import DeleteAclsRequest
from protocol.messages.delete_acls_response import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsResponse,
)


@handles(DeleteAclsRequest, 2, 3)
async def handle(ctx: RequestContext, req: DeleteAclsRequest) -> DeleteAclsResponse:
    def all_failed(code: ErrorCode, message: str | None) -> DeleteAclsResponse:
        return DeleteAclsResponse(
            filter_results=[
                DeleteAclsFilterResult(error_code=code, error_message=message) for _ in req.filters
            ]
        )

    if not ctx.services.authorizer.enabled:
        return all_failed(ErrorCode.SECURITY_DISABLED, SECURITY_DISABLED)
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return all_failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    acls = ctx.services.metadata.image().security.acls
    results: list[DeleteAclsFilterResult] = []
    deletes: set[str] = set()
    for f in req.filters:
        acl_filter = AclBindingFilter(
            f.resource_type_filter,
            f.resource_name_filter,
            f.pattern_type_filter,
            f.principal_filter,
            f.host_filter,
            f.operation,
            f.permission_type,
        )
        problem = acl_filter.check()
        if problem is not None:
            results.append(
                DeleteAclsFilterResult(error_code=ErrorCode.INVALID_REQUEST, error_message=problem)
            )
            continue
        result = DeleteAclsFilterResult(error_message=None)
        results.append(result)
        for acl_id, acl in sorted(acls.items(), key=lambda item: item[0]):
            if acl_filter.matches(acl):
                deletes.add(acl_id)
                result.matching_acls.append(
                    DeleteAclsMatchingAcl(
                        error_message=None,
                        resource_type=acl.resource_type,
                        resource_name=acl.resource_name,
                        pattern_type=acl.pattern_type,
                        principal=acl.principal,
                        host=acl.host,
                        operation=acl.operation,
                        permission_type=acl.permission_type,
                    )
                )
    if deletes:
        try:
            await ctx.services.security_admin.alter_security(SecurityChange(acl_deletes=frozenset(deletes)))
        except KafkaError as exc:
            for result in results:
                if result.error_code == ErrorCode.NONE:
                    result.error_code, result.error_message = exc.code, exc.message
                    result.matching_acls = []
    return DeleteAclsResponse(filter_results=results)
