"""DescribeProducers (61), v0 (KIP-664): the idempotent producers each partition's log tracks.

For each partition: every producer id the log's producer state holds (kbroker/log/producer_state.py), with its epoch,
the last sequence number it wrote (-1 before its first batch of this epoch) and that batch's max timestamp, the epoch
of the transaction coordinator that wrote its last marker (-1: none) and the first offset of its open transaction
(-1: none; kafka-transactions.sh find-hanging looks for old ones). Any replica
answers from its own log, a follower too (Kafka does the same; the Java Admin asks the leader unless told otherwise).
Errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER for a partition this node holds no replica of,
KAFKA_STORAGE_ERROR for an offline log. Only a topic that does not exist comes with a message (the error's standard
words), as Kafka answers; a missing partition of a topic that exists gets none.
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.describe_producers_request import DescribeProducersRequest
from protocol.messages.describe_producers_response import (
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicResponse,
)

UNKNOWN_TOPIC = "This server does not host this topic-partition."


@handles(DescribeProducersRequest, 0, 0)
async def handle(ctx: RequestContext, req: DescribeProducersRequest) -> DescribeProducersResponse:
    replicas = ctx.services.replicas
    image = ctx.services.metadata.image()
    topics = []
    for t in req.topics:
        exists = t.name in image.topics
        # As Kafka: READ on the topic, checked before whether it exists.
        readable = ctx.authorize(Op.READ, R.TOPIC, t.name)
        partitions = []
        for index in t.partition_indexes:
            answer = PartitionResponse(partition_index=index)
            if not readable:
                answer.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                partitions.append(answer)
                continue
            try:
                producers = replicas.active_producers(TopicPartition(t.name, index))
            except KafkaError as exc:
                answer.error_code = exc.code
                if not exists:
                    answer.error_message = UNKNOWN_TOPIC
            else:
                answer.active_producers = [
                    ProducerState(
                        producer_id=entry.producer_id,
                        producer_epoch=entry.producer_epoch,
                        last_sequence=entry.last_seq,
                        last_timestamp=entry.last_timestamp,
                        coordinator_epoch=entry.coordinator_epoch,
                        current_txn_start_offset=entry.current_txn_first_offset,
                    )
                    for entry in sorted(producers, key=lambda e: e.producer_id)
                ]
            partitions.append(answer)
        topics.append(TopicResponse(name=t.name, partitions=partitions))
    return DescribeProducersResponse(topics=topics)
