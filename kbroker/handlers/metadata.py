"""Metadata (3), v0-12.

Brokers (ourselves, or every live broker in a cluster), the cluster id and controller, and for each requested topic
its partitions with leader, leader epoch, replicas and ISR. Topic ids from v10. A null topic list (v1+), or an empty
one in v0, means every topic. Unknown topics are created when the request allows it (v4+; always before v4) and
`auto.create.topics.enable` is true; otherwise they get UNKNOWN_TOPIC_OR_PARTITION with no partitions.
Not implemented: authorized operations (no ACLs: reported as "not provided").
"""

from __future__ import annotations

from kbroker.broker import Broker
from kbroker.handlers.registry import RequestContext, handles
from kbroker.topics import TopicError, TopicMetadata, validate_topic_name
from protocol.errors import ErrorCode
from protocol.messages.metadata_request import MetadataRequest
from protocol.messages.metadata_response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from protocol.primitives import ZERO_UUID


def describe_topic(broker: Broker, topic: TopicMetadata) -> MetadataResponseTopic:
    partitions = []
    for p in range(topic.num_partitions):
        state = broker.partition_state(topic.name, p)
        partitions.append(
            MetadataResponsePartition(
                error_code=ErrorCode.NONE if state.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=p,
                leader_id=state.leader,
                leader_epoch=state.leader_epoch,
                replica_nodes=list(state.replicas),
                isr_nodes=list(state.isr),
                offline_replicas=list(state.offline_replicas),
            )
        )
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=partitions,
    )


def response_brokers(broker: Broker) -> list[MetadataResponseBroker]:
    return [
        MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
        for b in broker.live_brokers()
    ]


async def _lookup_or_create(ctx: RequestContext, name: str, allow_create: bool) -> MetadataResponseTopic:
    broker = ctx.broker
    topic = broker.topics.get(name)
    if topic is not None:
        return describe_topic(broker, topic)
    if allow_create and broker.config.get_bool("auto.create.topics.enable"):
        try:
            validate_topic_name(name)
            topic = await broker.create_topic_async(
                name, broker.default_partitions(), broker.default_replication_factor(), {}
            )
            return describe_topic(broker, topic)
        except TopicError as exc:
            code = (
                exc.code if exc.code == ErrorCode.INVALID_TOPIC_EXCEPTION else ErrorCode.LEADER_NOT_AVAILABLE
            )
            return MetadataResponseTopic(error_code=code, name=name)
    return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name)


@handles(3, 0, 12)
async def handle(ctx: RequestContext, req: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    version = ctx.api_version
    allow_create = req.allow_auto_topic_creation if version >= 4 else True
    topics: list[MetadataResponseTopic] = []
    if req.topics is None or (version == 0 and not req.topics):
        topics = [describe_topic(broker, t) for t in list(broker.topics.topics.values())]
    else:
        for requested in req.topics:
            if requested.name is None:
                # v10+ may ask by topic id only
                found = broker.topics.by_id.get(requested.topic_id)
                if found is None:
                    topics.append(
                        MetadataResponseTopic(
                            error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None, topic_id=requested.topic_id
                        )
                    )
                else:
                    topics.append(describe_topic(broker, found))
                continue
            topics.append(await _lookup_or_create(ctx, requested.name, allow_create))
    for t in topics:
        if t.error_code != ErrorCode.NONE and t.topic_id is None:
            t.topic_id = ZERO_UUID
    return MetadataResponse(
        brokers=response_brokers(broker),
        cluster_id=broker.cluster_id,
        controller_id=broker.metadata_controller_id(),
        topics=topics,
    )
