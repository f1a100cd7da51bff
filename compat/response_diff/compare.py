"""Decoded responses as plain trees, with the masks, and their differences field by field.

`plain(response, peer)` turns a decoded message into dicts (fields in schema order), lists and scalars, applying
the MASKS: what differs between two brokers by nature and tells nothing about behaviour. Masks replace a value by a
stand-in only when it is the value this broker is known to have given (its port, its cluster id, the id it gave a
topic or a member), so a wrong value (another topic's id, another port) still shows as a difference.
`differences(kbroker, kafka)` walks two such trees and lists every field that differs, with its path
(`topics[rd-log].partitions[0].error_code`).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from protocol.errors import ErrorCode
from protocol.primitives import ZERO_UUID
from protocol.records import CorruptRecordError, decode_records, iter_batches

ABSENT = "<absent>"
"""The value of a field or list item that one side's answer does not have."""


class PeerFacts(Protocol):
    """What a mask needs to know of the broker that answered."""

    @property
    def port(self) -> int: ...

    @property
    def cluster_id(self) -> str | None: ...

    @property
    def stand_ins(self) -> Mapping[object, str]:
        """Values this broker generated (topic ids, member ids, ("producer_id", id)) -> a stand-in naming what
        they are."""
        ...


@dataclass(frozen=True)
class Mask:
    """A field compared through a stand-in. `field` is the field's name wherever it appears."""

    field: str
    reason: str
    replace: Callable[[Any, PeerFacts], Any]


def _own(stand_in: str, attribute: str) -> Callable[[Any, PeerFacts], Any]:
    return lambda value, peer: stand_in if value == getattr(peer, attribute) else value


def _unless(sentinel: int, stand_in: str) -> Callable[[Any, PeerFacts], Any]:
    return lambda value, _peer: value if value == sentinel else stand_in


def _given(field: str) -> Callable[[Any, PeerFacts], Any]:
    """A number this broker gave (a producer id): its stand-in, kept under (field, value)."""
    return lambda value, peer: peer.stand_ins.get((field, value), value)


MASKS = (
    Mask("port", "each broker listens on its own free port", _own("<this broker's port>", "port")),
    Mask("cluster_id", "each cluster has its own random id", _own("<this cluster's id>", "cluster_id")),
    Mask(
        "throttle_time_ms",
        "quota throttling depends on load and time; neither broker has quotas configured",
        lambda _value, _peer: "<throttle>",
    ),
    Mask(
        "log_append_time_ms",
        "the broker's clock when it appended; -1 (CreateTime topics) is compared",
        _unless(-1, "<broker time>"),
    ),
    Mask(
        "producer_id",
        "each broker allocates its own producer ids: one it gave is replaced by what it is (`<producer of "
        "rd-idempotent>`), so another producer's id still differs; -1 (none) is compared",
        _given("producer_id"),
    ),
    Mask(
        "documentation",
        "free text for people; whether it is there is compared",
        lambda value, _peer: value if value is None else "<documentation>",
    ),
    Mask(
        "error_message",
        "free text for people (Kafka's exception messages, kbroker's own sentences); whether a message is there "
        "(null, empty or not) is compared, its words are not",
        lambda value, _peer: value if not value else "<a message>",
    ),
)
MASKS_BY_FIELD = {mask.field: mask for mask in MASKS}

STAND_IN_REASON = (
    "ids a broker generates at random (topic ids, group member ids) are replaced by what they identify "
    "(`<id of topic rd-log>`, `<member rd-g-stable/1>`), so the right id of the wrong topic still differs"
)

# The field that names an item of a list, first match wins: lists are compared item by item under these keys, so
# paths read `topics[rd-log]` and a missing item is reported once, not as a shift of every item after it.
LIST_KEYS = (
    "name",
    "topic",
    "topic_id",
    "group_id",
    "resource_name",
    "api_key",
    "partition_index",
    "partition",
    "index",
    "node_id",
    "broker_id",
    "member_id",
    "key",
)


