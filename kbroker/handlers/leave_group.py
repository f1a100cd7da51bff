"""LeaveGroup (13), v0-5.

v0-2 name one member (`member_id`) and answer with one error code: the group's, else the member's. v3+ batch
`members`, each by member id or, for an admin removing a static member, by `group_instance_id` alone, and get one
error per member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). v5's per-member reason is accepted and not used. Leaving
starts a rebalance of the remaining members. Empty group id: INVALID_GROUP_ID.
"""

from __future__ import annotations

from kbroker.coordinator.group import MemberIdentity
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.leave_group_request import LeaveGroupRequest
from protocol.messages.leave_group_response import LeaveGroupResponse, MemberResponse


@handles(LeaveGroupRequest, 0, 5)
async def handle(ctx: RequestContext, req: LeaveGroupRequest) -> LeaveGroupResponse:
    runtime = ctx.services.groups
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return LeaveGroupResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.api_version < 3:
        result = await runtime.leave_group(req.group_id, [MemberIdentity(req.member_id)])
        return LeaveGroupResponse(error_code=result.error_for_v0_2())
    members = [MemberIdentity(m.member_id, m.group_instance_id) for m in req.members]
    result = await runtime.leave_group(req.group_id, members)
    return LeaveGroupResponse(
        error_code=result.error,
        members=[
            MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error)
            for m in result.members
        ],
    )
