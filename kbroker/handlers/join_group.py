"""JoinGroup (11), v0-9.

Translates the request for the coordinator (docs/groups.md) and waits until the join phase completes, which may take
up to the group's rebalance timeout. v0 has no rebalance timeout: the session timeout stands in for it. v4+ with an
empty member id get MEMBER_ID_REQUIRED and a member id to rejoin with; v5+ carry `group_instance_id` (static
membership), v7+ the protocol type in the response, v8+ a reason (accepted, not used), v9+ `skip_assignment` for a
static leader rejoining a stable group. Only the leader gets the member list. Empty group id: INVALID_GROUP_ID; a
session timeout outside `group.min/max.session.timeout.ms`: INVALID_SESSION_TIMEOUT.
"""

from __future__ import annotations

from kbroker.coordinator.group import JoinRequest
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.join_group_request import JoinGroupRequest
from protocol.messages.join_group_response import JoinGroupResponse, JoinGroupResponseMember


def kafka_client_host(peer: str) -> str:
    """The client address as Kafka shows it (`InetAddress.toString()` without a host name): "/1.2.3.4"."""
    host, sep, _port = peer.rpartition(":")
    return "/" + (host if sep else peer)


@handles(JoinGroupRequest, 0, 9)
async def handle(ctx: RequestContext, req: JoinGroupRequest) -> JoinGroupResponse:
    version = ctx.api_version
    if not ctx.authorize(Op.READ, R.GROUP, req.group_id):
        return JoinGroupResponse(
            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
            generation_id=-1,
            protocol_name=None if version >= 7 else "",
            member_id="" if version >= 4 else req.member_id,
        )
    request = JoinRequest(
        member_id=req.member_id,
        group_instance_id=req.group_instance_id if version >= 5 else None,
        client_id=ctx.client_id or "",
        client_host=kafka_client_host(ctx.client_host),
        session_timeout_ms=req.session_timeout_ms,
        rebalance_timeout_ms=req.rebalance_timeout_ms if version >= 1 else -1,
        protocol_type=req.protocol_type,
        # Copies: the decoded metadata are views into the request frame, and the group keeps them.
        protocols=tuple((p.name, bytes(p.metadata)) for p in req.protocols),
        api_version=version,
        reason=req.reason if version >= 8 else None,
    )
    result = await ctx.services.groups.join_group(req.group_id, request)
    protocol_name = result.protocol_name
    if protocol_name is None and version < 7:
        protocol_name = ""  # nullable only from v7
    return JoinGroupResponse(
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name,
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[
            JoinGroupResponseMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata
            )
            for m in result.members
        ],
    )
