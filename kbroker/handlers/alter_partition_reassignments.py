"""AlterPartitionReassignments (45), v0 (KIP-455).

Moves each partition to its target replicas: the new ones join as followers and copy the log (within the replication
throttles, if set), and once every target replica is in the ISR the controller drops the others (which delete their
logs) and, if the leader was one of them, elects the first target replica in the ISR. Null replicas cancel the
reassignment in progress (NO_REASSIGNMENT_IN_PROGRESS if there is none): the replicas go back to the original ones.
A target that is empty, repeats a broker or names an unregistered one gets INVALID_REPLICA_ASSIGNMENT, an unknown
partition UNKNOWN_TOPIC_OR_PARTITION. The answer comes once the reassignment is recorded, not once it is done:
ListPartitionReassignments shows it until then. Without ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbroker.common import TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from protocol.errors import ErrorCode
from protocol.messages.alter_partition_reassignments_request import AlterPartitionReassignmentsRequest
from protocol.messages.alter_partition_reassignments_response import (
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)


@handles(AlterPartitionReassignmentsRequest, 0, 0)
async def handle(
    ctx: RequestContext, req: AlterPartitionReassignmentsRequest
) -> AlterPartitionReassignmentsResponse:
    if not ctx.authorize_cluster(Op.ALTER):
        return AlterPartitionReassignmentsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message="Cluster authorization failed.",
            responses=[
                ReassignableTopicResponse(
                    name=t.name,
                    partitions=[
                        ReassignablePartitionResponse(
                            partition_index=p.partition_index,
                            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                            error_message="Cluster authorization failed.",
                        )
                        for p in t.partitions
                    ],
                )
                for t in req.topics
            ],
        )
    targets: dict[TopicPartition, Sequence[int] | None] = {
        TopicPartition(t.name, p.partition_index): p.replicas for t in req.topics for p in t.partitions
    }
    outcomes = await ctx.services.cluster_admin.alter_reassignments(targets)
    responses = []
    for topic in req.topics:
        response = ReassignableTopicResponse(name=topic.name)
        responses.append(response)
        for part in topic.partitions:
            error = outcomes[TopicPartition(topic.name, part.partition_index)]
            response.partitions.append(
                ReassignablePartitionResponse(
                    partition_index=part.partition_index,
                    error_code=error.code if error is not None else ErrorCode.NONE,
                    error_message=error.message if error is not None else None,
                )
            )
    return AlterPartitionReassignmentsResponse(error_message=None, responses=responses)
