"""The dispatcher: one request frame in, one response frame out (or none), through the registered handlers.

It decodes the request header and body with our codec, checks the API and version against the handler registry
(an API or version we do not serve closes the connection, as Kafka does; a too-new ApiVersions gets KIP-511's
UNSUPPORTED_VERSION answer), calls the handler with a `RequestContext` carrying the broker's services, and encodes
the response. No sockets here: kbroker/connection.py moves the bytes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kbroker.handlers.registry import CloseConnection, Deferred, Handler, RequestContext
from kbroker.handlers.services import BrokerServices
from protocol.codec import decode_from, encode_into
from protocol.errors import ErrorCode
from protocol.headers import (
    encode_response_header,
    read_request_header_prefix,
    response_header_version,
    skip_tagged_fields,
)
from protocol.messages import ApiKey
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse
from protocol.primitives import Reader, Writer

# What the dispatcher gives the connection: an encoded response, or a coroutine function that produces one later.
Outgoing = bytearray | bytes | Callable[[], Awaitable[bytearray]]


class RequestDispatcher:
    def __init__(self, services: BrokerServices, handlers: Mapping[ApiKey, Handler[Any, Any]]) -> None:
        self.services = services
        self.handlers = dict(handlers)

    async def handle(self, frame: bytearray, peer: str, connection_id: int) -> Outgoing | None:
        """Decode, dispatch and encode one request; None means no response (acks=0 produce). Raises CloseConnection
        or ProtocolError when the connection must close."""
        r = Reader(frame)
        header = read_request_header_prefix(r)
        version = header.request_api_version
        try:
            api_key = ApiKey(header.request_api_key)
        except ValueError:
            raise CloseConnection(f"API key {header.request_api_key} does not exist") from None
        handler = self.handlers.get(api_key)
        if handler is None:
            raise CloseConnection(f"API {api_key.name} ({int(api_key)}) is not supported")
        if not handler.min_version <= version <= handler.max_version:
            if api_key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(header.correlation_id)
            raise CloseConnection(
                f"API {api_key.name} ({int(api_key)}) version {version} is not supported "
                f"(we support {handler.min_version}-{handler.max_version})"
            )
        schema = handler.request_schema
        if version in schema.flexible:
            skip_tagged_fields(r)
        request: object = decode_from(schema.struct.cls, version, r)
        ctx = RequestContext(
            services=self.services,
            api_key=api_key,
            api_version=version,
            correlation_id=header.correlation_id,
            client_id=header.client_id,
            client_host=peer,
            connection_id=connection_id,
        )
        response = await handler.fn(ctx, request)
        if response is None:
            return None
        header_version = response_header_version(schema, version)
        if isinstance(response, Deferred):
            deferred = response

            async def encode_later() -> bytearray:
                return _encode_response(header.correlation_id, header_version, await deferred.wait(), version)

            return encode_later
        return _encode_response(header.correlation_id, header_version, response, version)

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        """KIP-511: a too-new ApiVersions request gets UNSUPPORTED_VERSION in the v0 schema, listing only key 18."""
        h = self.handlers[ApiKey.API_VERSIONS]
        response = ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                ApiVersion(api_key=ApiKey.API_VERSIONS, min_version=h.min_version, max_version=h.max_version)
            ],
        )
        return bytes(_encode_response(correlation_id, 0, response, 0))


def _encode_response(correlation_id: int, header_version: int, response: object, version: int) -> bytearray:
    w = Writer()
    w.int32(0)  # size, patched below
    encode_response_header(w, correlation_id, header_version)
    encode_into(w, response, version)
    w.out[0:4] = (len(w.out) - 4).to_bytes(4, "big")
    return w.out  # no copy: a fetch response can be megabytes
