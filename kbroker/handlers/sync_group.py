"""SyncGroup (14), v0-5.

The leader sends every member's assignment; followers wait until it did, then each member gets its own (opaque bytes).
v3+ carry `group_instance_id`; v5+ must name the group's protocol type and name (both present, else
INCONSISTENT_GROUP_PROTOCOL as in Kafka) and get them back. Errors as docs/groups.md lists them: UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID, INVALID_GROUP_ID for an empty group id.
"""

from __future__ import annotations

from kbroker.coordinator.group import SyncRequest
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.sync_group_request import SyncGroupRequest
from protocol.messages.sync_group_response import SyncGroupResponse


@handles(SyncGroupRequest, 0, 5)
async def handle(ctx: RequestContext, req: SyncGroupRequest) -> SyncGroupResponse:
    version = ctx.api_version
    if version >= 5 and (req.protocol_type is None or req.protocol_name is None):
        return SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return SyncGroupResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    request = SyncRequest(
        member_id=req.member_id,
        group_instance_id=req.group_instance_id if version >= 3 else None,
        generation_id=req.generation_id,
        protocol_type=req.protocol_type if version >= 5 else None,
        protocol_name=req.protocol_name if version >= 5 else None,
        # Copies: the decoded assignments are views into the request frame, and the group keeps them.
        assignments=tuple((a.member_id, bytes(a.assignment)) for a in req.assignments),
    )
    result = await ctx.services.groups.sync_group(req.group_id, request)
    return SyncGroupResponse(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
