"""ListGroups (16), v0-5.

Every group this broker coordinates, with its protocol type; v4+ also its state and may filter by state, v5+ its
type (always `classic`: KIP-848 groups are not implemented) and may filter by type. Filters compare
case-insensitively; an empty filter matches everything. Admin clients send ListGroups to every broker and merge.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.messages.list_groups_request import ListGroupsRequest
from protocol.messages.list_groups_response import ListedGroup, ListGroupsResponse


@handles(ListGroupsRequest, 0, 5)
async def handle(ctx: RequestContext, req: ListGroupsRequest) -> ListGroupsResponse:
    version = ctx.api_version
    # DESCRIBE on the cluster lists every group; without it, the groups one may describe (Kafka's rule).
    every_group = ctx.authorize_cluster(Op.DESCRIBE)
    listings = ctx.services.groups.list_groups(
        req.states_filter if version >= 4 else (), req.types_filter if version >= 5 else ()
    )
    return ListGroupsResponse(
        groups=[
            ListedGroup(
                group_id=g.group_id,
                protocol_type=g.protocol_type,
                group_state=g.state,
                group_type=g.group_type,
            )
            for g in listings
            if every_group or ctx.authorize(Op.DESCRIBE, R.GROUP, g.group_id)
        ]
    )
