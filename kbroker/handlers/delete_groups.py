"""DeleteGroups (42), v0-2.

Deletes each group with all its committed offsets (tombstones in `__consumer_offsets`), answering once they are
durable. GROUP_ID_NOT_FOUND for a group we do not know, NON_EMPTY_GROUP while it has members, NOT_COORDINATOR for a
group another broker coordinates. A group named twice is answered once.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.delete_groups_response import DeletableGroupResult, DeleteGroupsResponse


@handles(DeleteGroupsRequest, 0, 2)
async def handle(ctx: RequestContext, req: DeleteGroupsRequest) -> DeleteGroupsResponse:
    group_ids = list(dict.fromkeys(req.groups_names))
    allowed = [g for g in group_ids if ctx.authorize(Op.DELETE, R.GROUP, g)]
    errors = dict(await ctx.services.groups.delete_groups(allowed)) if allowed else {}
    return DeleteGroupsResponse(
        results=[
            DeletableGroupResult(
                group_id=group_id, error_code=errors.get(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
            )
            for group_id in group_ids
        ]
    )
