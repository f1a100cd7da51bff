"""CreateAcls (30), v2-3 (v2 is Kafka 4.0's minimum).

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for each creation); without an authorizer every
creation gets SECURITY_DISABLED, as in Kafka. A creation Kafka's controller refuses (ANY/UNKNOWN types, an empty
name, a principal not of the form Type:name) gets INVALID_REQUEST with the reason; an ACL that exists already is
not added twice. The ACLs are stored like credentials (kbroker/security/image.py) and in force on every node once
their images show them.
"""

from __future__ import annotations

import uuid

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclBinding, AclOperation, validate_new_acl
from kbroker.security.image import SecurityChange
from protocol.errors import ErrorCode
from protocol.messages.create_acls_request import CreateAclsRequest
from protocol.messages.create_acls_response import AclCreationResult, CreateAclsResponse

SECURITY_DISABLED = "No Authorizer is configured."


@handles(CreateAclsRequest, 2, 3)
async def handle(ctx: RequestContext, req: CreateAclsRequest) -> CreateAclsResponse:
    def all_failed(code: ErrorCode, message: str | None) -> CreateAclsResponse:
        return CreateAclsResponse(
            results=[AclCreationResult(error_code=code, error_message=message) for _ in req.creations]
        )

    if not ctx.services.authorizer.enabled:
        return all_failed(ErrorCode.SECURITY_DISABLED, SECURITY_DISABLED)
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return all_failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    existing = set(ctx.services.metadata.image().security.acls.values())
    results: list[AclCreationResult] = []
    creates: dict[str, AclBinding] = {}
    for c in req.creations:
        result = AclCreationResult(error_code=ErrorCode.NONE, error_message=None)
        results.append(result)
        try:
            binding = validate_new_acl(
                c.resource_type,
                c.resource_name,
                c.resource_pattern_type,
                c.principal,
                c.host,
                c.operation,
                c.permission_type,
            )
        except KafkaError as exc:
            result.error_code, result.error_message = exc.code, exc.message
            continue
        if binding not in existing and binding not in creates.values():
            creates[str(uuid.uuid4())] = binding
    if creates:
        try:
            await ctx.services.security_admin.alter_security(SecurityChange(acl_creates=creates))
        except KafkaError as exc:
            for result in results:
                if result.error_code == ErrorCode.NONE:
                    result.error_code, result.error_message = exc.code, exc.message
    return CreateAclsResponse(results=results)
