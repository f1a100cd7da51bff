"""Our codec against an independent implementation: kafka-python 3's JSON-driven protocol classes.

kafka-python ships its own copy of Kafka's message specs (from a later Kafka than our 3.9 ones, so some versions were
dropped and some added) and its own encoder/decoder. For every message both know and every version both support:

* the two schemas agree field by field (names, types, array-ness, nullability, tagging);
* bytes we encode decode with kafka-python and re-encode to the very same bytes;
* values handed to kafka-python encode to bytes that we decode back to those values and re-encode identically.

Then a few golden byte tables computed by hand, so that both implementations agreeing on a wrong answer would still
be caught.
"""

from __future__ import annotations

import importlib
import pkgutil
import uuid
from typing import Any

import kafka.protocol
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.base import BaseField
from kafka.protocol.schemas.fields.codecs import BitField

from protocol.codec import decode, encode
from protocol.headers import RequestHeader, encode_request_header, encode_response_header
from protocol.messages import SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse, FinalizedFeatureKey
from protocol.messages.consumer_group_heartbeat_response import Assignment, ConsumerGroupHeartbeatResponse
from protocol.messages.fetch_response import (
    EpochEndOffset,
    FetchableTopicResponse,
    FetchResponse,
    LeaderIdAndEpoch,
    PartitionData,
)
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.primitives import ZERO_UUID, Writer
from protocol.schema import Field, StructSchema
from tests.test_codec_strategies import assert_same_message, is_present, is_tagged, message_strategy


