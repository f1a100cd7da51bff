"""Hostile input to `decode`: whatever the bytes, it returns a message or raises ProtocolError, nothing else.

Random bytes mostly die in the first few fields, so besides pure noise we also corrupt valid bodies (flip, insert,
delete, overwrite with 0xff / 0x7f runs) to reach the nested structs, arrays and tagged sections. Length prefixes that
announce more than the frame holds must be refused without allocating what they announce.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode, encode
from protocol.errors import ProtocolError
from protocol.messages import REQUESTS, RESPONSES, SCHEMAS
from protocol.messages.api_versions_response import ApiVersionsResponse
from protocol.messages.create_topics_request import CreateTopicsRequest
from protocol.messages.fetch_request import FetchRequest
from protocol.messages.metadata_request import MetadataRequest
from protocol.messages.produce_request import ProduceRequest
from protocol.primitives import encode_uvarint
from tests.test_codec_strategies import message_strategy

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

REQUEST_CLASSES = sorted(REQUESTS.values(), key=lambda c: c.__name__)
RESPONSE_CLASSES = sorted(RESPONSES.values(), key=lambda c: c.__name__)


def _versions(cls: type) -> range:
    valid = SCHEMAS[cls].valid
    return range(valid.lo, valid.hi + 1)


def _decode_or_protocol_error(cls: type, version: int, data: bytes) -> Any:
    try:
        msg: object = decode(cls, version, data)
    except ProtocolError:
        return None
    # anything that decodes must also encode again (it is a well-formed message of this version)
    encode(msg, version)
    return msg


@pytest.mark.parametrize("cls", REQUEST_CLASSES, ids=lambda c: c.__name__)
@FUZZ
@given(data=st.binary(max_size=64))
def test_random_bytes_every_request(cls: type, data: bytes) -> None:
    for version in _versions(cls):
        _decode_or_protocol_error(cls, version, data)


@pytest.mark.parametrize("cls", RESPONSE_CLASSES, ids=lambda c: c.__name__)
@settings(FUZZ, max_examples=10)
@given(data=st.binary(max_size=64))
def test_random_bytes_every_response(cls: type, data: bytes) -> None:
    for version in _versions(cls):
        _decode_or_protocol_error(cls, version, data)


_MUTATION = st.tuples(
    st.sampled_from(["flip", "insert", "delete", "ff", "7f", "zero"]),
    st.integers(0, 10_000),
    st.integers(0, 255),
)


def _mutate(body: bytes, mutations: list[tuple[str, int, int]]) -> bytes:
    out = bytearray(body)
    for kind, where, byte in mutations:
        i = where % (len(out) + 1)
        if kind == "insert":
            out[i:i] = bytes([byte])
        elif not out:
            continue
        elif kind == "flip":
            out[i % len(out)] ^= 1 << (byte % 8)
        elif kind == "delete":
            del out[i % len(out)]
        else:
            fill = {"ff": 0xFF, "7f": 0x7F, "zero": 0}[kind]
            j = i % len(out)
            out[j : j + 4] = bytes([fill]) * len(out[j : j + 4])
    return bytes(out)


@pytest.mark.parametrize("cls", REQUEST_CLASSES, ids=lambda c: c.__name__)
@FUZZ
@given(data=st.data(), mutations=st.lists(_MUTATION, min_size=1, max_size=4))
def test_corrupted_valid_requests(
    cls: type, data: st.DataObject, mutations: list[tuple[str, int, int]]
) -> None:
    version = data.draw(st.sampled_from(_versions(cls)), label="version")
    body = encode(data.draw(message_strategy(cls, version), label="msg"), version)
    _decode_or_protocol_error(cls, version, _mutate(body, mutations))


# --- announced lengths that the frame cannot hold ---------------------------------------------------------------------

HUGE = [
    # non-flexible: int32 array count / int16 string length / int32 bytes length, then a few bytes
    ("MetadataRequest v0 topics count 2**31-1", MetadataRequest, 0, b"\x7f\xff\xff\xff\x00\x01a", "exceeds"),
    ("MetadataRequest v0 name length 32767", MetadataRequest, 0, b"\x00\x00\x00\x01\x7f\xffa", "truncated"),
    (
        "ProduceRequest v3 records length 2**31-1",
        ProduceRequest,
        3,
        bytes.fromhex("ffff 0001 00000000 00000001 0001 74 00000001 00000000 7fffffff"),
        "truncated",
    ),
    # flexible: compact lengths as uvarints up to 2**64-1
    (
        "MetadataRequest v12 topics count 2**32",
        MetadataRequest,
        12,
        encode_uvarint(2**32) + bytes(8),
        "exceeds",
    ),
    (
        "MetadataRequest v12 topics count 2**64-1",
        MetadataRequest,
        12,
        encode_uvarint(2**64 - 1) + bytes(8),
        "exceeds",
    ),
    (
        "CreateTopicsRequest v5 tagged-field count 2**63",
        CreateTopicsRequest,
        5,
        bytes.fromhex("01 00000000 00") + encode_uvarint(2**63) + bytes(2),
        "truncated",
    ),
    (
        "ApiVersionsResponse v3 tagged field size 2**40",
        ApiVersionsResponse,
        3,
        bytes.fromhex("0000 01 00000000 01 01") + encode_uvarint(2**40) + bytes(1),
        "past the end",
    ),
    (
        "FetchRequest v13 unknown tag of size 2**31",
        FetchRequest,
        13,
        bytes(25) + bytes.fromhex("01 01 01 01 63") + encode_uvarint(2**31) + bytes(1),
        "truncated",
    ),
]


@pytest.mark.parametrize(("cls", "version", "data", "error"), [h[1:] for h in HUGE], ids=[h[0] for h in HUGE])
def test_announced_lengths_beyond_the_frame_do_not_allocate(
    cls: type, version: int, data: bytes, error: str
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError, match=error):
            decode(cls, version, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, f"decoding {len(data)} bytes peaked at {peak} bytes"


def test_huge_array_count_fails_fast() -> None:
    """A 2**31 element count over a tiny body must be refused by the length check, not by running out of bytes
    after building a long list."""
    with pytest.raises(ProtocolError, match="exceeds"):
        decode(MetadataRequest, 1, b"\x7f\xff\xff\xff" + b"\x00" * 64)
