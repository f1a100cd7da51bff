"""Broker configuration under Kafka's own names.

Every setting a user can pass with `--override key=value` or a properties file (`--config FILE`) is declared in
`BROKER_CONFIGS` with its type, default and a one-line doc; `kbroker serve --help` prints this table. Unknown keys are
rejected with a clear message rather than silently ignored, so a typo never goes unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration value is missing, unknown or out of range."""


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    type: str  # int, long, double, boolean, string, list
    default: str | None
    doc: str
    # the topic-level config this broker setting supplies the default of (Kafka's "synonym")
    topic_config: str | None = None


_DEFS = [
    ConfigDef("node.id", "int", "0", "This broker's id in the cluster (broker.id is a synonym)."),
    ConfigDef("broker.id", "int", None, "Synonym of node.id, as in ZooKeeper-mode Kafka."),
    ConfigDef(
        "log.dirs", "string", None, "Data directory (--data-dir); log.dir is a synonym. One directory only."
    ),
    ConfigDef("log.dir", "string", "./kbroker-data", "Data directory when log.dirs is unset."),
    ConfigDef(
        "listeners", "list", "PLAINTEXT://127.0.0.1:9092", "Where to listen, as PLAINTEXT://HOST:PORT."
    ),
    ConfigDef(
        "advertised.listeners",
        "list",
        None,
        "What Metadata tells clients to connect to (default: listeners).",
    ),
    ConfigDef("num.partitions", "int", "1", "Partitions of an auto-created or unspecified-count topic."),
    ConfigDef("default.replication.factor", "int", "1", "Replicas of a topic created without one."),
    ConfigDef(
        "auto.create.topics.enable", "boolean", "true", "Create a topic when a client's Metadata asks to."
    ),
    ConfigDef("delete.topic.enable", "boolean", "true", "Allow DeleteTopics."),
    ConfigDef("message.max.bytes", "int", "1048588", "Largest record batch accepted.", "max.message.bytes"),
    ConfigDef(
        "socket.request.max.bytes",
        "int",
        "104857600",
        "Largest request frame; bigger frames close the connection.",
    ),
    ConfigDef("log.segment.bytes", "int", "1073741824", "Segment size before a roll.", "segment.bytes"),
    ConfigDef(
        "log.roll.ms", "long", None, "Segment age before a roll (default log.roll.hours).", "segment.ms"
    ),
    ConfigDef("log.roll.hours", "int", "168", "Segment age before a roll, in hours."),
    ConfigDef(
        "log.retention.ms", "long", None, "Delete segments older than this; -1 keeps forever.", "retention.ms"
    ),
    ConfigDef("log.retention.minutes", "int", None, "Retention in minutes, if log.retention.ms is unset."),
    ConfigDef("log.retention.hours", "int", "168", "Retention in hours, if neither of the above is set."),
    ConfigDef(
        "log.retention.bytes",
        "long",
        "-1",
        "Delete old segments beyond this size per partition.",
        "retention.bytes",
    ),
    ConfigDef("log.retention.check.interval.ms", "long", "300000", "How often retention runs."),
    ConfigDef(
        "log.index.interval.bytes",
        "int",
        "4096",
        "Bytes between offset index entries.",
        "index.interval.bytes",
    ),
    ConfigDef(
        "log.message.timestamp.type",
        "string",
        "CreateTime",
        "CreateTime or LogAppendTime.",
        "message.timestamp.type",
    ),
    ConfigDef("log.cleanup.policy", "list", "delete", "delete, compact, or both.", "cleanup.policy"),
    ConfigDef("log.cleaner.enable", "boolean", "true", "Run the log cleaner (compaction)."),
    ConfigDef(
        "log.cleaner.backoff.ms", "long", "15000", "Sleep of the cleaner when there is nothing to clean."
    ),
    ConfigDef(
        "log.cleaner.delete.retention.ms",
        "long",
        "86400000",
        "How long tombstones are kept.",
        "delete.retention.ms",
    ),
    ConfigDef(
        "log.cleaner.min.cleanable.ratio",
        "double",
        "0.5",
        "Dirty ratio above which a log is cleaned.",
        "min.cleanable.dirty.ratio",
    ),
    ConfigDef(
        "log.cleaner.min.compaction.lag.ms",
        "long",
        "0",
        "Records younger than this are not compacted.",
        "min.compaction.lag.ms",
    ),
    ConfigDef(
        "min.insync.replicas", "int", "1", "In-sync replicas needed for acks=all.", "min.insync.replicas"
    ),
    ConfigDef(
        "unclean.leader.election.enable",
        "boolean",
        "false",
        "Allow an out-of-sync replica to become leader.",
        "unclean.leader.election.enable",
    ),
    ConfigDef(
        "replica.lag.time.max.ms", "long", "30000", "A follower not caught up for this long leaves the ISR."
    ),
    ConfigDef("replica.fetch.wait.max.ms", "int", "500", "Follower fetch long-poll time."),
    ConfigDef("replica.fetch.max.bytes", "int", "1048576", "Follower fetch size per partition."),
    ConfigDef("offsets.topic.num.partitions", "int", "50", "Partitions of __consumer_offsets."),
    ConfigDef(
        "offsets.topic.replication.factor",
        "int",
        "3",
        "Replicas of __consumer_offsets (capped by live brokers).",
    ),
    ConfigDef("offsets.topic.segment.bytes", "int", "104857600", "Segment size of __consumer_offsets."),
    ConfigDef(
        "offsets.retention.minutes", "int", "10080", "Committed offsets of an empty group expire after this."
    ),
    ConfigDef(
        "offsets.retention.check.interval.ms", "long", "600000", "How often expired offsets are removed."
    ),
    ConfigDef("offset.metadata.max.bytes", "int", "4096", "Largest metadata string of a committed offset."),
    ConfigDef(
        "group.initial.rebalance.delay.ms", "int", "3000", "Wait for more members before the first rebalance."
    ),
    ConfigDef(
        "group.min.session.timeout.ms", "int", "6000", "Smallest session timeout a member may ask for."
    ),
    ConfigDef(
        "group.max.session.timeout.ms", "int", "1800000", "Largest session timeout a member may ask for."
    ),
    ConfigDef("group.max.size", "int", "2147483647", "Most members in one group."),
    ConfigDef(
        "metadata.etcd.endpoints", "list", None, "etcd endpoints (--metadata etcd://…); unset: single node."
    ),
    ConfigDef("broker.session.timeout.ms", "int", "9000", "Lease of a broker's registration in etcd."),
    ConfigDef("cluster.name", "string", "kbroker", "Prefix of this cluster's keys in etcd."),
]

