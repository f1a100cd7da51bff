"""DescribeGroups (15), v0-5.

Each group's state, protocol type, and every member with its client id and host (`/1.2.3.4`), `group_instance_id`
(v4+), and, while the group is Stable, the selected protocol with each member's metadata and assignment bytes. An
unknown group is described as `Dead` with error NONE, as Kafka does; a group another broker coordinates gets
NOT_COORDINATOR. Not implemented: authorized operations (no ACLs): v3+ always report them as not provided.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.describe_groups_response import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsResponse,
)


@handles(DescribeGroupsRequest, 0, 5)
async def handle(ctx: RequestContext, req: DescribeGroupsRequest) -> DescribeGroupsResponse:
    runtime = ctx.services.groups
    groups = []
    for group_id in req.groups:
        if not ctx.authorize(Op.DESCRIBE, R.GROUP, group_id):
            groups.append(
                DescribedGroup(
                    error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                    group_id=group_id,
                    group_state="",
                    protocol_type="",
                    protocol_data="",
                )
            )
            continue
        d = runtime.describe_group(group_id)
        groups.append(
            DescribedGroup(
                error_code=d.error,
                group_id=d.group_id,
                group_state=d.state,
                protocol_type=d.protocol_type,
                protocol_data=d.protocol_data,
                members=[
                    DescribedGroupMember(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in d.members
                ],
                authorized_operations=ctx.authorized_operations(R.GROUP, group_id)
                if req.include_authorized_operations
                else -2147483648,
            )
        )
    return DescribeGroupsResponse(groups=groups)
