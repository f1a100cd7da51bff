"""One generic encoder/decoder for every Kafka message, driven by the schemas in `protocol/messages/`.

For each (struct, version) we compile a plan once: the ordered list of fields present in that version with their
reader/writer functions, plus the tagged fields. Encoding and decoding then only walk the plan.

A nested struct can be encoded on its own (`encode_struct`) and the `Encoded` result put where the struct goes: a
caller answering the same large struct many times (Metadata's topics) encodes it once. It carries the plan it was
encoded with, so it is written only into a message of that same struct, version and flexibility.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from protocol.errors import ProtocolError
from protocol.primitives import ZERO_UUID, Reader, Writer
from protocol.schema import Field, MessageSchema, StructSchema

T = TypeVar("T")

ReadFn = Callable[[Reader], Any]
WriteFn = Callable[[Writer, Any], None]


class _Plan:
    __slots__ = ("cls", "fields", "flexible", "tagged", "tagged_by_tag")

    def __init__(
        self,
        cls: type,
        fields: list[tuple[str, ReadFn, WriteFn]],
        tagged: list[tuple[int, str, ReadFn, WriteFn, Any]],
        flexible: bool,
    ) -> None:
        self.cls = cls
        self.fields = fields
        self.tagged = tagged
        self.tagged_by_tag = {tag: (name, read) for tag, name, read, _w, _d in tagged}
        self.flexible = flexible


_plans: dict[tuple[int, int, bool], _Plan] = {}


class Encoded:
    """A struct already encoded (see `encode_struct`); the codec writes its bytes where the struct goes."""

    __slots__ = ("data", "plan")

    def __init__(self, data: bytes, plan: _Plan) -> None:
        self.data = data
        self.plan = plan

    def __len__(self) -> int:
        return len(self.data)


def _primitive(type_: str, nullable: bool, compact: bool) -> tuple[ReadFn, WriteFn]:
    if type_ == "int8":
        return Reader.int8, Writer.int8
    if type_ == "int16":
        return Reader.int16, Writer.int16
    if type_ == "int32":
        return Reader.int32, Writer.int32
    if type_ == "int64":
        return Reader.int64, Writer.int64
    if type_ == "uint16":
        return Reader.uint16, Writer.uint16
    if type_ == "uint32":
        return Reader.uint32, Writer.uint32
    if type_ == "float64":
        return Reader.float64, Writer.float64
    if type_ == "bool":
        return Reader.boolean, Writer.boolean
    if type_ == "uuid":
        return Reader.uuid, _write_uuid
    if type_ == "string":
        if nullable:
            return (lambda r: r.nullable_string(compact)), (lambda w, v: w.string(v, compact))
        return (lambda r: r.string(compact)), (lambda w, v: w.string(v, compact))
    if type_ == "bytes":
        # small opaque blobs (group metadata, assignments): real bytes so they compare and hash
        if nullable:
            return (lambda r: _opt_bytes(r.nullable_bytes(compact))), (lambda w, v: w.bytes(v, compact))
        return (lambda r: bytes(r.bytes(compact))), (lambda w, v: w.bytes(v, compact))
    if type_ == "records":
        # record batches stay a zero-copy view of the request buffer; written ones may be a Splice
        if nullable:
            return (lambda r: r.nullable_bytes(compact)), (lambda w, v: w.records(v, compact))
        return (lambda r: r.bytes(compact)), (lambda w, v: w.records(v, compact))
    raise ValueError(f"unknown primitive type {type_}")


def _opt_bytes(v: memoryview | None) -> bytes | None:
    return None if v is None else bytes(v)


def _write_uuid(w: Writer, v: uuid.UUID | None) -> None:
    w.uuid(ZERO_UUID if v is None else v)


def _field_fns(f: Field, version: int, flexible: bool) -> tuple[ReadFn, WriteFn]:
    compact = flexible and not f.never_flexible
    nullable = version in f.nullable
    if f.type == "struct":
        assert f.struct is not None
        plan = _plan(f.struct, version, flexible)
        elem_read: ReadFn = lambda r: _read_struct(r, plan)  # noqa: E731
        elem_write: WriteFn = lambda w, v: _write_struct(w, v, plan)  # noqa: E731
        if not f.array and nullable:
            # a nullable (non-array) struct is preceded by an int8 presence marker
            inner_read, inner_write = elem_read, elem_write

            def elem_read(r: Reader) -> Any:
                return inner_read(r) if r.int8() >= 0 else None

            def elem_write(w: Writer, v: Any) -> None:
                if v is None:
                    w.int8(-1)
                else:
                    w.int8(1)
                    inner_write(w, v)

    else:
        elem_read, elem_write = _primitive(f.type, nullable and not f.array, compact)
    if not f.array:
        return elem_read, elem_write

    def read_array(r: Reader) -> list[Any] | None:
        n = r.array_length(compact)
        if n < 0:
            if nullable:
                return None
            raise ProtocolError(f"null array for non-nullable field {f.name}")
        return [elem_read(r) for _ in range(n)]

    def write_array(w: Writer, v: list[Any] | None) -> None:
        if v is None:
            w.array_length(-1, compact)
            return
        w.array_length(len(v), compact)
        for item in v:
            elem_write(w, item)

    return read_array, write_array


def _plan(struct: StructSchema, version: int, flexible: bool) -> _Plan:
    key = (id(struct), version, flexible)
    plan = _plans.get(key)
    if plan is not None:
        return plan
    fields: list[tuple[str, ReadFn, WriteFn]] = []
    tagged: list[tuple[int, str, ReadFn, WriteFn, Any]] = []
    for f in struct.fields:
        if version not in f.versions:
            continue
        read, write = _field_fns(f, version, flexible)
        if f.tag is not None and version in f.tagged:
            if flexible:
                default = f.default
                if f.struct is not None and not f.array and default is None and version not in f.nullable:
                    # a tagged struct is omitted when it equals a fresh default instance
                    default = f.struct.cls()
                tagged.append((f.tag, f.name, read, write, default))
            continue
        fields.append((f.name, read, write))
    tagged.sort(key=lambda t: t[0])
    plan = _Plan(struct.cls, fields, tagged, flexible)
    _plans[key] = plan
    return plan


def _read_struct(r: Reader, plan: _Plan) -> Any:
    obj = plan.cls()
    for name, read, _ in plan.fields:
        setattr(obj, name, read(r))
    if plan.flexible:
        count = r.uvarint()
        for _ in range(count):
            tag = r.uvarint()
            size = r.uvarint()
            known = plan.tagged_by_tag.get(tag)
            if known is None:
                r.raw(size)  # unknown tags are skipped, as the protocol requires
                continue
            end = r.pos + size
            if end > r.end:
                raise ProtocolError("tagged field runs past the end of the message")
            sub = Reader(r.buf, r.pos, end)
            setattr(obj, known[0], known[1](sub))
            r.pos = end
    return obj


def _write_struct(w: Writer, obj: Any, plan: _Plan) -> None:
    if type(obj) is Encoded:
        if obj.plan is not plan:
            raise ValueError(f"{plan.cls.__name__} encoded for another version or message")
        w.raw(obj.data)
        return
    for name, _, write in plan.fields:
        write(w, getattr(obj, name))
    if plan.flexible:
        present = []
        for tag, name, _read, write, default in plan.tagged:
            value = getattr(obj, name)
            if value != default:
                sub = Writer()
                write(sub, value)
                present.append((tag, sub.out))
        w.uvarint(len(present))
        for tag, data in present:
            w.uvarint(tag)
            w.uvarint(len(data))
            w.raw(data)


def _schema_of(cls: type) -> MessageSchema:
    from protocol.messages import SCHEMAS

    try:
        return SCHEMAS[cls]
    except KeyError:
        raise TypeError(f"{cls.__name__} is not a Kafka message class") from None


def encode_into(w: Writer, msg: object, version: int) -> None:
    schema = _schema_of(type(msg))
    if version not in schema.valid:
        raise ValueError(f"{schema.name} has no version {version}")
    _write_struct(w, msg, _plan(schema.struct, version, version in schema.flexible))


def encode(msg: object, version: int) -> bytes:
    """The body of `msg` at `version` (no header, no size prefix)."""
    w = Writer()
    encode_into(w, msg, version)
    return w.materialize()


def _struct_schema(struct: StructSchema, cls: type) -> StructSchema | None:
    if struct.cls is cls:
        return struct
    for f in struct.fields:
        if f.struct is not None:
            found = _struct_schema(f.struct, cls)
            if found is not None:
                return found
    return None


def encode_struct(message: type, version: int, obj: object) -> Encoded:
    """`obj`, a struct nested in `message` (e.g. a MetadataResponseTopic of a MetadataResponse), encoded alone at
    the message's `version`, to be placed in such a message instead of `obj`."""
    schema = _schema_of(message)
    if version not in schema.valid:
        raise ValueError(f"{schema.name} has no version {version}")
    struct = _struct_schema(schema.struct, type(obj))
    if struct is None:
        raise TypeError(f"{type(obj).__name__} is not a struct of {schema.name}")
    plan = _plan(struct, version, version in schema.flexible)
    w = Writer()
    _write_struct(w, obj, plan)
    return Encoded(w.materialize(), plan)


def decode(cls: type[T], version: int, buf: bytes | bytearray | memoryview, *, exact: bool = True) -> T:
    """Decode a body of `cls` at `version`. With `exact`, trailing bytes are a ProtocolError."""
    schema = _schema_of(cls)
    if version not in schema.valid:
        raise ProtocolError(f"{schema.name} has no version {version}")
    r = Reader(buf)
    obj: T = _read_struct(r, _plan(schema.struct, version, version in schema.flexible))
    if exact and r.remaining():
        raise ProtocolError(f"{r.remaining()} unexpected trailing bytes after {schema.name} v{version}")
    return obj


def decode_from(cls: type[T], version: int, r: Reader) -> T:
    schema = _schema_of(cls)
    if version not in schema.valid:
        raise ProtocolError(f"{schema.name} has no version {version}")
    obj: T = _read_struct(r, _plan(schema.struct, version, version in schema.flexible))
    return obj