BROKER_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _DEFS}

# Kafka's topic-level configs that we honour, with the broker setting that gives each its default.
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {d.topic_config: d.name for d in _DEFS if d.topic_config}


def _check(defn: ConfigDef, value: str) -> None:
    try:
        if defn.type in ("int", "long"):
            int(value)
        elif defn.type == "double":
            float(value)
        elif defn.type == "boolean" and value.lower() not in ("true", "false"):
            raise ValueError(value)
    except ValueError:
        raise ConfigError(f"invalid value {value!r} for {defn.name} (expected {defn.type})") from None


def parse_properties(text: str) -> dict[str, str]:
    """A Java-style properties file: key=value or key: value lines, # and ! comments."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            raise ConfigError(f"not a key=value line: {raw!r}")
        out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out


class BrokerConfig:
    """Validated broker settings; read them with the typed accessors, by Kafka name."""

    def __init__(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            defn = BROKER_CONFIGS.get(key)
            if defn is None:
                raise ConfigError(f"unknown broker config {key!r} (kbroker serve --help lists them)")
            _check(defn, value)
        self.explicit = dict(values)

    @classmethod
    def from_file(cls, path: Path, overrides: Mapping[str, str] = {}) -> BrokerConfig:
        values = parse_properties(path.read_text())
        values.update(overrides)
        return cls(values)

    def raw(self, name: str) -> str | None:
        if name in self.explicit:
            return self.explicit[name]
        return BROKER_CONFIGS[name].default

    def get_str(self, name: str) -> str:
        value = self.raw(name)
        if value is None:
            raise ConfigError(f"{name} is not set")
        return value

    def get_int(self, name: str) -> int:
        return int(self.get_str(name))

    def get_float(self, name: str) -> float:
        return float(self.get_str(name))

    def get_bool(self, name: str) -> bool:
        return self.get_str(name).lower() == "true"

    def get_list(self, name: str) -> list[str]:
        value = self.raw(name)
        return [] if not value else [v.strip() for v in value.split(",") if v.strip()]

    # Settings Kafka derives from several keys --------------------------------------------------------------

    @property
    def node_id(self) -> int:
        broker_id = self.raw("broker.id")
        return (
            int(broker_id)
            if broker_id is not None and "node.id" not in self.explicit
            else self.get_int("node.id")
        )

    @property
    def data_dir(self) -> Path:
        dirs = self.get_list("log.dirs")
        if len(dirs) > 1:
            raise ConfigError("kbroker uses one data directory; log.dirs lists several")
        return Path(dirs[0] if dirs else self.get_str("log.dir"))

    @property
    def retention_ms(self) -> int:
        for name, factor in (
            ("log.retention.ms", 1),
            ("log.retention.minutes", 60_000),
            ("log.retention.hours", 3_600_000),
        ):
            value = self.raw(name)
            if value is not None:
                n = int(value)
                return -1 if n < 0 else n * factor
        raise AssertionError("log.retention.hours has a default")

    @property
    def segment_ms(self) -> int:
        roll_ms = self.raw("log.roll.ms")
        return int(roll_ms) if roll_ms is not None else self.get_int("log.roll.hours") * 3_600_000

    def topic_defaults(self) -> dict[str, str]:
        """The default value of every topic config, as the broker's settings give them."""
        out = {
            topic: self.get_str(broker) for topic, broker in TOPIC_CONFIG_SYNONYMS.items() if self.raw(broker)
        }
        out["retention.ms"] = str(self.retention_ms)
        out["segment.ms"] = str(self.segment_ms)
        return out

    def describe(self) -> list[tuple[str, str | None, bool]]:
        """(name, value, is_default) of every broker config, for DescribeConfigs."""
        return [(name, self.raw(name), name not in self.explicit) for name in sorted(BROKER_CONFIGS)]


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    host: str
    port: int


def parse_listener(text: str) -> Listener:
    """PLAINTEXT://HOST:PORT (HOST may be empty for all interfaces, [v6] bracketed)."""
    if "://" not in text:
        raise ConfigError(f"listener {text!r} is not NAME://HOST:PORT")
    name, rest = text.split("://", 1)
    if name.upper() != "PLAINTEXT":
        raise ConfigError(f"listener {text!r}: only PLAINTEXT is supported (no TLS or SASL yet)")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"listener {text!r} has no port")
    host = host.strip("[]")
    return Listener(name.upper(), host, int(port))


def as_config_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# Topic configs Kafka knows that kbroker accepts and stores but does not act on (documented in docs/kafka-differences.md).
IGNORED_TOPIC_CONFIGS = frozenset(
    {
        "compression.type",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.difference.max.ms",
        "preallocate",
        "remote.storage.enable",
        "segment.index.bytes",
        "segment.jitter.ms",
    }
)

KNOWN_TOPIC_CONFIGS = frozenset(TOPIC_CONFIG_SYNONYMS) | IGNORED_TOPIC_CONFIGS
