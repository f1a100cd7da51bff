"""DescribeConfigs (32), v1-4 (v1 is Kafka 4.0's minimum).

Topic resources (type 2) list every topic config kbroker honours or accepts, with its effective value and source
(TOPIC_CONFIG for explicit values, STATIC_BROKER_CONFIG when a broker setting supplies it, DEFAULT_CONFIG otherwise),
and synonyms when asked. Broker resources (type 4) list the broker configs of `kbroker serve --help` (all read-only,
with Kafka's config types; synonyms: the value given at start-up, then the default); a broker id other than ours is
answered by that broker in a cluster, so here it is INVALID_REQUEST; the empty name (the cluster-wide dynamic
defaults) lists nothing, since broker configs are static. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION (with an
empty message, as Kafka); unsupported resource types INVALID_REQUEST. Where Kafka answers otherwise:
docs/kafka-differences.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from kbroker.config import (
    BROKER_CONFIGS,
    DEFAULT_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG_SOURCE,
    TOPIC_CONFIG_SYNONYMS,
    BrokerConfig,
)
from kbroker.handlers.registry import RequestContext, handles
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
            for name, value, source in config.describe_topic_configs(topic.configs):
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
                    entry.synonyms = _topic_synonyms(config, name, topic.configs)
                result.configs.append(entry)
        elif res.resource_type == BROKER:
            if res.resource_name == "":
                # The cluster-wide dynamic defaults (KIP-226): there are no dynamic broker configs.
                continue
            if res.resource_name != str(config.node_id):
                result.error_code = ErrorCode.INVALID_REQUEST
                result.error_message = f"broker {res.resource_name} is not this broker ({config.node_id})"
                continue
            for name, value, is_default in config.describe():
                if wanted is not None and name not in wanted:
                    continue
                defn = BROKER_CONFIGS[name]
                result.configs.append(
                    DescribeConfigsResourceResult(
                        name=name,
                        value=value,
                        read_only=True,
                        is_default=is_default,
                        is_sensitive=defn.sensitive,
                        config_source=DEFAULT_CONFIG if is_default else STATIC_BROKER_CONFIG,
                        config_type=_TYPE_CODES.get(defn.type, 2),
                        documentation=defn.doc if req.include_documentation else None,
                        synonyms=_broker_synonyms(config, name) if req.include_synonyms else [],
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
    config: BrokerConfig, name: str, explicit: Mapping[str, str]
) -> list[DescribeConfigsSynonym]:
    out = []
    if name in explicit:
        out.append(DescribeConfigsSynonym(name=name, value=explicit[name], source=TOPIC_CONFIG_SOURCE))
    broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
    if broker_name is not None:
        source = STATIC_BROKER_CONFIG if broker_name in config.explicit else DEFAULT_CONFIG
        value = config.raw(broker_name)
        if value is not None:
            out.append(DescribeConfigsSynonym(name=broker_name, value=value, source=source))
    return out


def _broker_synonyms(config: BrokerConfig, name: str) -> list[DescribeConfigsSynonym]:
    """As Kafka lists a broker config's synonyms: the value set at start-up (if any), then the default (if any)."""
    out = []
    sensitive = BROKER_CONFIGS[name].sensitive
    if name in config.explicit:
        value = None if sensitive else config.explicit[name]
        out.append(DescribeConfigsSynonym(name=name, value=value, source=STATIC_BROKER_CONFIG))
    default = BROKER_CONFIGS[name].default
    if default is not None:
        out.append(DescribeConfigsSynonym(name=name, value=default, source=DEFAULT_CONFIG))
    return out
