"""The `__consumer_offsets` records, byte for byte as Kafka writes them, and replaying them into state.

Every record key and value starts with an int16 version, then the fields of the schema at that version (Kafka's
`group-coordinator/src/main/resources/common/message/*.json`). The key version tells the record type:

    key v0, v1  OffsetCommitKey     group string, topic string, partition int32
    key v2      GroupMetadataKey    group string

Values (what Kafka 3.x writes in brackets; we read every version):

    OffsetCommitValue   v0-v4 [v3; v1 when the commit carried an explicit retention]
        offset int64, leaderEpoch int32 (v3+), metadata string, commitTimestamp int64, expireTimestamp int64 (v1 only)
    GroupMetadataValue  v0-v4 [v3]
        protocolType string, generation int32, protocol string?, leader string?, currentStateTimestamp int64 (v2+),
        members [memberId string, groupInstanceId string? (v3+), clientId string, clientHost string,
                 rebalanceTimeout int32 (v1+), sessionTimeout int32, subscription bytes, assignment bytes]

Version 4 of both values is "flexible": compact strings, arrays and bytes (unsigned varint length + 1) and a tagged
field section after each struct. A record with a null value (a tombstone) deletes its key.

Newer Kafka versions add record types for KIP-848 groups (key versions 3+); `load` skips them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from kbroker.common import TopicPartition

OFFSET_COMMIT_KEY_VERSION = 1  # what Kafka writes; version 0 has the same fields
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3


class RecordFormatError(ValueError):
    """The bytes are not a record of a known version."""


# ---- Java's partitioning of groups ----------------------------------------------------------------------------------


def java_string_hashcode(text: str) -> int:
    """String.hashCode(): s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in wrapping 32-bit arithmetic."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: like Math.abs, except that Integer.MIN_VALUE (which has no positive int32) gives 0."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition of a group, exactly as Kafka computes it."""
    return kafka_abs(java_string_hashcode(group_id)) % num_partitions


# ---- record data ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A record type we do not use (KIP-848 groups, share groups...)."""

    version: int


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1  # -1: none; stored only in version 1


@dataclass(frozen=True, slots=True)
class MemberMetadataValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int  # -1 when read from a v0 record
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: tuple[MemberMetadataValue, ...] = ()


# ---- a small writer and reader of Kafka's primitive types -----------------------------------------------------------


class _Writer:
    def __init__(self, flexible: bool = False) -> None:
        self.buf = bytearray()
        self.flexible = flexible

    def int16(self, v: int) -> None:
        self.buf += struct.pack(">h", v)

    def int32(self, v: int) -> None:
        self.buf += struct.pack(">i", v)

    def int64(self, v: int) -> None:
        self.buf += struct.pack(">q", v)

    def uvarint(self, v: int) -> None:
        while v >= 0x80:
            self.buf.append((v & 0x7F) | 0x80)
            v >>= 7
        self.buf.append(v)

    def _length(self, n: int | None) -> None:
        # Flexible versions store length + 1 (0 is null) as an unsigned varint.
        if self.flexible:
            self.uvarint(0 if n is None else n + 1)
        else:
            self.int16(-1 if n is None else n)

    def string(self, v: str | None) -> None:
        if v is None:
            self._length(None)
            return
        data = v.encode("utf-8")
        self._length(len(data))
        self.buf += data

    def bytes_(self, v: bytes) -> None:
        if self.flexible:
            self.uvarint(len(v) + 1)
        else:
            self.int32(len(v))
        self.buf += v

    def array_length(self, n: int) -> None:
        if self.flexible:
            self.uvarint(n + 1)
        else:
            self.int32(n)

    def tagged_fields(self) -> None:
        if self.flexible:
            self.uvarint(0)  # we write no tagged fields


