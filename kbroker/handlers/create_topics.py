"""CreateTopics (19), v2-7 (v2 is Kafka 4.0's minimum).

Creates each topic with its partition count and replication factor (-1 takes `num.partitions` /
`default.replication.factor`, v4+) or an explicit replica assignment, and its configs under Kafka's topic config names
(unknown names or bad values get INVALID_CONFIG). validate_only checks without creating. A name listed twice in one
request fails for both with INVALID_REQUEST, as in Kafka. v5+ answers with the topic's id, partition count, replication
factor and effective configs.
"""

from __future__ import annotations

from collections import Counter

from kbroker.broker import Broker
from kbroker.handlers.registry import RequestContext, handles
from kbroker.topics import TopicError
from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from protocol.messages.create_topics_response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)


def _resolve(broker: Broker, t: CreatableTopic) -> tuple[int, int, dict[str, str]]:
    configs: dict[str, str] = {}
    for c in t.configs:
        if c.value is None:
            raise TopicError(ErrorCode.INVALID_CONFIG, f"Null value not supported for topic config: {c.name}")
        configs[c.name] = c.value
    if t.assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            raise TopicError(
                ErrorCode.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.",
            )
        live = {b.node_id for b in broker.live_brokers()}
        sizes = {len(a.broker_ids) for a in t.assignments}
        indexes = sorted(a.partition_index for a in t.assignments)
        if indexes != list(range(len(indexes))):
            raise TopicError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "Partitions should be a consecutive 0-based integer sequence",
            )
        if len(sizes) != 1:
            raise TopicError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, "All partitions should have the same number of replicas"
            )
        for a in t.assignments:
            if len(set(a.broker_ids)) != len(a.broker_ids) or not set(a.broker_ids) <= live:
                raise TopicError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"Invalid replica assignment {a.broker_ids} for partition {a.partition_index}",
                )
        return len(t.assignments), sizes.pop(), configs
    partitions = broker.default_partitions() if t.num_partitions == -1 else t.num_partitions
    rf = broker.default_replication_factor() if t.replication_factor == -1 else t.replication_factor
    return partitions, rf, configs


def effective_configs(broker: Broker, explicit: dict[str, str]) -> list[CreatableTopicConfigs]:
    out = []
    for name, value, source in broker.describe_topic_configs(explicit):
        out.append(CreatableTopicConfigs(name=name, value=value, read_only=False, config_source=source))
    return out


@handles(19, 2, 7)
async def handle(ctx: RequestContext, req: CreateTopicsRequest) -> CreateTopicsResponse:
    broker = ctx.broker
    counts = Counter(t.name for t in req.topics)
    results = []
    for t in req.topics:
        result = CreatableTopicResult(name=t.name, error_message=None)
        results.append(result)
        if counts[t.name] > 1:
            result.error_code = ErrorCode.INVALID_REQUEST
            result.error_message = f"Create topics request from client `{ctx.client_id}` contains multiple entries for the following topics: {t.name}"
            continue
        try:
            partitions, rf, configs = _resolve(broker, t)
            if req.validate_only:
                broker.check_new_topic(t.name, partitions, rf, configs)
                topic_id = None
            else:
                topic = await broker.create_topic_async(t.name, partitions, rf, configs)
                topic_id = topic.topic_id
        except TopicError as exc:
            result.error_code = exc.code
            result.error_message = exc.message
            continue
        if topic_id is not None:
            result.topic_id = topic_id
        result.num_partitions = partitions
        result.replication_factor = rf
        result.configs = effective_configs(broker, configs)
    return CreateTopicsResponse(topics=results)
