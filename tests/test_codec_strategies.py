"""Hypothesis strategies built from the generated schemas, shared by the codec tests.

`message_strategy(cls, version)` draws a message of `cls` holding a value for every field present at `version`
(ints within their wire width, nullable fields sometimes None, tagged fields sometimes set, arrays of a few elements);
fields absent at that version keep their defaults. `assert_same_fields` compares two messages field by field over what
the version carries and names the first differing path.

The few tests at the bottom check the strategies themselves.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.messages import SCHEMAS
from protocol.primitives import ZERO_UUID
from protocol.schema import Field, MessageSchema, StructSchema

INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}

MAX_ARRAY = 3

# every (message class, version) the generated code knows, requests and responses, sorted for stable test ids
ALL_MESSAGE_VERSIONS: list[tuple[type, int]] = sorted(
    ((cls, v) for cls, schema in SCHEMAS.items() for v in range(schema.valid.lo, schema.valid.hi + 1)),
    key=lambda cv: (cv[0].__name__, cv[1]),
)


def message_id(cv: tuple[type, int]) -> str:
    return f"{cv[0].__name__}-v{cv[1]}"


def is_present(f: Field, version: int, flexible: bool) -> bool:
    """Whether `f` is on the wire at `version` (a field tagged at that version exists only when flexible)."""
    if version not in f.versions:
        return False
    return not (is_tagged(f, version) and not flexible)


def is_tagged(f: Field, version: int) -> bool:
    return f.tag is not None and version in f.tagged


def _primitive(type_: str, nullable: bool) -> st.SearchStrategy[Any]:
    s: st.SearchStrategy[Any]
    if type_ in INT_RANGES:
        lo, hi = INT_RANGES[type_]
        # edges are where width bugs live: make them likely
        s = st.one_of(st.sampled_from([lo, hi, 0, -1 if lo < 0 else 1]), st.integers(lo, hi))
    elif type_ == "float64":
        s = st.floats(allow_nan=False, width=64)
    elif type_ == "bool":
        s = st.booleans()
    elif type_ == "uuid":
        s = st.one_of(st.just(ZERO_UUID), st.uuids())
    elif type_ == "string":
        s = st.text(max_size=8)
    elif type_ in ("bytes", "records"):
        s = st.binary(max_size=12)
    else:
        raise AssertionError(f"no strategy for {type_}")
    return st.one_of(st.none(), s) if nullable else s


_struct_cache: dict[tuple[int, int, bool], st.SearchStrategy[Any]] = {}


def struct_strategy(struct: StructSchema, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    key = (id(struct), version, flexible)
    cached = _struct_cache.get(key)
    if cached is not None:
        return cached
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for f in struct.fields:
        if not is_present(f, version, flexible):
            continue
        (optional if is_tagged(f, version) else required)[f.name] = field_strategy(f, version, flexible)
    cls = struct.cls
    s = st.fixed_dictionaries(required, optional=optional).map(lambda kw: cls(**kw))
    _struct_cache[key] = s
    return s


def field_strategy(f: Field, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    nullable = version in f.nullable
    elem: st.SearchStrategy[Any]
    if f.type == "struct":
        assert f.struct is not None
        elem = struct_strategy(f.struct, version, flexible)
        if nullable and not f.array:
            elem = st.one_of(st.none(), elem)
    else:
        elem = _primitive(f.type, nullable and not f.array)
    if not f.array:
        return elem
    arr = st.lists(elem, max_size=MAX_ARRAY)
    return st.one_of(st.none(), arr) if nullable else arr


def message_strategy(cls: type, version: int) -> st.SearchStrategy[Any]:
    schema = SCHEMAS[cls]
    return struct_strategy(schema.struct, version, version in schema.flexible)


def _normal(value: Any) -> Any:
    # records decode as zero-copy memoryviews; compare their contents
    return bytes(value) if isinstance(value, memoryview) else value


def assert_same_fields(
    struct: StructSchema, version: int, flexible: bool, a: Any, b: Any, path: str = ""
) -> None:
    """`a` and `b` agree on every field present at `version`; the assertion names the first differing path."""
    for f in struct.fields:
        if not is_present(f, version, flexible):
            continue
        where = f"{path}.{f.name}" if path else f.name
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if f.type == "struct" and va is not None and vb is not None:
            assert f.struct is not None
            if f.array:
                assert len(va) == len(vb), f"{where}: {len(va)} elements != {len(vb)}"
                for i, (ea, eb) in enumerate(zip(va, vb, strict=True)):
                    assert_same_fields(f.struct, version, flexible, ea, eb, f"{where}[{i}]")
            else:
                assert_same_fields(f.struct, version, flexible, va, vb, where)
        elif f.array and va is not None and vb is not None:
            assert [_normal(x) for x in va] == [_normal(x) for x in vb], where
        else:
            assert _normal(va) == _normal(vb), f"{where}: {va!r} != {vb!r}"
            assert (va is None) == (vb is None), f"{where}: null-ness differs"


def assert_same_message(schema: MessageSchema, version: int, a: Any, b: Any) -> None:
    assert_same_fields(schema.struct, version, version in schema.flexible, a, b)


# --- the strategies themselves -------------------------------------------------------------------------------------


def _check_widths(struct: StructSchema, version: int, flexible: bool, obj: Any) -> None:
    assert isinstance(obj, struct.cls)
    for f in struct.fields:
        if not is_present(f, version, flexible):
            continue
        value = getattr(obj, f.name)
        values = value if f.array and value is not None else [value]
        for v in values:
            if v is None:
                # only nullable fields, or a tagged field left at a null default
                assert version in f.nullable or is_tagged(f, version), f.name
            elif f.type in INT_RANGES:
                lo, hi = INT_RANGES[f.type]
                assert lo <= v <= hi, f.name
            elif f.type == "uuid":
                assert isinstance(v, uuid.UUID)
            elif f.type == "struct":
                assert f.struct is not None
                _check_widths(f.struct, version, flexible, v)


def test_every_message_and_version_is_covered() -> None:
    names = {cls.__name__ for cls, _ in ALL_MESSAGE_VERSIONS}
    assert len(names) == len(SCHEMAS)
    assert sum(s.valid.hi - s.valid.lo + 1 for s in SCHEMAS.values()) == len(ALL_MESSAGE_VERSIONS)
    assert {"ProduceRequest", "FetchResponse", "ApiVersionsResponse"} <= names


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_drawn_values_respect_the_schema(data: st.DataObject) -> None:
    cls, version = data.draw(st.sampled_from(ALL_MESSAGE_VERSIONS))
    schema = SCHEMAS[cls]
    msg = data.draw(message_strategy(cls, version))
    _check_widths(schema.struct, version, version in schema.flexible, msg)
