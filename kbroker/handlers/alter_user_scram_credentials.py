"""AlterUserScramCredentials (51), v0: add, replace or delete SCRAM credentials (KIP-554), what
`kafka-configs --alter --entity-type users --add-config 'SCRAM-SHA-256=[password=…]'` sends (the client salts and
hashes the password; the broker stores the stored key and server key, kbroker/security/scram.py).

Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for every user). One result per user, with Kafka's errors:
a user altered twice in one request DUPLICATE_RESOURCE, an empty name or out-of-range iterations
UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist
RESOURCE_NOT_FOUND; a user with any error has none of its changes applied.
"""

from __future__ import annotations

from collections import Counter

from kbroker.common import KafkaError
from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation
from kbroker.security.image import SecurityChange
from kbroker.security.scram import MECHANISM_NAMES, ScramCredential, credential_from_salted_password
from protocol.errors import ErrorCode
from protocol.messages.alter_user_scram_credentials_request import AlterUserScramCredentialsRequest
from protocol.messages.alter_user_scram_credentials_response import (
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)


@handles(AlterUserScramCredentialsRequest, 0, 0)
async def handle(
    ctx: RequestContext, req: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    users = list(dict.fromkeys([d.name for d in req.deletions] + [u.name for u in req.upsertions]))
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return AlterUserScramCredentialsResponse(
            results=[
                AlterUserScramCredentialsResult(
                    user=user, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None
                )
                for user in users
            ]
        )
    existing = ctx.services.metadata.image().security.scram
    seen = Counter(
        [(d.name, d.mechanism) for d in req.deletions] + [(u.name, u.mechanism) for u in req.upsertions]
    )
    errors: dict[str, KafkaError] = {}
    upserts: dict[tuple[str, str], ScramCredential] = {}
    deletes: set[tuple[str, str]] = set()

    def fail(user: str, code: ErrorCode, message: str) -> None:
        errors.setdefault(user, KafkaError(code, message))

    for (user, _mechanism), count in seen.items():
        if count > 1:
            fail(
                user,
                ErrorCode.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request",
            )
    for d in req.deletions:
        mechanism = MECHANISM_NAMES.get(d.mechanism)
        if not d.name:
            fail(d.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism is None:
            fail(d.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif (d.name, mechanism) not in existing:
            fail(
                d.name,
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        else:
            deletes.add((d.name, mechanism))
    for u in req.upsertions:
        mechanism = MECHANISM_NAMES.get(u.mechanism)
        if not u.name:
            fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism is None:
            fail(u.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        else:
            try:
                upserts[(u.name, mechanism)] = credential_from_salted_password(
                    mechanism, bytes(u.salted_password), bytes(u.salt), u.iterations
                )
            except KafkaError as exc:
                fail(u.name, exc.code, exc.message or "")
    change = SecurityChange(
        scram_upserts={k: v for k, v in upserts.items() if k[0] not in errors},
        scram_deletes=frozenset(k for k in deletes if k[0] not in errors),
    )
    if change.scram_upserts or change.scram_deletes:
        try:
            await ctx.services.security_admin.alter_security(change)
        except KafkaError as exc:
            for user in users:
                errors.setdefault(user, exc)
    return AlterUserScramCredentialsResponse(
        results=[
            AlterUserScramCredentialsResult(
                user=user,
                error_code=errors[user].code if user in errors else ErrorCode.NONE,
                error_message=errors[user].message if user in errors else None,
            )
            for user in users
        ]
    )
