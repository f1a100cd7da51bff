"""ElectLeaders (43), v0-2.

PREFERRED (0) makes each partition's first replica its leader, if it is in the ISR and live (else
PREFERRED_LEADER_NOT_AVAILABLE; ELECTION_NOT_NEEDED if it leads already). UNCLEAN (1, v1+) gives a partition without
a live leader one: an in-sync replica if one is live, else any live replica, which may lack committed records
(ELECTION_NOT_NEEDED while the leader is live, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is). Null
topic_partitions means every partition, and then, as Kafka, only partitions where an election was needed are
answered. The answer comes once this node's metadata shows the new leader. An unknown partition gets
UNKNOWN_TOPIC_OR_PARTITION; an election type other than 0 and 1 INVALID_REQUEST for every partition; without ALTER
on the cluster, CLUSTER_AUTHORIZATION_FAILED for the request and every partition.
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.metadata.api import PREFERRED_ELECTION, UNCLEAN_ELECTION
from kbroker.security.acl import AclOperation as Op
from protocol.errors import ErrorCode
from protocol.messages.elect_leaders_request import ElectLeadersRequest
from protocol.messages.elect_leaders_response import (
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)


@handles(ElectLeadersRequest, 0, 2)
async def handle(ctx: RequestContext, req: ElectLeadersRequest) -> ElectLeadersResponse:
    election_type = req.election_type if ctx.api_version >= 1 else PREFERRED_ELECTION
    every_partition = req.topic_partitions is None
    if every_partition:
        image = ctx.services.metadata.image()
        wanted = [
            TopicPartition(name, p)
            for name, states in sorted(image.partitions.items())
            for p in sorted(states)
        ]
    else:
        wanted = [TopicPartition(t.topic, p) for t in req.topic_partitions for p in t.partitions]
    if not ctx.authorize_cluster(Op.ALTER):
        refused = KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        response = ElectLeadersResponse(error_code=refused.code)
        for t in req.topic_partitions or []:
            response.replica_election_results.append(
                ReplicaElectionResult(
                    topic=t.topic,
                    partition_result=[
                        PartitionResult(partition_id=p, error_code=refused.code, error_message=None)
                        for p in t.partitions
                    ],
                )
            )
        return response
    if election_type in (PREFERRED_ELECTION, UNCLEAN_ELECTION):
        outcomes = await ctx.services.cluster_admin.elect_leaders(election_type, dict.fromkeys(wanted))
    else:
        refused = KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}")
        outcomes = dict.fromkeys(wanted, refused)
    results: dict[str, ReplicaElectionResult] = {}
    for tp in dict.fromkeys(wanted):
        error = outcomes[tp]
        code = error.code if error is not None else ErrorCode.NONE
        if every_partition and code == ErrorCode.ELECTION_NOT_NEEDED:
            continue
        result = results.setdefault(tp.topic, ReplicaElectionResult(topic=tp.topic))
        result.partition_result.append(
            PartitionResult(
                partition_id=tp.partition, error_code=code, error_message=error.message if error else None
            )
        )
    return ElectLeadersResponse(replica_election_results=list(results.values()))
