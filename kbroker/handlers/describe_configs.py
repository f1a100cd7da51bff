"""DescribeConfigs (32), v1-4 (v1 is Kafka 4.0's minimum).

Topic resources (type 2) list every topic config kbroker honours or accepts, with its effective value and source
(TOPIC_CONFIG for explicit values; otherwise where the broker setting that gives its default comes from:
DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, or DEFAULT_CONFIG), and synonyms when
asked (the topic's own value, then each place the broker setting is set, in that order). Broker resources (type 4)
list the broker configs of `kbroker serve --help` with Kafka's config types, the dynamic ones (config.py's
DYNAMIC_BROKER_CONFIGS) writable, each with its value from the first place it is set: this broker's dynamic configs,
the cluster-wide ones, the start-up settings, the default (synonyms: all of them, in that order). A broker id other
than ours is answered by that broker in a cluster, so here it is INVALID_REQUEST; the empty name lists the
cluster-wide dynamic configs. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION (with an empty message, as Kafka);
unsupported resource types INVALID_REQUEST. Where Kafka answers otherwise: docs/kafka-differences.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from kbroker.config import (
    BROKER_CONFIGS,
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_BROKER_CONFIGS,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG_SOURCE,
    TOPIC_CONFIG_SYNONYMS,
    BrokerConfig,
    DynamicBrokerConfigs,
)
from kbroker.handlers.registry import RequestContext, handles
from kbroker.metadata.image import DEFAULT_BROKER_ENTITY
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.describe_configs_request import DescribeConfigsRequest
from protocol.messages.describe_configs_response import (
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)

TOPIC = 2
BROKER = 4

_TYPE_CODES = {
    "boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6, "list": 7, "password": 9,
}  # fmt: skip


@handles(DescribeConfigsRequest, 1, 4)
async def handle(ctx: RequestContext, req: DescribeConfigsRequest) -> DescribeConfigsResponse:
    config = ctx.services.config
    image = ctx.services.metadata.image()
    dynamic = DynamicBrokerConfigs(
        cluster=image.broker_configs.get(DEFAULT_BROKER_ENTITY, {}),
        node=image.broker_configs.get(str(config.node_id), {}),
    )
    results = []
    for res in req.resources:
        # As Kafka: a described resource's error message is the empty string, not null.
        result = DescribeConfigsResult(
            resource_type=res.resource_type, resource_name=res.resource_name, error_message=""
        )
        results.append(result)
        wanted = set(res.configuration_keys) if res.configuration_keys else None
        if res.resource_type == TOPIC and not ctx.authorize(Op.DESCRIBE_CONFIGS, R.TOPIC, res.resource_name):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.error_message = "Topic authorization failed."
            continue
        if res.resource_type == BROKER and not ctx.authorize_cluster(Op.DESCRIBE_CONFIGS):
            result.error_code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            result.error_message = "Cluster authorization failed."
            continue
        if res.resource_type == TOPIC:
            topic = image.topics.get(res.resource_name)
            if topic is None:
                result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # with no message, as Kafka
                continue
            for name, value, source in config.describe_topic_configs(topic.configs, dynamic):
                if wanted is not None and name not in wanted:
                    continue
                entry = DescribeConfigsResourceResult(
                    name=name,
                    value=value,
                    is_default=source == DEFAULT_CONFIG,
                    config_source=source,
                    documentation=None,
                    config_type=_TYPE_CODES.get(_topic_type(name), 2),
                )
                if req.include_synonyms:
                    entry.synonyms = _topic_synonyms(config, name, topic.configs, dynamic)
                result.configs.append(entry)
        elif res.resource_type == BROKER:
            if res.resource_name == "":
                # The cluster-wide dynamic defaults (KIP-226): only those set.
                for name, value in sorted(dynamic.cluster.items()):
                    if wanted is not None and name not in wanted:
                        continue
                    defn = BROKER_CONFIGS.get(name)
                    result.configs.append(
                        DescribeConfigsResourceResult(
                            name=name,
                            value=value,
                            read_only=False,
                            is_default=False,
                            config_source=DYNAMIC_DEFAULT_BROKER_CONFIG,
                            config_type=_TYPE_CODES.get(defn.type, 2) if defn else 2,
                            documentation=defn.doc if defn and req.include_documentation else None,
                            synonyms=[
                                DescribeConfigsSynonym(
                                    name=name, value=value, source=DYNAMIC_DEFAULT_BROKER_CONFIG
                                )
                            ]
                            if req.include_synonyms
                            else [],
                        )
                    )
                continue
            if res.resource_name != str(config.node_id):
                result.error_code = ErrorCode.INVALID_REQUEST
                result.error_message = f"broker {res.resource_name} is not this broker ({config.node_id})"
                continue
            for name, value, source, synonyms in config.describe(dynamic):
                if wanted is not None and name not in wanted:
                    continue
                defn = BROKER_CONFIGS[name]
                result.configs.append(
                    DescribeConfigsResourceResult(
                        name=name,
                        value=value,
                        read_only=name not in DYNAMIC_BROKER_CONFIGS,
                        is_default=source == DEFAULT_CONFIG,
                        is_sensitive=defn.sensitive,
                        config_source=source,
                        config_type=_TYPE_CODES.get(defn.type, 2),
                        documentation=defn.doc if req.include_documentation else None,
                        synonyms=[
                            DescribeConfigsSynonym(name=name, value=v, source=src) for v, src in synonyms
                        ]
                        if req.include_synonyms
                        else [],
                    )
                )
        else:
            result.error_code = ErrorCode.INVALID_REQUEST
            result.error_message = f"unsupported resource type {res.resource_type}"
    return DescribeConfigsResponse(results=results)


def _topic_type(name: str) -> str:
    broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
    return BROKER_CONFIGS[broker_name].type if broker_name else "string"


def _topic_synonyms(
    config: BrokerConfig, name: str, explicit: Mapping[str, str], dynamic: DynamicBrokerConfigs
) -> list[DescribeConfigsSynonym]:
    """The topic's own value, then the broker setting that gives its default: its dynamic values (this broker's,
    the cluster-wide one), then its start-up value or else its default."""
    out = []
    if name in explicit:
        out.append(DescribeConfigsSynonym(name=name, value=explicit[name], source=TOPIC_CONFIG_SOURCE))
    broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
    if broker_name is not None:
        for layer, source in (
            (dynamic.node, DYNAMIC_BROKER_CONFIG),
            (dynamic.cluster, DYNAMIC_DEFAULT_BROKER_CONFIG),
        ):
            if broker_name in layer:
                out.append(DescribeConfigsSynonym(name=broker_name, value=layer[broker_name], source=source))
        source = STATIC_BROKER_CONFIG if broker_name in config.explicit else DEFAULT_CONFIG
        value = config.raw(broker_name)
        if value is not None:
            out.append(DescribeConfigsSynonym(name=broker_name, value=value, source=source))
    return out
