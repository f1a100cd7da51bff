"""WriteTxnMarkers (27), v1 (Kafka 4.0's minimum; Kafka's own brokers send it, and so do kbroker's).

A transaction coordinator on another node asks this partition leader to write COMMIT or ABORT markers. Each marker
is appended as leader with acks=-1 (kbroker/transaction/markers.py): NONE once it is fsynced and replicated;
UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER (the coordinator retries at the new leader);
INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED for a stale producer or coordinator epoch. A marker on
`__consumer_offsets` makes the producer's transactional offsets visible (commit) or drops them (abort).

It needs ALTER on the cluster (an administrator's `kafka-transactions.sh abort`, KIP-1037) or CLUSTER_ACTION on it (a
broker: kbroker's nodes call each other as the inter-broker principal, a super user or one given CLUSTER_ACTION), else
every partition gets CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from kbroker.common import TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.transaction.markers import Marker
from protocol.errors import ErrorCode
from protocol.messages.write_txn_markers_request import WriteTxnMarkersRequest
from protocol.messages.write_txn_markers_response import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
)


@handles(WriteTxnMarkersRequest, 1, 1)
async def handle(ctx: RequestContext, req: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse:
    markers = [
        Marker(
            producer_id=m.producer_id,
            producer_epoch=m.producer_epoch,
            commit=m.transaction_result,
            coordinator_epoch=m.coordinator_epoch,
            partitions=tuple(TopicPartition(t.name, p) for t in m.topics for p in t.partition_indexes),
        )
        for m in req.markers
    ]
    if ctx.authorize_cluster(Op.ALTER) or ctx.authorize_cluster(Op.CLUSTER_ACTION):
        results = await ctx.services.transactions.write_markers(markers)
    else:
        results = [dict.fromkeys(m.partitions, ErrorCode.CLUSTER_AUTHORIZATION_FAILED) for m in markers]
    out = []
    for marker, errors in zip(markers, results, strict=True):
        topics: dict[str, WritableTxnMarkerTopicResult] = {}
        for tp in marker.partitions:
            topic = topics.setdefault(tp.topic, WritableTxnMarkerTopicResult(name=tp.topic))
            topic.partitions.append(
                WritableTxnMarkerPartitionResult(partition_index=tp.partition, error_code=errors[tp])
            )
        out.append(WritableTxnMarkerResult(producer_id=marker.producer_id, topics=list(topics.values())))
    return WriteTxnMarkersResponse(markers=out)
