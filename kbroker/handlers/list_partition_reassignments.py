"""ListPartitionReassignments (46), v0: the reassignments in progress (all, or of the partitions asked for), each
with its replicas (the target's, then the ones it drops) and the replicas being added and removed. Partitions that
are not being reassigned, or do not exist, are left out, as Kafka does. Without DESCRIBE on the cluster:
CLUSTER_AUTHORIZATION_FAILED."""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from protocol.errors import ErrorCode
from protocol.messages.list_partition_reassignments_request import ListPartitionReassignmentsRequest
from protocol.messages.list_partition_reassignments_response import (
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)


@handles(ListPartitionReassignmentsRequest, 0, 0)
async def handle(
    ctx: RequestContext, req: ListPartitionReassignmentsRequest
) -> ListPartitionReassignmentsResponse:
    if not ctx.authorize_cluster(Op.DESCRIBE):
        return ListPartitionReassignmentsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message="Cluster authorization failed."
        )
    image = ctx.services.metadata.image()
    if req.topics is None:
        wanted = {name: sorted(states) for name, states in sorted(image.partitions.items())}
    else:
        wanted = {t.name: list(t.partition_indexes) for t in req.topics}
    topics = []
    for name, partitions in wanted.items():
        ongoing = OngoingTopicReassignment(name=name)
        for index in partitions:
            state = image.partition(name, index)
            if state is None or not state.reassigning:
                continue
            ongoing.partitions.append(
                OngoingPartitionReassignment(
                    partition_index=index,
                    replicas=list(state.replicas),
                    adding_replicas=list(state.adding_replicas),
                    removing_replicas=list(state.removing_replicas),
                )
            )
        if ongoing.partitions:
            topics.append(ongoing)
    return ListPartitionReassignmentsResponse(error_message=None, topics=topics)
