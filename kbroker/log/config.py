"""Per-topic log settings under Kafka's topic config names.

`flush.messages` and `flush.ms` are deliberately not modelled: durability comes from the group committer
(kbroker/log/flusher.py), which fsyncs before acks=all is answered (unless the broker's log.flush.acks.all.enable is
false), never from a message count or a timer.
Names this class does not use are ignored here; the broker checks names against the list of topic configs it knows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kbroker.common import ConfigError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
CLEANUP_DELETE = "delete"
CLEANUP_COMPACT = "compact"


@dataclass(frozen=True, slots=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 3600 * 1000
    retention_ms: int = 7 * 24 * 3600 * 1000  # -1: keep forever
    retention_bytes: int = -1  # -1: no size limit
    index_interval_bytes: int = 4096
    message_timestamp_type: str = CREATE_TIME
    cleanup_policy: frozenset[str] = frozenset({CLEANUP_DELETE})
    max_message_bytes: int = 1048588
    min_cleanable_dirty_ratio: float = 0.5
    delete_retention_ms: int = 24 * 3600 * 1000
    min_compaction_lag_ms: int = 0
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    @property
    def delete_enabled(self) -> bool:
        return CLEANUP_DELETE in self.cleanup_policy

    @property
    def compact_enabled(self) -> bool:
        return CLEANUP_COMPACT in self.cleanup_policy

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, str], defaults: LogConfig | Mapping[str, str] | None = None
    ) -> LogConfig:
        """`properties` override `defaults` (a LogConfig, or topic config names to strings, e.g. the broker's
        log.* settings under their topic names). Raises ConfigError naming the config and the value at fault.
        """
        if defaults is None:
            base = cls()
        elif isinstance(defaults, LogConfig):
            base = defaults
        else:
            base = cls.from_properties(defaults)
        changes: dict[str, Any] = {}
        for name, value in properties.items():
            parser = _PARSERS.get(name)
            if parser is not None:
                field_name, parse = parser
                changes[field_name] = parse(name, value.strip())
        return dataclasses.replace(base, **changes)

    def to_properties(self) -> dict[str, str]:
        """Every config this class models, as Kafka spells names and values (for DescribeConfigs)."""
        out: dict[str, str] = {}
        for name, (field_name, _) in _PARSERS.items():
            value = getattr(self, field_name)
            if isinstance(value, frozenset):
                out[name] = ",".join(sorted(value))
            elif isinstance(value, bool):
                out[name] = "true" if value else "false"
            else:
                out[name] = str(value)
        return out


def _integer(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Not a number of type LONG"
        ) from None
    if not low <= number <= high:
        raise ConfigError(f"Invalid value {value} for configuration {name}: must be in [{low}, {high}]")
    return number


def _segment_bytes(name: str, value: str) -> int:
    # Kafka's own lower bound: a segment must hold at least a minimal record.
    return _integer(name, value, 14, INT32_MAX)


def _positive_long(name: str, value: str) -> int:
    return _integer(name, value, 1, INT64_MAX)


def _retention_ms(name: str, value: str) -> int:
    # -1 means "keep forever"
    return _integer(name, value, -1, INT64_MAX)


def _any_long(name: str, value: str) -> int:
    # retention.bytes: Kafka accepts any long and treats every negative value as "no limit"
    return _integer(name, value, -(2**63), INT64_MAX)


def _non_negative_int(name: str, value: str) -> int:
    return _integer(name, value, 0, INT32_MAX)


def _non_negative_long(name: str, value: str) -> int:
    return _integer(name, value, 0, INT64_MAX)


def _positive_int(name: str, value: str) -> int:
    return _integer(name, value, 1, INT32_MAX)


def _timestamp_type(name: str, value: str) -> str:
    if value not in (CREATE_TIME, LOG_APPEND_TIME):
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: String must be one of: CreateTime, LogAppendTime"
        )
    return value


def _cleanup_policy(name: str, value: str) -> frozenset[str]:
    policies = frozenset(p.strip() for p in value.split(",") if p.strip())
    if not policies or not policies <= {CLEANUP_DELETE, CLEANUP_COMPACT}:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: must be delete, compact or compact,delete"
        )
    return policies


def _ratio(name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Not a number of type DOUBLE"
        ) from None
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"Invalid value {value} for configuration {name}: must be in [0.0, 1.0]")
    return number


def _boolean(name: str, value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
        )
    return value.lower() == "true"


_PARSERS: dict[str, tuple[str, Callable[[str, str], object]]] = {
    "segment.bytes": ("segment_bytes", _segment_bytes),
    "segment.ms": ("segment_ms", _positive_long),
    "retention.ms": ("retention_ms", _retention_ms),
    "retention.bytes": ("retention_bytes", _any_long),
    "index.interval.bytes": ("index_interval_bytes", _non_negative_int),
    "message.timestamp.type": ("message_timestamp_type", _timestamp_type),
    "cleanup.policy": ("cleanup_policy", _cleanup_policy),
    "max.message.bytes": ("max_message_bytes", _non_negative_int),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", _ratio),
    "delete.retention.ms": ("delete_retention_ms", _non_negative_long),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", _non_negative_long),
    "min.insync.replicas": ("min_insync_replicas", _positive_int),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", _boolean),
}
