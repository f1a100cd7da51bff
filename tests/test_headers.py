"""protocol.headers: request header v0-v2, response header v0-v1, and which version each message uses.

Cross-checked with kafka-python's own header classes where it has them.
"""

from __future__ import annotations

import pytest
from kafka.protocol.api_header import RequestHeader as KpRequestHeader
from kafka.protocol.api_header import ResponseHeader as KpResponseHeader

from protocol.codec import decode
from protocol.errors import ProtocolError
from protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    encode_request_header,
    encode_response_header,
    read_request_header_prefix,
    read_response_header,
    request_header_version,
    response_header_version,
    skip_tagged_fields,
)
from protocol.messages import REQUESTS, RESPONSES, SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.api_versions_response import ApiVersionsResponse
from protocol.messages.metadata_request import MetadataRequest
from protocol.messages.produce_request import ProduceRequest
from protocol.primitives import Reader, Writer

HEADER = RequestHeader(request_api_key=3, request_api_version=12, correlation_id=0x01020304, client_id="abc")


def _request_header(header: RequestHeader, version: int) -> bytes:
    w = Writer()
    encode_request_header(w, header, version)
    return bytes(w.out)


def _response_header(correlation_id: int, version: int) -> bytes:
    w = Writer()
    encode_response_header(w, correlation_id, version)
    return bytes(w.out)


@pytest.mark.parametrize(
    ("version", "hex_"),
    [
        (0, "0003 000c 01020304"),
        (1, "0003 000c 01020304 0003 616263"),
        # v2: client_id stays an int16-length string (never compact); then an empty tagged-field section
        (2, "0003 000c 01020304 0003 616263 00"),
    ],
)
def test_request_header_bytes(version: int, hex_: str) -> None:
    assert _request_header(HEADER, version).hex(" ") == bytes.fromhex(hex_).hex(" ")


def test_null_and_empty_client_id() -> None:
    for client_id, wire in ((None, "ffff"), ("", "0000")):
        header = RequestHeader(
            request_api_key=18, request_api_version=3, correlation_id=1, client_id=client_id
        )
        data = _request_header(header, 2)
        assert data == bytes.fromhex("0012 0003 00000001" + wire + "00")
        r = Reader(data)
        assert read_request_header_prefix(r) == header
        skip_tagged_fields(r)
        assert r.remaining() == 0


@pytest.mark.parametrize("version", [1, 2])
def test_request_header_round_trip(version: int) -> None:
    body = b"\x00\x00\x00\x00"
    data = _request_header(HEADER, version) + body
    r = Reader(data)
    assert read_request_header_prefix(r) == HEADER
    if version == 2:
        skip_tagged_fields(r)
    assert bytes(r.raw(r.remaining())) == body


def test_request_header_v2_skips_unknown_tagged_fields() -> None:
    w = Writer()
    encode_request_header(w, HEADER, 1)
    # two tagged fields a newer client might send: tag 0 (3 bytes), tag 300 (0 bytes)
    w.raw(bytes.fromhex("02 00 03 aabbcc ac02 00"))
    w.raw(bytes.fromhex("01 00"))  # whatever body follows
    data = bytes(w.out)
    r = Reader(data)
    assert read_request_header_prefix(r) == HEADER
    skip_tagged_fields(r)
    assert bytes(r.raw(r.remaining())) == bytes.fromhex("01 00")


@pytest.mark.parametrize(
    "hex_",
    [
        "",
        "0003",
        "0003 000c 0102",
        "0003 000c 01020304",  # no client id
        "0003 000c 01020304 0005 6162",  # client id cut short
        "0003 000c 01020304 0002 c328",  # client id not UTF-8
    ],
)
def test_truncated_request_header(hex_: str) -> None:
    with pytest.raises(ProtocolError):
        read_request_header_prefix(Reader(bytes.fromhex(hex_)))


@pytest.mark.parametrize("hex_", ["", "01", "01 05", "01 05 02 aa", "02 00 00"])
def test_truncated_tagged_section(hex_: str) -> None:
    with pytest.raises(ProtocolError):
        skip_tagged_fields(Reader(bytes.fromhex(hex_)))


def test_response_header_bytes() -> None:
    assert _response_header(7, 0) == bytes.fromhex("00000007")
    assert _response_header(7, 1) == bytes.fromhex("00000007 00")
    assert _response_header(-1, 0) == bytes.fromhex("ffffffff")
    assert read_response_header(Reader(bytes.fromhex("00000007")), 0) == 7
    r = Reader(bytes.fromhex("00000007 01 05 02 aabb ff"))
    assert read_response_header(r, 1) == 7
    assert r.remaining() == 1
    with pytest.raises(ProtocolError):
        read_response_header(Reader(bytes.fromhex("000000")), 0)
    with pytest.raises(ProtocolError):
        read_response_header(Reader(bytes.fromhex("00000007")), 1)