class _Reader:
    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data = data
        self.pos = 0
        self.flexible = flexible

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise RecordFormatError(f"record truncated at byte {self.pos} (wanted {n} more)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int16(self) -> int:
        value: int = struct.unpack(">h", self._take(2))[0]
        return value

    def int32(self) -> int:
        value: int = struct.unpack(">i", self._take(4))[0]
        return value

    def int64(self) -> int:
        value: int = struct.unpack(">q", self._take(8))[0]
        return value

    def uvarint(self) -> int:
        value = 0
        for shift in range(0, 35, 7):
            b = self._take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
        raise RecordFormatError("varint too long")

    def _length(self) -> int | None:
        if self.flexible:
            n = self.uvarint()
            return None if n == 0 else n - 1
        n = self.int16()
        return None if n < 0 else n

    def nullable_string(self) -> str | None:
        n = self._length()
        if n is None:
            return None
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError as e:
            raise RecordFormatError(f"string is not UTF-8: {e}") from None

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise RecordFormatError("null where a string is required")
        return value

    def bytes_(self) -> bytes:
        n = self.uvarint() - 1 if self.flexible else self.int32()
        if n < 0:
            # Kafka never writes null subscription or assignment bytes; read it as empty.
            return b""
        return self._take(n)

    def array_length(self) -> int:
        if self.flexible:
            return self.uvarint() - 1
        return self.int32()

    def tagged_fields(self) -> None:
        if not self.flexible:
            return
        for _ in range(self.uvarint()):
            self.uvarint()  # tag: none of these records defines one yet
            self._take(self.uvarint())

    def done(self) -> None:
        if self.pos != len(self.data):
            raise RecordFormatError(f"{len(self.data) - self.pos} bytes left after the record")


# ---- keys -----------------------------------------------------------------------------------------------------------


def encode_offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    w = _Writer()
    w.int16(OFFSET_COMMIT_KEY_VERSION)
    w.string(group)
    w.string(topic)
    w.int32(partition)
    return bytes(w.buf)


def encode_group_metadata_key(group: str) -> bytes:
    w = _Writer()
    w.int16(GROUP_METADATA_KEY_VERSION)
    w.string(group)
    return bytes(w.buf)


def decode_key(data: bytes) -> OffsetCommitKey | GroupMetadataKey | UnknownKey:
    r = _Reader(bytes(data))
    version = r.int16()
    if version in (0, 1):
        key: OffsetCommitKey | GroupMetadataKey = OffsetCommitKey(r.string(), r.string(), r.int32())
    elif version == 2:
        key = GroupMetadataKey(r.string())
    else:
        return UnknownKey(version)
    r.done()
    return key


# ---- values ---------------------------------------------------------------------------------------------------------


def encode_offset_commit_value(value: OffsetCommitValue, version: int | None = None) -> bytes:
    """Kafka's choice of version unless one is given: 1 if the offset carries an expire timestamp, else 3."""
    if version is None:
        version = (
            OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY
            if value.expire_timestamp >= 0
            else OFFSET_COMMIT_VALUE_VERSION
        )
    if not 0 <= version <= 4:
        raise ValueError(f"OffsetCommitValue has no version {version}")
    w = _Writer(flexible=version >= 4)
    w.int16(version)
    w.int64(value.offset)
    if version >= 3:
        w.int32(value.leader_epoch)
    w.string(value.metadata)
    w.int64(value.commit_timestamp)
    if version == 1:
        w.int64(value.expire_timestamp)
    w.tagged_fields()
    return bytes(w.buf)


def decode_offset_commit_value(data: bytes) -> OffsetCommitValue:
    version = _Reader(bytes(data)).int16()
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown OffsetCommitValue version {version}")
    r = _Reader(bytes(data), flexible=version >= 4)
    r.pos = 2
    offset = r.int64()
    leader_epoch = r.int32() if version >= 3 else -1
    metadata = r.string()
    commit_timestamp = r.int64()
    expire_timestamp = r.int64() if version == 1 else -1
    r.tagged_fields()
    r.done()
    return OffsetCommitValue(offset, leader_epoch, metadata, commit_timestamp, expire_timestamp)


def encode_group_metadata_value(
    value: GroupMetadataValue, version: int = GROUP_METADATA_VALUE_VERSION
) -> bytes:
    if not 0 <= version <= 4:
        raise ValueError(f"GroupMetadataValue has no version {version}")
    w = _Writer(flexible=version >= 4)
    w.int16(version)
    w.string(value.protocol_type)
    w.int32(value.generation)
    w.string(value.protocol)
    w.string(value.leader)
    if version >= 2:
        w.int64(value.current_state_timestamp)
    w.array_length(len(value.members))
    for m in value.members:
        w.string(m.member_id)
        if version >= 3:
            w.string(m.group_instance_id)
        w.string(m.client_id)
        w.string(m.client_host)
        if version >= 1:
            w.int32(m.rebalance_timeout)
        w.int32(m.session_timeout)
        w.bytes_(m.subscription)
        w.bytes_(m.assignment)
        w.tagged_fields()
    w.tagged_fields()
    return bytes(w.buf)


def decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    version = _Reader(bytes(data)).int16()
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown GroupMetadataValue version {version}")
    r = _Reader(bytes(data), flexible=version >= 4)
    r.pos = 2
    protocol_type = r.string()
    generation = r.int32()
    protocol = r.nullable_string()
    leader = r.nullable_string()
    current_state_timestamp = r.int64() if version >= 2 else -1
    count = r.array_length()
    if count < 0:
        raise RecordFormatError("null members array")
    members: list[MemberMetadataValue] = []
    for _ in range(count):
        member_id = r.string()
        group_instance_id = r.nullable_string() if version >= 3 else None
        client_id = r.string()
        client_host = r.string()
        rebalance_timeout = r.int32() if version >= 1 else -1
        session_timeout = r.int32()
        subscription = r.bytes_()
        assignment = r.bytes_()
        r.tagged_fields()
        members.append(
            MemberMetadataValue(
                member_id,
                group_instance_id,
                client_id,
                client_host,
                rebalance_timeout,
                session_timeout,
                subscription,
                assignment,
            )
        )
    r.tagged_fields()
    r.done()
    return GroupMetadataValue(
        protocol_type, generation, protocol, leader, current_state_timestamp, tuple(members)
    )


# ---- records and replay ---------------------------------------------------------------------------------------------

# A record of `__consumer_offsets` as the log stores it: key bytes and value bytes, None for a tombstone.
Record = tuple[bytes, bytes | None]


def offset_commit_record(group: str, topic: str, partition: int, value: OffsetCommitValue | None) -> Record:
    key = encode_offset_commit_key(group, topic, partition)
    return key, None if value is None else encode_offset_commit_value(value)


def group_metadata_record(group: str, value: GroupMetadataValue | None) -> Record:
    key = encode_group_metadata_key(group)
    return key, None if value is None else encode_group_metadata_value(value)


@dataclass(frozen=True, slots=True)
class TxnRecord:
    """A record of a transactional batch (a TxnOffsetCommit): it counts only once its producer's COMMIT marker
    follows."""

    key: bytes
    value: bytes | None
    producer_id: int


@dataclass(frozen=True, slots=True)
class TxnMarker:
    """A COMMIT or ABORT marker of a producer's transaction."""

    producer_id: int
    commit: bool


LogEntry = Record | TxnRecord | TxnMarker
"""What a `__consumer_offsets` partition's log holds, as its reader gives it (kbroker/coordinator/runtime.py)."""
RawRecord = tuple[bytes | memoryview | None, bytes | memoryview | None]


@dataclass(slots=True)
class PendingOffset:
    """An offset of an open transaction found by `load`: (group, partition, value) at log position `position`."""

    group: str
    tp: TopicPartition
    value: OffsetCommitValue | None
    position: int


@dataclass(slots=True)
class LoadedState:
    """What the records of some `__consumer_offsets` partitions leave behind once replayed."""

    groups: dict[str, GroupMetadataValue]
    offsets: dict[str, dict[TopicPartition, OffsetCommitValue]]
    positions: dict[tuple[str, TopicPartition], int] = field(default_factory=dict)
    """The log position (entry index) of the record each offset comes from: which of two commits is newer."""
    pending: dict[int, list[PendingOffset]] = field(default_factory=dict)
    """Offsets of transactions with no marker yet, by producer id."""
    entries: int = 0


def load(entries: Iterable[RawRecord | TxnRecord | TxnMarker]) -> LoadedState:
    """Replay records in log order: the last write of a key wins and a tombstone deletes it.

    Offsets committed in a transaction count once their producer's COMMIT marker comes, unless a commit later in the
    log (outside the transaction) already replaced them, as Kafka decides by log offsets; an ABORT drops them, and
    those of a transaction with no marker yet are left in `pending`. Records without a key and record types we do
    not know are skipped, as Kafka skips them.
    """
    state = LoadedState({}, {})
    position = -1
    for position, entry in enumerate(entries):
        if isinstance(entry, TxnMarker):
            pending = state.pending.pop(entry.producer_id, [])
            if entry.commit:
                for offset in pending:
                    _apply_offset(state, offset.group, offset.tp, offset.value, offset.position)
            continue
        if isinstance(entry, TxnRecord):
            key = decode_key(entry.key)
            if isinstance(key, OffsetCommitKey):
                value = None if entry.value is None else decode_offset_commit_value(bytes(entry.value))
                tp = TopicPartition(key.topic, key.partition)
                state.pending.setdefault(entry.producer_id, []).append(
                    PendingOffset(key.group, tp, value, position)
                )
            continue
        raw_key, raw_value = entry
        if raw_key is None:
            continue
        decoded = decode_key(bytes(raw_key))
        raw = None if raw_value is None else bytes(raw_value)
        if isinstance(decoded, OffsetCommitKey):
            tp = TopicPartition(decoded.topic, decoded.partition)
            _apply_offset(
                state, decoded.group, tp, None if raw is None else decode_offset_commit_value(raw), position
            )
        elif isinstance(decoded, GroupMetadataKey):
            if raw is None:
                state.groups.pop(decoded.group, None)
            else:
                state.groups[decoded.group] = decode_group_metadata_value(raw)
    state.entries = position + 1
    return state


def _apply_offset(
    state: LoadedState, group: str, tp: TopicPartition, value: OffsetCommitValue | None, position: int
) -> None:
    """An offset commit (or its tombstone) at `position`, unless the offset in place comes from a later record."""
    if state.positions.get((group, tp), -1) > position:
        return
    state.positions[(group, tp)] = position
    if value is None:
        group_offsets = state.offsets.get(group)
        if group_offsets is not None:
            group_offsets.pop(tp, None)
            if not group_offsets:
                del state.offsets[group]
    else:
        state.offsets.setdefault(group, {})[tp] = value
