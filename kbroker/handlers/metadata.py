"""Metadata (3), v0-12.

Brokers (every live broker), the cluster id and controller, and for each requested topic its partitions with leader,
leader epoch, replicas, ISR and offline replicas. Topic ids in the answer from v10; asking by id works from v12 (v10
and v11 requests by id get INVALID_REQUEST, as from Kafka). A null topic list (v1+), or an empty one in v0, means
every topic. An illegal name gets INVALID_TOPIC_EXCEPTION. Unknown topics are created when the request allows it
(v4+; always before v4) and `auto.create.topics.enable` is true, and described in the same answer (Kafka answers
UNKNOWN_TOPIC_OR_PARTITION while its controller creates them: docs/kafka-differences.md); otherwise they get
UNKNOWN_TOPIC_OR_PARTITION with no partitions. A partition whose leader is not a live broker shows leader -1 and
LEADER_NOT_AVAILABLE, as in Kafka.

The controller id is the answering node: every node can serve admin requests (they go through the metadata store),
as KRaft brokers name a live broker rather than the controller. Naming the real controller would send admin clients
to a node that may have just died, and librdkafka waits for its next metadata refresh to move on. DescribeCluster
names the real controller.
Topics one may not DESCRIBE are left out of a listing of all topics and answered TOPIC_AUTHORIZATION_FAILED when
named (whether they exist is not said); auto-creation needs CREATE on the cluster or the topic. Authorized operations
(topics v8+, cluster v8-10) when asked for, as Kafka's authorizer (or all of them without one) reports them.
"""

from __future__ import annotations

import uuid
from typing import cast

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.handlers.topic_descriptions import describe_topic
from kbroker.metadata.image import TopicMetadata
from kbroker.metadata.topics import validate_topic_name
from kbroker.security.acl import CLUSTER_NAME
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.codec import Encoded
from protocol.errors import ErrorCode
from protocol.messages.metadata_request import MetadataRequest
from protocol.messages.metadata_response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponseTopic,
)
from protocol.primitives import ZERO_UUID


def _describe(
    ctx: RequestContext, topic: TopicMetadata, with_operations: bool
) -> MetadataResponseTopic | Encoded:
    """The topic's answer: encoded once per topic state and version (kbroker/handlers/topic_descriptions.py), unless
    the request asks for authorized operations, which depend on who asks."""
    image = ctx.services.metadata.image()
    if with_operations:
        described = describe_topic(image, topic)
        described.topic_authorized_operations = ctx.authorized_operations(R.TOPIC, topic.name)
        return described
    return ctx.services.topic_descriptions.encoded(image, topic, ctx.api_version)


async def _lookup_or_create(
    ctx: RequestContext, name: str, allow_create: bool, cluster_create: bool, with_operations: bool
) -> MetadataResponseTopic | Encoded:
    services = ctx.services
    topic = services.metadata.image().topics.get(name)
    if topic is not None:
        return _describe(ctx, topic, with_operations)
    config = services.config
    try:
        validate_topic_name(name)
    except KafkaError as exc:
        return _failed(exc.code, name)
    if not (allow_create and config.auto_create_topics_enable):
        return _failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name)
    if not (cluster_create or ctx.authorize(Op.CREATE, R.TOPIC, name)):
        # May describe it, may not create it: as Kafka, TOPIC_AUTHORIZATION_FAILED.
        return _failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name)
    try:
        topic = await services.topic_admin.create_topic(
            name, config.num_partitions, config.default_replication_factor, {}
        )
    except KafkaError as exc:
        # Kafka answers an auto-creation it could not do with LEADER_NOT_AVAILABLE (the client retries), except for
        # an illegal name.
        code = exc.code if exc.code == ErrorCode.INVALID_TOPIC_EXCEPTION else ErrorCode.LEADER_NOT_AVAILABLE
        return _failed(code, name)
    return _describe(ctx, topic, with_operations)


def _failed(code: int, name: str | None, topic_id: uuid.UUID = ZERO_UUID) -> MetadataResponseTopic:
    # A topic that failed has the zero topic id unless it was asked for by id.
    return MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id)


@handles(MetadataRequest, 0, 12)
async def handle(ctx: RequestContext, req: MetadataRequest) -> MetadataResponse:
    version = ctx.api_version
    allow_create = req.allow_auto_topic_creation if version >= 4 else True
    if version < 12 and req.topics and any(t.name is None for t in req.topics):
        # Asking by topic id came with v10, but Kafka serves it from v12 only and refuses it before.
        return MetadataResponse(
            controller_id=-1,
            cluster_id=None,
            topics=[
                MetadataResponseTopic(
                    error_code=ErrorCode.INVALID_REQUEST, name=t.name or "", topic_id=t.topic_id
                )
                for t in req.topics
            ],
        )
    with_operations = req.include_topic_authorized_operations
    topics: list[MetadataResponseTopic | Encoded] = []
    if req.topics is None or (version == 0 and not req.topics):
        # Every topic one may describe; the others are not revealed.
        image = ctx.services.metadata.image()
        topics = [
            _describe(ctx, t, with_operations) for t in image.topics.values() if _describable(ctx, t.name)
        ]
    else:
        cluster_create = ctx.authorize_cluster(Op.CREATE)
        for requested in req.topics:
            if requested.name is None:
                # v12 may ask by topic id only
                found = ctx.services.metadata.image().topics_by_id.get(requested.topic_id)
                if found is None:
                    topics.append(_failed(ErrorCode.UNKNOWN_TOPIC_ID, None, requested.topic_id))
                elif not _describable(ctx, found.name):
                    topics.append(_failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, requested.topic_id))
                else:
                    topics.append(_describe(ctx, found, with_operations))
                continue
            if not _describable(ctx, requested.name):
                # Whether it exists is not said to who may not describe it.
                topics.append(_failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, requested.name))
                continue
            topics.append(
                await _lookup_or_create(ctx, requested.name, allow_create, cluster_create, with_operations)
            )
    # The image after any auto-creation, so the brokers listed are as current as the topics.
    image = ctx.services.metadata.image()
    return MetadataResponse(
        brokers=[
            MetadataResponseBroker(node_id=b.node_id, host=address[0], port=address[1], rack=b.rack)
            for _, b in sorted(image.brokers.items())
            if (address := b.endpoint(ctx.listener)) is not None
        ],
        cluster_id=image.cluster_id,
        controller_id=ctx.services.config.node_id,
        # Encoded topics stand in for the structs they encode (protocol/codec.py).
        topics=cast(list[MetadataResponseTopic], topics),
        cluster_authorized_operations=ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME)
        if 8 <= version <= 10
        and req.include_cluster_authorized_operations
        and ctx.authorize_cluster(Op.DESCRIBE)
        else -2147483648,
    )


def _describable(ctx: RequestContext, topic: str) -> bool:
    return ctx.authorize(Op.DESCRIBE, R.TOPIC, topic)
