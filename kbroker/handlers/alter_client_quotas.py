"""AlterClientQuotas (49), v0-1: set or remove client quotas (KIP-546), what `kafka-configs --alter --entity-type
users|clients [--entity-default] --add-config producer_byte_rate=…` sends.

Needs ALTER_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED for every entry). Entities are user and/or
client-id (a null name is the type's default entity), or ip alone; keys are producer_byte_rate, consumer_byte_rate,
request_percentage and controller_mutation_rate (connection_creation_rate for ip). Anything else, a duplicate
entity type or a value that is not positive gets INVALID_REQUEST. `validate_only` checks without changing. Quotas
are enforced by kbroker/security/quotas.py; controller_mutation_rate and connection_creation_rate are stored and
described but not enforced (docs/kafka-differences.md).
"""

from __future__ import annotations

import ipaddress

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security import quotas as q
from kbroker.security.acl import AclOperation
from kbroker.security.image import QuotaEntity, SecurityChange, quota_entity
from protocol.errors import ErrorCode
from protocol.messages.alter_client_quotas_request import AlterClientQuotasRequest, EntryData
from protocol.messages.alter_client_quotas_response import AlterClientQuotasResponse
from protocol.messages.alter_client_quotas_response import EntityData as ResponseEntity
from protocol.messages.alter_client_quotas_response import EntryData as ResponseEntry

_WHOLE_NUMBER_KEYS = {q.PRODUCER_BYTE_RATE, q.CONSUMER_BYTE_RATE, q.CONNECTION_CREATION_RATE}


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


def validate_entity(pairs: list[tuple[str, str | None]]) -> QuotaEntity:
    if not pairs:
        raise _invalid("Invalid empty client quota entity")
    types = [t for t, _ in pairs]
    if len(set(types)) != len(types):
        raise _invalid(f"Duplicate entity type in {types}")
    for entity_type, name in pairs:
        if entity_type not in q.ENTITY_TYPES:
            raise _invalid(f"Unhandled client quota entity type: {entity_type}")
        if entity_type == q.IP and name is not None:
            try:
                ipaddress.ip_address(name)
            except ValueError:
                raise _invalid(f"{name} is not a valid IP or resolvable host.") from None
    if q.IP in types and len(types) > 1:
        raise _invalid(
            "Invalid quota entity combination, IP entity should not be combined with User or ClientId"
        )
    return quota_entity(dict(pairs))


def _changes(entry: EntryData, entity: QuotaEntity) -> dict[str, float | None]:
    allowed = q.IP_QUOTA_KEYS if entity[0][0] == q.IP else q.CLIENT_QUOTA_KEYS
    changes: dict[str, float | None] = {}
    for op in entry.ops:
        if op.key not in allowed:
            raise _invalid(f"Invalid configuration key {op.key}")
        if op.remove:
            changes[op.key] = None
            continue
        if op.value <= 0:
            raise _invalid(f"Invalid value {op.value} for configuration key {op.key}: it must be positive")
        if op.key in _WHOLE_NUMBER_KEYS and not float(op.value).is_integer():
            raise _invalid(f"Configuration {op.key} must be a Long value")
        changes[op.key] = op.value
    return changes


@handles(AlterClientQuotasRequest, 0, 1)
async def handle(ctx: RequestContext, req: AlterClientQuotasRequest) -> AlterClientQuotasResponse:
    allowed = ctx.authorize_cluster(AclOperation.ALTER_CONFIGS)
    entries: list[ResponseEntry] = []
    changes: dict[QuotaEntity, dict[str, float | None]] = {}
    for entry in req.entries:
        answer = ResponseEntry(
            error_message=None,
            entity=[
                ResponseEntity(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity
            ],
        )
        entries.append(answer)
        if not allowed:
            answer.error_code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            continue
        try:
            entity = validate_entity([(e.entity_type, e.entity_name) for e in entry.entity])
            changes.setdefault(entity, {}).update(_changes(entry, entity))
        except KafkaError as exc:
            answer.error_code, answer.error_message = exc.code, exc.message
    if changes and not req.validate_only:
        try:
            await ctx.services.security_admin.alter_security(SecurityChange(quota_changes=changes))
        except KafkaError as exc:
            for answer in entries:
                if answer.error_code == ErrorCode.NONE:
                    answer.error_code, answer.error_message = exc.code, exc.message
    return AlterClientQuotasResponse(entries=entries)
