"""Request header v0-v2 and response header v0-v1.

Request header v2 (flexible requests) adds a tagged-field section but keeps client_id as an int16-length string: Kafka
never made it compact. Which header version a message uses follows from whether its version is flexible; the one
exception is ApiVersions, whose response always uses header v0 so that a client can read the error of a version it
sent too new.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from protocol.primitives import Reader, Writer
from protocol.schema import MessageSchema

API_VERSIONS_KEY = 18

_RESPONSE_V0 = struct.Struct(">i")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeader:
    """request_api_key, request_api_version, correlation_id, client_id (None in v0 or when null)."""

    request_api_key: int
    request_api_version: int
    correlation_id: int
    client_id: str | None


def read_request_header_prefix(r: Reader) -> RequestHeader:
    """Read key, version, correlation id and client id: common to header v1 and v2 (v0 lacks the client id only for
    controlled-shutdown v0, which no client sends, so we treat every header as at least v1)."""
    key = r.int16()
    version = r.int16()
    correlation_id = r.int32()
    client_id = r.nullable_string(compact=False)
    return RequestHeader(
        request_api_key=key, request_api_version=version, correlation_id=correlation_id, client_id=client_id
    )


def skip_tagged_fields(r: Reader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())


def request_header_version(schema: MessageSchema, api_version: int) -> int:
    return 2 if api_version in schema.flexible else 1


def response_header_version(schema: MessageSchema, api_version: int) -> int:
    if schema.api_key == API_VERSIONS_KEY:
        return 0
    return 1 if api_version in schema.flexible else 0


def encode_request_header(w: Writer, header: RequestHeader, header_version: int) -> None:
    w.int16(header.request_api_key)
    w.int16(header.request_api_version)
    w.int32(header.correlation_id)
    if header_version >= 1:
        w.string(header.client_id, compact=False)
    if header_version >= 2:
        w.uvarint(0)


def encode_response_header(w: Writer, correlation_id: int, header_version: int) -> None:
    w.int32(correlation_id)
    if header_version >= 1:
        w.uvarint(0)


def read_response_header(r: Reader, header_version: int) -> int:
    correlation_id = r.int32()
    if header_version >= 1:
        skip_tagged_fields(r)
    return correlation_id
