"""AlterConfigs (33), v0-2 (Kafka 4 still has v0): the older, non-incremental form of IncrementalAlterConfigs.

Replaces the whole set of explicit configs of a topic (type 2), or of a broker's dynamic configs (type 4: a broker
id, or "" for every broker), with the ones given: a config left out goes back to its default. The same rules,
durability and effect as IncrementalAlterConfigs (incremental_alter_configs.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from kbroker.common import KafkaError
from kbroker.handlers.incremental_alter_configs import BROKER, TOPIC, authorize, broker_entity
from kbroker.handlers.registry import RequestContext, handles
from kbroker.handlers.services import BrokerServices
from protocol.errors import ErrorCode
from protocol.messages.alter_configs_request import AlterableConfig, AlterConfigsRequest
from protocol.messages.alter_configs_response import AlterConfigsResourceResponse, AlterConfigsResponse


@handles(AlterConfigsRequest, 0, 2)
async def handle(ctx: RequestContext, req: AlterConfigsRequest) -> AlterConfigsResponse:
    responses = []
    for res in req.resources:
        response = AlterConfigsResourceResponse(
            resource_type=res.resource_type, resource_name=res.resource_name, error_message=None
        )
        responses.append(response)
        try:
            authorize(ctx, res.resource_type, res.resource_name)
            given = _given(res.configs)
            await _replace(ctx.services, res.resource_type, res.resource_name, given, req.validate_only)
        except KafkaError as exc:
            response.error_code = exc.code
            response.error_message = exc.message
    return AlterConfigsResponse(responses=responses)


def _given(configs: list[AlterableConfig]) -> dict[str, str]:
    duplicates = sorted(name for name, n in Counter(c.name for c in configs).items() if n > 1)
    if duplicates:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Error due to duplicate config keys: {duplicates}")
    given: dict[str, str] = {}
    for c in configs:
        if c.value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {c.name}")
        given[c.name] = c.value
    return given


async def _replace(
    services: BrokerServices, resource_type: int, name: str, given: dict[str, str], validate_only: bool
) -> None:
    config = services.config
    if resource_type == TOPIC:

        def replace_topic(_current: Mapping[str, str]) -> Mapping[str, str]:
            config.validate_topic_configs(given)
            return given

        await services.topic_admin.alter_topic_configs(name, replace_topic, validate_only=validate_only)
    elif resource_type == BROKER:

        def replace_broker(_current: Mapping[str, str]) -> Mapping[str, str]:
            config.validate_dynamic_broker_configs(given)
            return given

        await services.topic_admin.alter_broker_configs(
            broker_entity(name), replace_broker, validate_only=validate_only
        )
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource_type}")
