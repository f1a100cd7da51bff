"""DescribeUserScramCredentials (50), v0: each user's SCRAM mechanisms and iteration counts (never a secret).

Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED). No users named (null or empty): every user with a
credential. A user named twice gets DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND, as in Kafka.
"""

from __future__ import annotations

from collections import Counter

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation
from kbroker.security.scram import MECHANISM_IDS
from protocol.errors import ErrorCode
from protocol.messages.describe_user_scram_credentials_request import DescribeUserScramCredentialsRequest
from protocol.messages.describe_user_scram_credentials_response import (
    CredentialInfo,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)


@handles(DescribeUserScramCredentialsRequest, 0, 0)
async def handle(
    ctx: RequestContext, req: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        return DescribeUserScramCredentialsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None
        )
    scram = ctx.services.metadata.image().security.scram
    by_user: dict[str, list[CredentialInfo]] = {}
    for (user, mechanism), credential in sorted(scram.items()):
        by_user.setdefault(user, []).append(
            CredentialInfo(mechanism=MECHANISM_IDS[mechanism], iterations=credential.iterations)
        )
    results: list[DescribeUserScramCredentialsResult] = []
    if not req.users:
        for user, infos in by_user.items():
            results.append(
                DescribeUserScramCredentialsResult(user=user, error_message=None, credential_infos=infos)
            )
        return DescribeUserScramCredentialsResponse(error_message=None, results=results)
    counts = Counter(u.name for u in req.users)
    for name in dict.fromkeys(u.name for u in req.users):
        result = DescribeUserScramCredentialsResult(user=name, error_message=None)
        results.append(result)
        if counts[name] > 1:
            result.error_code = ErrorCode.DUPLICATE_RESOURCE
            result.error_message = (
                "Cannot describe SCRAM credentials for the same user twice in a single request"
            )
        elif name not in by_user:
            result.error_code = ErrorCode.RESOURCE_NOT_FOUND
            result.error_message = "Attempt to describe a user credential that does not exist"
        else:
            result.credential_infos = by_user[name]
    return DescribeUserScramCredentialsResponse(error_message=None, results=results)
