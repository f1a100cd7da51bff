"""FindCoordinator (10), v0-6.

A group's coordinator is the leader of its `__consumer_offsets` partition (Java's `abs(groupId.hashCode()) %
partitions`); the answer is that broker's id, host and port. v0-3 ask for one key (v0: always a group); v4+ batch
`coordinator_keys` and get one entry each. COORDINATOR_NOT_AVAILABLE when the partition has no live leader, or when
we lead it but have not loaded it yet (clients ask again).
A transactional id's coordinator (key type 1) is the leader of its `__transaction_state` partition (the same hash);
the topic is created on the first such request, which gets COORDINATOR_NOT_AVAILABLE meanwhile, as from Kafka.
Not implemented: share groups (key type 2) are answered as Kafka 3.9 answers them with share groups disabled:
INVALID_REQUEST before v6 (the key type arrived in v6), COORDINATOR_NOT_AVAILABLE at v6. An unknown key type gets
INVALID_REQUEST. Messages, as Kafka sends them: v0-3 always have one (ours for an error; "NONE" on success); from v4
each key's entry has an empty one, except for an unknown key type, which Kafka refuses as a malformed request with a
message.
"""

from __future__ import annotations

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.find_coordinator_response import Coordinator, FindCoordinatorResponse

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2
KEY_TYPES = (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE, SHARE_KEY_TYPE)
SHARE_SINCE_VERSION = 6


def _lookup(ctx: RequestContext, key_type: int, key: str, version: int) -> Coordinator:
    """One key's answer; the v0-3 response copies its fields to the top level."""
    # Kafka sends the error's message, which for NONE is its name.
    answer = Coordinator(
        key=key, node_id=-1, host="", port=-1, error_code=ErrorCode.NONE, error_message="NONE"
    )
    # Kafka checks DESCRIBE on the group (or transactional id) before anything else.
    if key_type == GROUP_KEY_TYPE and not ctx.authorize(Op.DESCRIBE, R.GROUP, key):
        answer.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
        answer.error_message = "Group authorization failed."
        return answer
    if key_type == TRANSACTION_KEY_TYPE and not ctx.authorize(Op.DESCRIBE, R.TRANSACTIONAL_ID, key):
        answer.error_code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        answer.error_message = "Transactional Id authorization failed."
        return answer
    if key_type == SHARE_KEY_TYPE and version < SHARE_SINCE_VERSION:
        answer.error_code = ErrorCode.INVALID_REQUEST
        answer.error_message = (
            f"share group coordinators are found from FindCoordinator v{SHARE_SINCE_VERSION}"
        )
        return answer
    if key_type == SHARE_KEY_TYPE:
        answer.error_code = ErrorCode.COORDINATOR_NOT_AVAILABLE
        answer.error_message = "share groups are not supported by kbroker"
        return answer
    if key_type not in KEY_TYPES:
        answer.error_code = ErrorCode.INVALID_REQUEST
        answer.error_message = f"unsupported coordinator key type {key_type}"
        return answer
    try:
        if key_type == TRANSACTION_KEY_TYPE:
            endpoint = ctx.services.transactions.find_coordinator(key)
        else:
            endpoint = ctx.services.coordinators.find_group_coordinator(key)
    except KafkaError as exc:
        answer.error_code = exc.code
        answer.error_message = exc.message
        return answer
    address = endpoint.endpoint(ctx.listener)
    if address is None:
        answer.error_code = ErrorCode.COORDINATOR_NOT_AVAILABLE
        answer.error_message = f"the coordinator has no {ctx.listener} listener"
        return answer
    answer.node_id, (answer.host, answer.port) = endpoint.node_id, address
    return answer


@handles(FindCoordinatorRequest, 0, 6)
async def handle(ctx: RequestContext, req: FindCoordinatorRequest) -> FindCoordinatorResponse:
    version = ctx.api_version
    if version >= 4:
        coordinators = [_lookup(ctx, req.key_type, key, version) for key in req.coordinator_keys]
        if req.key_type in KEY_TYPES:
            for answer in coordinators:
                answer.error_message = ""  # as Kafka from v4 (before v4: "NONE" or the error's message)
        return FindCoordinatorResponse(coordinators=coordinators)
    key_type = req.key_type if version >= 1 else GROUP_KEY_TYPE
    answer = _lookup(ctx, key_type, req.key, version)
    return FindCoordinatorResponse(
        error_code=answer.error_code,
        error_message=answer.error_message,
        node_id=answer.node_id,
        host=answer.host,
        port=answer.port,
    )