def test_header_versions_follow_flexibility() -> None:
    produce = SCHEMAS[ProduceRequest]
    assert request_header_version(produce, 8) == 1
    assert request_header_version(produce, 9) == 2
    metadata = SCHEMAS[MetadataRequest]
    assert request_header_version(metadata, 0) == 1  # v0 headers are treated as v1: they carry a client id
    assert request_header_version(metadata, 9) == 2
    for key, cls in RESPONSES.items():
        schema = SCHEMAS[cls]
        for v in range(schema.valid.lo, schema.valid.hi + 1):
            expected = 0 if key == API_VERSIONS_KEY or v not in schema.flexible else 1
            assert response_header_version(schema, v) == expected, f"{schema.name} v{v}"
            # the server may look the answer up from the request's schema as well: same result
            assert response_header_version(SCHEMAS[REQUESTS[key]], v) == expected, f"{schema.name} v{v}"


def test_api_versions_response_header_is_always_v0() -> None:
    schema = SCHEMAS[ApiVersionsResponse]
    assert schema.api_key == API_VERSIONS_KEY == 18
    assert [response_header_version(schema, v) for v in range(schema.valid.lo, schema.valid.hi + 1)] == [
        0
    ] * 5
    # ...while the ApiVersions request at v3+ does use header v2
    assert request_header_version(SCHEMAS[ApiVersionsRequest], 3) == 2


def test_requests_and_responses_share_flexible_versions() -> None:
    """Header choice per API version is only well defined if a request and its response agree on flexibility."""
    assert set(REQUESTS) == set(RESPONSES)
    for key, req in REQUESTS.items():
        rs, ps = SCHEMAS[req], SCHEMAS[RESPONSES[key]]
        assert (rs.valid, rs.flexible) == (ps.valid, ps.flexible), rs.name


def test_a_whole_request_frame() -> None:
    """Header then body, as the connection will read them."""
    header = RequestHeader(request_api_key=18, request_api_version=3, correlation_id=5, client_id="c")
    w = Writer()
    encode_request_header(w, header, request_header_version(SCHEMAS[ApiVersionsRequest], 3))
    w.raw(bytes.fromhex("02 61 02 62 00"))
    r = Reader(bytes(w.out))
    got = read_request_header_prefix(r)
    assert got == header
    skip_tagged_fields(r)
    body = decode(ApiVersionsRequest, 3, r.buf[r.pos :])
    assert body == ApiVersionsRequest(client_software_name="a", client_software_version="b")


# --- kafka-python's header classes as an oracle -----------------------------------------------------------------------


@pytest.mark.parametrize("flexible", [False, True])
@pytest.mark.parametrize("client_id", ["kafka-python", "", None])
def test_request_header_matches_kafka_python(flexible: bool, client_id: str | None) -> None:
    kp = KpRequestHeader(request_api_key=1, request_api_version=12, correlation_id=99, client_id=client_id)
    theirs = bytes(kp.encode(flexible=flexible))
    header = RequestHeader(request_api_key=1, request_api_version=12, correlation_id=99, client_id=client_id)
    assert _request_header(header, 2 if flexible else 1) == theirs
    r = Reader(theirs)
    assert read_request_header_prefix(r) == header
    if flexible:
        skip_tagged_fields(r)
    assert r.remaining() == 0


@pytest.mark.parametrize("flexible", [False, True])
def test_response_header_matches_kafka_python(flexible: bool) -> None:
    theirs = bytes(KpResponseHeader(correlation_id=-5).encode(flexible=flexible))
    assert _response_header(-5, 1 if flexible else 0) == theirs
    assert read_response_header(Reader(theirs), 1 if flexible else 0) == -5


def test_metadata_request_v12_header_and_body_from_kafka_python() -> None:
    from kafka.protocol.metadata import MetadataRequest as KpMetadataRequest

    kp = KpMetadataRequest(version=12, topics=None, allow_auto_topic_creation=False)
    kp.with_header(correlation_id=42, client_id="kp")
    frame = bytes(kp.encode(header=True, framed=True))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    r = Reader(frame, pos=4)
    header = read_request_header_prefix(r)
    assert header == RequestHeader(
        request_api_key=3, request_api_version=12, correlation_id=42, client_id="kp"
    )
    assert request_header_version(SCHEMAS[REQUESTS[header.request_api_key]], 12) == 2
    skip_tagged_fields(r)
    assert decode(MetadataRequest, 12, r.buf[r.pos :]) == MetadataRequest(
        topics=None,  # type: ignore[arg-type]  # null: the generated types miss nullable arrays
        allow_auto_topic_creation=False,
    )
