"""The data that describes a message: which fields exist in which versions, and how each is typed.

The generated modules in `protocol/messages/` are nothing but instances of these types plus the dataclasses they
describe. `protocol.codec` reads them; nothing else interprets the wire format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Kafka's "N+" ranges have no upper bound; int16 versions never exceed this.
NO_MAX = 0x7FFF


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; `Versions.none()` contains nothing."""

    lo: int
    hi: int

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    @staticmethod
    def none() -> Versions:
        return Versions(1, 0)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a struct.

    `type` is a primitive name (int8 … uuid, string, bytes, records) or "struct"; `array` says whether the field is an
    array of that type. `struct` describes the element/struct type when `type == "struct"`.
    """

    name: str
    type: str
    array: bool
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    default: Any
    struct: StructSchema | None = None
    # the request header's client id is never compact, even in flexible versions
    never_flexible: bool = False


@dataclass(frozen=True, slots=True)
class StructSchema:
    cls: type
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class MessageSchema:
    api_key: int
    kind: str  # "request" or "response"
    name: str
    valid: Versions
    flexible: Versions
    struct: StructSchema
