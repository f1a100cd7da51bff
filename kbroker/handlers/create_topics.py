"""CreateTopics (19), v2-7 (v2 is Kafka 4.0's minimum).

Creates each topic with its partition count and replication factor (-1 takes `num.partitions` /
`default.replication.factor`, v4+) or an explicit replica assignment, and its configs under Kafka's topic config names
(unknown names or bad values get INVALID_CONFIG). validate_only checks without creating. A name listed twice in one
request is answered once, with INVALID_REQUEST, as KRaft Kafka does. v5+ answers with the topic's id, partition
count, replication factor and effective configs. An explicit replica assignment (INVALID_REPLICA_ASSIGNMENT if it is
not one list per partition 0..n-1, all as long, of distinct registered brokers) places each partition on its
replicas, the first one leading.
"""

from __future__ import annotations

from collections import Counter

from kbroker.common import KafkaError
from kbroker.config import BrokerConfig
from kbroker.handlers.registry import RequestContext, handles
from kbroker.metadata.image import MetadataImage
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from protocol.messages.create_topics_response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)


def _resolve(
    config: BrokerConfig, image: MetadataImage, t: CreatableTopic
) -> tuple[int, int, dict[str, str], dict[int, list[int]] | None]:
    configs: dict[str, str] = {}
    for c in t.configs:
        if c.value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for topic config: {c.name}")
        configs[c.name] = c.value
    if t.assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.",
            )
        if any(not a.broker_ids for a in t.assignments):
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            )
        sizes = {len(a.broker_ids) for a in t.assignments}
        indexes = sorted(a.partition_index for a in t.assignments)
        if indexes != list(range(len(indexes))):
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "Partitions should be a consecutive 0-based integer sequence",
            )
        if len(sizes) != 1:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, "All partitions should have the same number of replicas"
            )
        for a in t.assignments:
            if len(set(a.broker_ids)) != len(a.broker_ids) or not set(a.broker_ids) <= set(image.brokers):
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"Invalid replica assignment {a.broker_ids} for partition {a.partition_index}",
                )
        assignments = {a.partition_index: list(a.broker_ids) for a in t.assignments}
        return len(t.assignments), sizes.pop(), configs, assignments
    partitions = config.num_partitions if t.num_partitions == -1 else t.num_partitions
    rf = config.default_replication_factor if t.replication_factor == -1 else t.replication_factor
    return partitions, rf, configs, None


def effective_configs(config: BrokerConfig, explicit: dict[str, str]) -> list[CreatableTopicConfigs]:
    return [
        CreatableTopicConfigs(name=name, value=value, read_only=False, config_source=source)
        for name, value, source in config.describe_topic_configs(explicit)
    ]


@handles(CreateTopicsRequest, 2, 7)
async def handle(ctx: RequestContext, req: CreateTopicsRequest) -> CreateTopicsResponse:
    services = ctx.services
    counts = Counter(t.name for t in req.topics)
    # CREATE on the cluster allows every topic; else CREATE on each (Kafka's controller). A created topic's
    # configs are shown only to who may DESCRIBE_CONFIGS it.
    cluster_create = ctx.authorize_cluster(Op.CREATE)
    results = []
    answered: set[str] = set()
    for t in req.topics:
        if t.name in answered:
            continue
        answered.add(t.name)
        result = CreatableTopicResult(name=t.name, error_message=None)
        results.append(result)
        if counts[t.name] > 1:
            # As KRaft's controller: one answer per name, nothing created.
            result.error_code = ErrorCode.INVALID_REQUEST
            result.error_message = "Duplicate topic name."
            continue
        if not (cluster_create or ctx.authorize(Op.CREATE, R.TOPIC, t.name)):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.error_message = "Authorization failed."
            continue
        try:
            partitions, rf, configs, assignments = _resolve(services.config, services.metadata.image(), t)
            topic = await services.topic_admin.create_topic(
                t.name, partitions, rf, configs, validate_only=req.validate_only, assignments=assignments
            )
        except KafkaError as exc:
            result.error_code = exc.code
            result.error_message = exc.message
            continue
        if not req.validate_only:
            result.topic_id = topic.topic_id
        result.num_partitions = partitions
        result.replication_factor = rf
        if ctx.authorize(Op.DESCRIBE_CONFIGS, R.TOPIC, t.name):
            result.configs = effective_configs(services.config, configs)
        else:
            result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return CreateTopicsResponse(topics=results)
