"""DescribeClientQuotas (48), v0-1: the client quotas whose entity matches every component of the filter (KIP-546):
EXACT a name, DEFAULT the default entity, SPECIFIED any named entity of that type; `strict` asks for entities with
no other types. Needs DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED); a type filtered twice or an
unknown match type gets INVALID_REQUEST.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation
from protocol.errors import ErrorCode
from protocol.messages.describe_client_quotas_request import DescribeClientQuotasRequest
from protocol.messages.describe_client_quotas_response import (
    DescribeClientQuotasResponse,
    EntityData,
    EntryData,
    ValueData,
)

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


@handles(DescribeClientQuotasRequest, 0, 1)
async def handle(ctx: RequestContext, req: DescribeClientQuotasRequest) -> DescribeClientQuotasResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE_CONFIGS):
        return DescribeClientQuotasResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, entries=None)  # type: ignore[arg-type]
    types = [c.entity_type for c in req.components]
    if len(set(types)) != len(types):
        return DescribeClientQuotasResponse(
            error_code=ErrorCode.INVALID_REQUEST,
            error_message=f"Duplicate entity type in filter {types}",
            entries=None,  # type: ignore[arg-type]
        )
    for c in req.components:
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            return DescribeClientQuotasResponse(
                error_code=ErrorCode.INVALID_REQUEST,
                error_message=f"Unknown match type {c.match_type}",
                entries=None,  # type: ignore[arg-type]
            )
    entries: list[EntryData] = []
    for entity, values in sorted(
        ctx.services.metadata.image().security.client_quotas.items(), key=lambda item: str(item[0])
    ):
        names = dict(entity)
        if req.strict and set(names) != set(types):
            continue
        matched = True
        for c in req.components:
            if c.entity_type not in names:
                matched = False
            elif c.match_type == MATCH_EXACT:
                matched = matched and names[c.entity_type] == c.match
            elif c.match_type == MATCH_DEFAULT:
                matched = matched and names[c.entity_type] is None
            else:
                matched = matched and names[c.entity_type] is not None
        if matched:
            entries.append(
                EntryData(
                    entity=[EntityData(entity_type=t, entity_name=n) for t, n in entity],
                    values=[ValueData(key=k, value=v) for k, v in sorted(values.items())],
                )
            )
    return DescribeClientQuotasResponse(error_message=None, entries=entries)