def _kafka_python_classes() -> dict[str, type]:
    """Every kafka-python request/response class, by Kafka message name (the legacy `old` package excluded)."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in info.name or info.name.endswith("generate_stubs"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ApiMessage)
                and value is not ApiMessage
                and getattr(value, "_json", None) is not None
            ):
                found[value.name] = value
    return found


KP_CLASSES = _kafka_python_classes()
OURS_BY_NAME = {schema.name: cls for cls, schema in SCHEMAS.items()}


def _shared_versions(kp_cls: Any, cls: type) -> range:
    # kafka-python's class accepts any version from 0 but its spec declares the real range; use the declared one
    declared = BaseField.parse_versions(kp_cls.json["validVersions"])
    assert declared is not None  # every message spec declares its validVersions
    lo, hi = declared
    ours = SCHEMAS[cls].valid
    return range(max(lo, ours.lo), min(hi, ours.hi) + 1)


SHARED: list[tuple[type, Any, int]] = sorted(
    (
        (OURS_BY_NAME[name], kp_cls, v)
        for name, kp_cls in KP_CLASSES.items()
        if name in OURS_BY_NAME
        for v in _shared_versions(kp_cls, OURS_BY_NAME[name])
    ),
    key=lambda t: (t[0].__name__, t[2]),
)


def _shared_id(t: tuple[type, Any, int]) -> str:
    return f"{t[0].__name__}-v{t[2]}"


# --- mapping between the two schema trees --------------------------------------------------------------------------


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _kp_fields(kp_struct: Any) -> list[Any]:
    # a StructArrayField wraps the element StructField
    inner = getattr(kp_struct, "array_of", kp_struct)
    return list(inner._fields)


def _match(f: Field, kp_fields: list[Any]) -> Any:
    """kafka-python's field for ours, by Kafka's field name. kafka-python renames a few authorized-operations fields
    (ClusterAuthorizedOperations -> authorized_operations) when it patches them into bit sets, hence the suffix rule."""
    want = _norm(f.name)
    for kf in kp_fields:
        if _norm(kf._name) == want:
            return kf
    for kf in kp_fields:
        if kf._type_str == "bitfield" and want.endswith(_norm(kf._name)):
            return kf
    raise AssertionError(f"kafka-python has no field for {f.name}")


def _in(versions: tuple[int, int] | None, version: int) -> bool:
    return versions is not None and versions[0] <= version <= versions[1]


def _base_type(kf: Any) -> str:
    t: str = kf._type_str
    return t[2:] if t.startswith("[]") else t


def _compare_schemas(struct: StructSchema, kp_struct: Any, version: int, flexible: bool, path: str) -> None:
    kp_fields = _kp_fields(kp_struct)
    ours = [f for f in struct.fields if is_present(f, version, flexible)]
    matched = set()
    for f in ours:
        where = f"{path}.{f.name}"
        kf = _match(f, kp_fields)
        matched.add(id(kf))
        assert kf.for_version_q(version), f"{where}: kafka-python lacks it at v{version}"
        kp_array = kf._type_str.startswith("[]")
        assert f.array == kp_array, f"{where}: array {f.array} vs {kp_array}"
        kp_type = _base_type(kf)
        if f.type == "struct":
            assert kf.is_struct() or kf.is_struct_array(), f"{where}: struct vs {kp_type}"
            assert f.struct is not None
            _compare_schemas(f.struct, kf, version, flexible, where)
        elif kp_type == "bitfield":
            assert f.type == "int32", where
        else:
            assert f.type == kp_type, f"{where}: {f.type} vs {kp_type}"
        assert (version in f.nullable) == _in(kf._nullable_versions, version), f"{where}: nullability differs"
        kp_tagged = flexible and kf.tagged_field_q(version)
        assert is_tagged(f, version) == kp_tagged, f"{where}: tagging differs"
        if kp_tagged:
            assert f.tag == kf.tag, f"{where}: tag {f.tag} vs {kf.tag}"
    for kf in kp_fields:
        present = kf.for_version_q(version) and (flexible or not kf.tagged_field_q(version))
        assert not present or id(kf) in matched, f"{path}.{kf.name}: only kafka-python has it at v{version}"


# --- values: ours -> kafka-python objects ---------------------------------------------------------------------------


def _tag_default(f: Field, version: int) -> Any:
    # what our encoder leaves out: a tagged non-nullable struct is omitted when it equals a fresh instance
    if f.struct is not None and not f.array and f.default is None and version not in f.nullable:
        return f.struct.cls()
    return f.default


def _to_kp_value(f: Field, kf: Any, value: Any, version: int, flexible: bool) -> Any:
    if value is None:
        return None
    if f.type == "struct":
        assert f.struct is not None
        data_class = kf.data_class
        if f.array:
            return [_to_kp_struct(f.struct, kf, v, data_class, version, flexible) for v in value]
        return _to_kp_struct(f.struct, kf, value, data_class, version, flexible)
    if _base_type(kf) == "bitfield":
        bits = BitField.from_32_bit_field(value & 0xFFFFFFFF)
        return None if bits == {31} else bits
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _kp_kwargs(
    struct: StructSchema, kp_struct: Any, obj: Any, version: int, flexible: bool
) -> dict[str, Any]:
    kp_fields = _kp_fields(kp_struct)
    kwargs: dict[str, Any] = {}
    for f in struct.fields:
        if not is_present(f, version, flexible):
            continue
        value = getattr(obj, f.name)
        if is_tagged(f, version) and value == _tag_default(f, version):
            continue  # absent on the wire; leave kafka-python's own default
        kf = _match(f, kp_fields)
        kwargs[kf.name] = _to_kp_value(f, kf, value, version, flexible)
    return kwargs


def _to_kp_struct(
    struct: StructSchema, kp_struct: Any, obj: Any, data_class: Any, version: int, flexible: bool
) -> Any:
    return data_class(**_kp_kwargs(struct, kp_struct, obj, version, flexible))


def to_kafka_python(kp_cls: Any, msg: Any, version: int) -> Any:
    schema = SCHEMAS[type(msg)]
    flexible = version in schema.flexible
    return kp_cls(version=version, **_kp_kwargs(schema.struct, kp_cls._struct, msg, version, flexible))


def kp_encode(kp_obj: Any, version: int) -> bytes:
    # the base-class encoder, past per-API conveniences (MetadataRequest/DeleteTopicsRequest rewrite fields)
    return bytes(ApiMessage.encode(kp_obj, version=version))


def kp_decode(kp_cls: Any, version: int, body: bytes) -> Any:
    # the base-class decoder: ApiVersionsResponse's override falls back to v0 whenever error_code != 0
    obj = vars(ApiMessage)["decode"].__func__(kp_cls, body, version=version)
    if "_header" not in dir(obj) or not _has_slot(obj, "_header"):
        obj._header = None  # the fast decoder skips __init__; encode() wants the slot set
    return obj


def _has_slot(obj: Any, name: str) -> bool:
    try:
        object.__getattribute__(obj, name)
    except AttributeError:
        return False
    return True


# --- tests ------------------------------------------------------------------------------------------------------------


def test_kafka_python_covers_the_common_apis() -> None:
    names = {cls.__name__ for cls, _, _ in SHARED}
    for must in (
        "ProduceRequest",
        "FetchResponse",
        "MetadataResponse",
        "ApiVersionsResponse",
        "JoinGroupRequest",
    ):
        assert must in names
    assert len(SHARED) > 300


@pytest.mark.parametrize("shared", SHARED, ids=_shared_id)
def test_schemas_agree(shared: tuple[type, Any, int]) -> None:
    cls, kp_cls, version = shared
    schema = SCHEMAS[cls]
    flexible = version in schema.flexible
    assert flexible == kp_cls.flexible_version_q(version)
    _compare_schemas(schema.struct, kp_cls._struct, version, flexible, schema.name)


ORACLE = settings(
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("shared", SHARED, ids=_shared_id)
@ORACLE
@given(data=st.data())
def test_both_ways(shared: tuple[type, Any, int], data: st.DataObject) -> None:
    cls, kp_cls, version = shared
    schema = SCHEMAS[cls]
    msg: Any = data.draw(message_strategy(cls, version), label="msg")

    # ours -> kafka-python -> same bytes
    ours = encode(msg, version)
    kp_obj = kp_decode(kp_cls, version, ours)
    assert kp_encode(kp_obj, version) == ours

    # kafka-python -> ours -> same values, same bytes
    theirs = kp_encode(to_kafka_python(kp_cls, msg, version), version)
    back: object = decode(cls, version, theirs)
    assert_same_message(schema, version, msg, back)
    assert encode(back, version) == theirs
    assert theirs == ours


# --- golden bytes, computed by hand -----------------------------------------------------------------------------------


def _hex(text: str) -> bytes:
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()))


GOLDEN: list[tuple[str, Any, int, bytes]] = [
    ("ApiVersionsRequest v0: empty body", ApiVersionsRequest(), 0, b""),
    (
        "ApiVersionsRequest v3",
        ApiVersionsRequest(client_software_name="kbroker", client_software_version="0.1"),
        3,
        _hex("""
            08 6b62726f6b6572   # client_software_name: compact string, uvarint(7 + 1) then 'kbroker'
            04 302e31           # client_software_version: uvarint(3 + 1) then '0.1'
            00                  # no tagged fields
        """),
    ),
    (
        "MetadataRequest v0",
        MetadataRequest(topics=[MetadataRequestTopic(name="foo"), MetadataRequestTopic(name="")]),
        0,
        _hex("""
            00000002            # topics: int32 count
            0003 666f6f         # name: int16 length then 'foo'
            0000                # name: empty string
        """),
    ),
    (
        "MetadataRequest v12",
        MetadataRequest(
            topics=[MetadataRequestTopic(topic_id=uuid.UUID(int=0x0102), name=None)],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
        ),
        12,
        _hex("""
            02                                  # topics: compact array, uvarint(1 + 1)
            00000000000000000000000000000102    # topic_id
            00                                  # name: compact nullable string, null
            00                                  # topic's tagged fields
            00                                  # allow_auto_topic_creation
            01                                  # include_topic_authorized_operations
            00                                  # tagged fields
        """),
    ),
    (
        "MetadataRequest v12: null topics means all topics",
        MetadataRequest(topics=None),  # type: ignore[arg-type]  # null: the generated types miss nullable arrays
        12,
        _hex("00 01 00 00"),
    ),
    (
        "ApiVersionsResponse v3 with tagged fields",
        ApiVersionsResponse(
            api_keys=[ApiVersion(api_key=18, min_version=0, max_version=4)],
            throttle_time_ms=7,
            finalized_features_epoch=5,
            finalized_features=[FinalizedFeatureKey(name="mv", max_version_level=21, min_version_level=1)],
            zk_migration_ready=True,
        ),
        3,
        _hex("""
            0000                    # error_code
            02 0012 0000 0004 00    # api_keys: one element (key 18, 0..4) and its empty tagged fields
            00000007                # throttle_time_ms
            03                      # three tagged fields, in tag order; supported_features (tag 0) is default
            01 08 0000000000000005  # tag 1 finalized_features_epoch, 8 bytes
            02 09 02 036d76 0015 0001 00  # tag 2 finalized_features, 9 bytes: one element 'mv', 21, 1
            03 01 01                # tag 3 zk_migration_ready, 1 byte
        """),
    ),
    (
        "ApiVersionsResponse v3 all defaults: finalized_features_epoch -1 is not written",
        ApiVersionsResponse(),
        3,
        _hex("0000 01 00000000 00"),
    ),
    (
        "ConsumerGroupHeartbeatResponse v0: nullable struct present, nullable strings null",
        ConsumerGroupHeartbeatResponse(
            member_id="m",
            member_epoch=3,
            assignment=Assignment(topic_partitions=[]),
        ),
        0,
        _hex("""
            00000000 0000   # throttle_time_ms, error_code
            00              # error_message: null
            02 6d           # member_id 'm'
            00000003        # member_epoch
            00000000        # heartbeat_interval_ms
            01 01 00        # assignment: present marker, empty compact array, its tagged fields
            00              # tagged fields
        """),
    ),
    (
        "ConsumerGroupHeartbeatResponse v0: nullable struct null",
        ConsumerGroupHeartbeatResponse(assignment=None),
        0,
        _hex("00000000 0000 00 00 00000000 00000000 ff 00"),
    ),
    (
        "FetchResponse v12: tagged structs written only when they differ from the default",
        FetchResponse(
            responses=[
                FetchableTopicResponse(
                    topic="t",
                    partitions=[
                        PartitionData(
                            partition_index=0,
                            high_watermark=10,
                            diverging_epoch=EpochEndOffset(epoch=2, end_offset=8),
                            current_leader=LeaderIdAndEpoch(),
                            records=b"",
                        )
                    ],
                )
            ]
        ),
        12,
        _hex("""
            00000000 0000 00000000      # throttle_time_ms, error_code, session_id
            02 02 74                    # responses: one topic 't'
            02                          # partitions: one
            00000000 0000               # partition_index, error_code
            000000000000000a            # high_watermark
            ffffffffffffffff            # last_stable_offset (default -1)
            ffffffffffffffff            # log_start_offset (default -1)
            01 ffffffff                 # aborted_transactions: empty; preferred_read_replica -1
            01                          # records: compact bytes, empty
            01 00 0d 00000002 0000000000000008 00  # one tagged field: tag 0 diverging_epoch, 13 bytes
            00                          # topic's tagged fields
            00                          # response's tagged fields (node_endpoints empty)
        """),
    ),
]


@pytest.mark.parametrize(("msg", "version", "expected"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN])
def test_golden_bytes(msg: Any, version: int, expected: bytes) -> None:
    cls = type(msg)
    assert encode(msg, version).hex(" ") == expected.hex(" ")
    assert decode(cls, version, expected) == msg
    kp_cls = KP_CLASSES.get(SCHEMAS[cls].name)
    if kp_cls is not None:
        assert kp_encode(kp_decode(kp_cls, version, expected), version) == expected


def test_golden_request_frames_with_headers() -> None:
    """Whole ApiVersions requests as they go on the wire: size, header v1 / v2, body."""
    for version, header_version, body, expected in [
        (
            0,
            1,
            b"",
            _hex("""
                0000000e            # size: 14
                0012 0000 00000007  # api key 18, version 0, correlation id 7
                0004 6b636174       # client id 'kcat', int16 length
            """),
        ),
        (
            3,
            2,
            _hex("02 61 02 62 00"),
            _hex("""
                00000014            # size: 20
                0012 0003 00000007  # api key 18, version 3, correlation id 7
                0004 6b636174       # client id: still an int16-length string in header v2
                00                  # header tagged fields
                02 61 02 62 00      # body: 'a', 'b', no tagged fields
            """),
        ),
    ]:
        w = Writer()
        header = RequestHeader(
            request_api_key=18, request_api_version=version, correlation_id=7, client_id="kcat"
        )
        encode_request_header(w, header, header_version)
        w.raw(body)
        frame = len(w.out).to_bytes(4, "big") + bytes(w.out)
        assert frame.hex(" ") == expected.hex(" ")
        # kafka-python's own request encoding agrees
        kp_cls = KP_CLASSES["ApiVersionsRequest"]
        kp_req = kp_decode(kp_cls, version, body)
        kp_req.with_header(correlation_id=7, client_id="kcat")
        assert bytes(kp_req.encode(version=version, header=True, framed=True)) == expected


def test_golden_api_versions_response_frame() -> None:
    """ApiVersions answers with response header v0 even at flexible v3: no header tagged-field byte."""
    w = Writer()
    encode_response_header(w, 7, 0)
    w.raw(encode(ApiVersionsResponse(), 3))
    assert bytes(w.out) == _hex("00000007  0000 01 00000000 00")
    kp = kp_decode(KP_CLASSES["ApiVersionsResponse"], 3, bytes(w.out)[4:])
    kp.with_header(correlation_id=7)
    assert kp.API_VERSION == 3  # (encode(version=...) would poke a request-only header attribute)
    assert bytes(kp.encode(header=True)) == bytes(w.out)


def test_zero_uuid_is_the_default_on_both_sides() -> None:
    assert MetadataRequestTopic().topic_id == ZERO_UUID
    assert encode(MetadataRequest(topics=[MetadataRequestTopic(name="a")]), 10)[1:17] == bytes(16)
