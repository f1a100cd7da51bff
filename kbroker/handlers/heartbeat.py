"""Heartbeat (12), v0-4.

Renews the member's session. NONE while the group is stable (or the member awaits its assignment),
REBALANCE_IN_PROGRESS when it must rejoin, UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / FENCED_INSTANCE_ID (v3+ carry
`group_instance_id`) when it is no longer part of the group, INVALID_GROUP_ID for an empty group id.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.heartbeat_request import HeartbeatRequest
from protocol.messages.heartbeat_response import HeartbeatResponse


@handles(HeartbeatRequest, 0, 4)
async def handle(ctx: RequestContext, req: HeartbeatRequest) -> HeartbeatResponse:
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return HeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = await ctx.services.groups.heartbeat(
        req.group_id,
        req.member_id,
        req.group_instance_id if ctx.api_version >= 3 else None,
        req.generation_id,
    )
    return HeartbeatResponse(error_code=error)
