"""SaslHandshake (17), v0-1. After a v0 handshake the client sends bare SASL tokens (no request header), as before
KIP-152; librdkafka up to 2.0 (kcat on Debian) looks for v0 in ApiVersions before it logs in at all.

Picks the mechanism of a login on a SASL listener (kbroker/security/sasl.py): UNSUPPORTED_SASL_MECHANISM with the
enabled ones if it is not enabled there (and the connection closes, as in Kafka); on a listener without SASL, or on
a session that cannot re-authenticate, ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from protocol.messages.sasl_handshake_response import SaslHandshakeResponse


@handles(SaslHandshakeRequest, 0, 1)
async def handle(ctx: RequestContext, req: SaslHandshakeRequest) -> SaslHandshakeResponse:
    sasl = ctx.services.sasl
    if sasl is None or ctx.session is None:
        return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE)
    result = sasl.handshake(ctx.session, req.mechanism)
    if ctx.api_version == 0 and result.error_code == ErrorCode.NONE:
        ctx.session.raw_sasl = True
    return SaslHandshakeResponse(error_code=result.error_code, mechanisms=list(result.mechanisms))
