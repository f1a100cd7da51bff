"""IncrementalAlterConfigs (44), v0-1.

Changes topic configs (resource type 2) and dynamic broker configs (type 4: a broker id, or "" for every broker) by
operation: SET, DELETE (back to the default), APPEND and SUBTRACT (list configs: cleanup.policy, the replication
throttle lists). Each resource's changes apply atomically and are durable (topics.json, or etcd) and seen by every
node; they take effect without a restart: a topic's logs take the new retention, segment size, cleanup policy,
min.insync.replicas … at once, and topics without their own value follow a changed broker default. Which broker configs
are dynamic: config.py's DYNAMIC_BROKER_CONFIGS (another known one gets INVALID_REQUEST, "Cannot update these configs
dynamically"). Unknown names and bad values get INVALID_CONFIG, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a name
given twice in one resource INVALID_REQUEST, other resource types INVALID_REQUEST; without ALTER_CONFIGS on the
topic (or the cluster, for brokers) TOPIC_ / CLUSTER_AUTHORIZATION_FAILED. validate_only checks without changing
anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from kbroker.common import KafkaError
from kbroker.config import apply_config_changes
from kbroker.handlers.registry import RequestContext, handles
from kbroker.handlers.services import BrokerServices
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.incremental_alter_configs_request import IncrementalAlterConfigsRequest
from protocol.messages.incremental_alter_configs_response import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse,
)

TOPIC = 2
BROKER = 4


@handles(IncrementalAlterConfigsRequest, 0, 1)
async def handle(ctx: RequestContext, req: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    responses = []
    for res in req.resources:
        response = AlterConfigsResourceResponse(
            resource_type=res.resource_type, resource_name=res.resource_name, error_message=None
        )
        responses.append(response)
        changes = [(c.name, c.config_operation, c.value) for c in res.configs]
        try:
            authorize(ctx, res.resource_type, res.resource_name)
            await _alter(ctx.services, res.resource_type, res.resource_name, changes, req.validate_only)
        except KafkaError as exc:
            response.error_code = exc.code
            response.error_message = exc.message
    return IncrementalAlterConfigsResponse(responses=responses)


async def _alter(
    services: BrokerServices,
    resource_type: int,
    name: str,
    changes: list[tuple[str, int, str | None]],
    validate_only: bool,
) -> None:
    config = services.config
    duplicates = sorted(key for key, n in Counter(key for key, _, _ in changes).items() if n > 1)
    if duplicates:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Error due to duplicate config keys: {duplicates}")
    if resource_type == TOPIC:

        def change_topic(current: Mapping[str, str]) -> Mapping[str, str]:
            new = apply_config_changes(current, changes, config.topic_defaults)
            config.validate_topic_configs(new)
            return new

        await services.topic_admin.alter_topic_configs(name, change_topic, validate_only=validate_only)
    elif resource_type == BROKER:

        def change_broker(current: Mapping[str, str]) -> Mapping[str, str]:
            new = apply_config_changes(current, changes, {})
            config.validate_dynamic_broker_configs(new)
            return new

        await services.topic_admin.alter_broker_configs(
            broker_entity(name), change_broker, validate_only=validate_only
        )
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource_type}")


def authorize(ctx: RequestContext, resource_type: int, name: str) -> None:
    """ALTER_CONFIGS on the topic, or on the cluster for a broker resource (Kafka's rule)."""
    if resource_type == TOPIC and not ctx.authorize(Op.ALTER_CONFIGS, R.TOPIC, name):
        raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
    if resource_type == BROKER and not ctx.authorize_cluster(Op.ALTER_CONFIGS):
        raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")


def broker_entity(name: str) -> str:
    """The dynamic config entity of a broker resource: "" (every broker) or a broker id."""
    if name == "":
        return name
    if not name.isdigit():
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected an int: {name}")
    return str(int(name))