def plain(value: Any, peer: PeerFacts, field: str | None = None) -> Any:
    """`value` (a decoded message or a part of one) as dicts, lists and scalars, masked for `peer`."""
    if field is not None and field in MASKS_BY_FIELD:
        value = MASKS_BY_FIELD[field].replace(value, peer)
    if isinstance(value, str | uuid.UUID) and value in peer.stand_ins:
        return peer.stand_ins[value]
    if field == "error_code" and isinstance(value, int):
        return _error_name(value)
    if field == "records" and value is not None:
        return batches(bytes(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), peer, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [plain(item, peer) for item in value]
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    if value == ZERO_UUID:
        return "<zero uuid>"
    return value


def _error_name(code: int) -> str:
    try:
        return f"{ErrorCode(code).name} ({code})"
    except ValueError:
        return str(code)


def batches(data: bytes) -> list[dict[str, Any]]:
    """Record batches as their header fields and records, so a difference names the field (the bytes of Kafka's
    and kbroker's batches are the same when everything is)."""
    out: list[dict[str, Any]] = []
    consumed = 0
    for batch in iter_batches(data):
        consumed += batch.size
        entry: dict[str, Any] = {
            "base_offset": batch.base_offset,
            "partition_leader_epoch": batch.partition_leader_epoch,
            "magic": batch.magic,
            "crc": batch.crc,
            "attributes": batch.attributes,
            "last_offset_delta": batch.last_offset_delta,
            "base_timestamp": batch.base_timestamp,
            "max_timestamp": batch.max_timestamp,
            "producer_id": batch.producer_id,
            "producer_epoch": batch.producer_epoch,
            "base_sequence": batch.base_sequence,
        }
        try:
            entry["records"] = [dataclasses.asdict(record) for record in decode_records(batch)]
        except CorruptRecordError as error:
            entry["records"] = f"<corrupt: {error}>"
        out.append(entry)
    if consumed < len(data):
        out.append({"partial_tail_bytes": len(data) - consumed})
    return out


@dataclass(frozen=True)
class Difference:
    path: str
    kbroker: Any
    kafka: Any


def differences(kbroker: Any, kafka: Any, path: str = "") -> list[Difference]:
    if isinstance(kbroker, dict) and isinstance(kafka, dict):
        out: list[Difference] = []
        for key in list(kbroker) + [k for k in kafka if k not in kbroker]:
            out += differences(kbroker.get(key, ABSENT), kafka.get(key, ABSENT), _join(path, key))
        return out
    if isinstance(kbroker, list) and isinstance(kafka, list):
        return _list_differences(kbroker, kafka, path)
    if kbroker == kafka and type(kbroker) is type(kafka):
        return []
    return [Difference(path, kbroker, kafka)]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# Where no one field names the items: a config's synonyms share its name and differ by source.
COMPOSITE_KEYS = (("name", "source"),)


def key_field(*lists: list[Any]) -> str | tuple[str, ...] | None:
    """The first field (or fields) whose values name each item uniquely within each of `lists`, if there is one."""
    items = [item for items in lists for item in items]
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for key in (*LIST_KEYS, *COMPOSITE_KEYS):
        fields = key if isinstance(key, tuple) else (key,)
        if all(f in item for item in items for f in fields) and all(
            len({key_of(item, key) for item in items}) == len(items) for items in lists
        ):
            return key
    return None


def key_of(item: dict[str, Any], key: str | tuple[str, ...]) -> str:
    """An item's name under `key`: `rd-log`, or `min.insync.replicas/5` for a composite key."""
    fields = key if isinstance(key, tuple) else (key,)
    return "/".join(str(item[f]) for f in fields)


def _list_differences(kbroker: list[Any], kafka: list[Any], path: str) -> list[Difference]:
    key = key_field(kbroker, kafka)
    if key is None:
        out = []
        for i in range(max(len(kbroker), len(kafka))):
            a = kbroker[i] if i < len(kbroker) else ABSENT
            b = kafka[i] if i < len(kafka) else ABSENT
            out += differences(a, b, f"{path}[{i}]")
        return out
    by_key_a = {key_of(item, key): item for item in kbroker}
    by_key_b = {key_of(item, key): item for item in kafka}
    out = []
    common = [k for k in by_key_a if k in by_key_b]
    if common != [k for k in by_key_b if k in by_key_a]:
        out.append(Difference(f"{path} (order)", common, [k for k in by_key_b if k in by_key_a]))
    for label in list(by_key_a) + [k for k in by_key_b if k not in by_key_a]:
        out += differences(by_key_a.get(label, ABSENT), by_key_b.get(label, ABSENT), f"{path}[{label}]")
    return out
