"""SaslAuthenticate (36), v0-2: one step of the SASL exchange the handshake chose (kbroker/security/sasl.py).

v1+ answers carry the session lifetime (KIP-368): the client re-authenticates before it ends. A failed login gets
SASL_AUTHENTICATION_FAILED after connection.failed.authentication.delay.ms, and the connection closes; a
SaslAuthenticate without a handshake (or after the login, with no re-authentication begun) ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from kbroker.handlers.registry import RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse


@handles(SaslAuthenticateRequest, 0, 2)
async def handle(ctx: RequestContext, req: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    sasl = ctx.services.sasl
    if sasl is None or ctx.session is None:
        return SaslAuthenticateResponse(
            error_code=ErrorCode.ILLEGAL_SASL_STATE,
            error_message="SaslAuthenticate request received after successful authentication",
        )
    result = await sasl.authenticate(ctx.session, bytes(req.auth_bytes), ctx.api_version)
    return SaslAuthenticateResponse(
        error_code=result.error_code,
        error_message=result.error_message,
        auth_bytes=result.auth_bytes,
        session_lifetime_ms=result.session_lifetime_ms,
    )
