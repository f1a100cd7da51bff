"""ApiVersions (18), v0-4.

Lists every registered handler's version range. A request for a version newer than ours never reaches this
handler: the connection answers it with UNSUPPORTED_VERSION in the v0 schema (KIP-511, see connection.py).
v3+ requests must name the client software in Kafka's allowed characters, else INVALID_REQUEST.
Not implemented: supported/finalized features (empty) — we have no feature flags.
"""

from __future__ import annotations

import re

from kbroker.handlers.registry import HANDLERS, RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def supported_api_versions() -> list[ApiVersion]:
    return [
        ApiVersion(api_key=h.api_key, min_version=h.min_version, max_version=h.max_version)
        for h in sorted(HANDLERS.values(), key=lambda h: h.api_key)
    ]


@handles(ApiVersionsRequest, 0, 4)
async def handle(ctx: RequestContext, req: ApiVersionsRequest) -> ApiVersionsResponse:
    if ctx.api_version >= 3 and not (
        _SOFTWARE.fullmatch(req.client_software_name) and _SOFTWARE.fullmatch(req.client_software_version)
    ):
        # As Kafka: the error alone (only UNSUPPORTED_VERSION lists versions, see kbroker/dispatch.py).
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=supported_api_versions())
