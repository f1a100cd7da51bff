"""Broker configuration under Kafka's own names.

Every setting a user can pass with `--override key=value` or a properties file (`--config FILE`) is declared in
`BROKER_CONFIGS` with its type, default and a one-line doc; `kbroker serve --help` prints this table. Unknown keys are
rejected with a clear message rather than silently ignored, so a typo never goes unnoticed.

`BrokerConfig.from_properties` checks the names and values once, at start-up, and gives typed settings: each field is
the Kafka name with dots as underscores (`replica.lag.time.max.ms` -> `replica_lag_time_max_ms`), so nothing reads a
setting by string at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kbroker.common import ConfigError, KafkaError
from kbroker.log.config import LogConfig
from protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    type: str  # short, int, long, double, boolean, string, list (Kafka's ConfigDef types)
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
        "listeners", "string", "PLAINTEXT://127.0.0.1:9092", "Where to listen, as PLAINTEXT://HOST:PORT."
    ),
    ConfigDef(
        "advertised.listeners",
        "string",
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
        "short",
        "3",
        "Replicas of __consumer_offsets; a cluster creates it once this many brokers are live (a single node: 1).",
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
    ConfigDef(
        "cluster.name", "string", "default", "Names this cluster's keys in etcd: /kbroker/<cluster.name>/."
    ),
]

BROKER_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _DEFS}

# Kafka's topic-level configs that we honour, with the broker setting that gives each its default.
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {d.topic_config: d.name for d in _DEFS if d.topic_config}


def _check(defn: ConfigDef, value: str) -> None:
    try:
        if defn.type in ("short", "int", "long"):
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


# Two names of one setting (broker.id from ZooKeeper-mode Kafka).
_NODE_ID_NAMES = ("node.id", "broker.id")


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """Validated, typed broker settings. Build with `BrokerConfig.from_properties({...})`."""

    explicit: Mapping[str, str]
    """The settings given (by --override, --config or a flag), by Kafka name: DescribeConfigs tells them apart."""
    node_id: int
    data_dir: Path
    listener: Listener
    advertised_listener: Listener
    num_partitions: int
    default_replication_factor: int
    auto_create_topics_enable: bool
    delete_topic_enable: bool
    socket_request_max_bytes: int
    log_retention_check_interval_ms: int
    log_cleaner_enable: bool
    log_cleaner_backoff_ms: int
    replica_lag_time_max_ms: int
    replica_fetch_wait_max_ms: int
    replica_fetch_max_bytes: int
    unclean_leader_election_enable: bool
    offsets_topic_num_partitions: int
    offsets_topic_replication_factor: int
    offsets_topic_segment_bytes: int
    offsets_retention_minutes: int
    offsets_retention_check_interval_ms: int
    offset_metadata_max_bytes: int
    group_initial_rebalance_delay_ms: int
    group_min_session_timeout_ms: int
    group_max_session_timeout_ms: int
    group_max_size: int
    metadata_etcd_endpoints: tuple[str, ...]
    broker_session_timeout_ms: int
    cluster_name: str
    topic_defaults: Mapping[str, str] = field(default_factory=dict)
    """The default value of every topic config, as the broker's settings give them (Kafka's synonyms)."""
    log_defaults: LogConfig = field(default_factory=LogConfig)
    """The same, parsed: the LogConfig of a topic with no config of its own."""

    @classmethod
    def from_properties(cls, values: Mapping[str, str]) -> BrokerConfig:
        """Check every name and value (ConfigError naming the one at fault) and build the settings."""
        for key, value in values.items():
            defn = BROKER_CONFIGS.get(key)
            if defn is None:
                raise ConfigError(f"unknown broker config {key!r} (kbroker serve --help lists them)")
            _check(defn, value)
        raw = _Raw(dict(values))
        listeners = raw.items("listeners")
        if len(listeners) != 1:
            raise ConfigError("kbroker serves exactly one listener")
        listener = parse_listener(listeners[0])
        advertised = raw.items("advertised.listeners")
        if len(advertised) > 1:
            raise ConfigError("kbroker advertises exactly one listener")
        dirs = raw.items("log.dirs")
        if len(dirs) > 1:
            raise ConfigError("kbroker uses one data directory; log.dirs lists several")
        broker_id = raw.get("broker.id")
        topic_defaults = _topic_defaults(raw)
        try:
            log_defaults = LogConfig.from_properties(topic_defaults)
        except ConfigError as exc:
            raise ConfigError(f"broker default of a topic config: {exc}") from None
        return cls(
            explicit=dict(values),
            node_id=int(broker_id)
            if broker_id is not None and "node.id" not in values
            else raw.number("node.id"),
            data_dir=Path(dirs[0] if dirs else raw.text("log.dir")),
            listener=listener,
            advertised_listener=parse_listener(advertised[0]) if advertised else listener,
            num_partitions=raw.number("num.partitions"),
            default_replication_factor=raw.number("default.replication.factor"),
            auto_create_topics_enable=raw.flag("auto.create.topics.enable"),
            delete_topic_enable=raw.flag("delete.topic.enable"),
            socket_request_max_bytes=raw.number("socket.request.max.bytes"),
            log_retention_check_interval_ms=raw.number("log.retention.check.interval.ms"),
            log_cleaner_enable=raw.flag("log.cleaner.enable"),
            log_cleaner_backoff_ms=raw.number("log.cleaner.backoff.ms"),
            replica_lag_time_max_ms=raw.number("replica.lag.time.max.ms"),
            replica_fetch_wait_max_ms=raw.number("replica.fetch.wait.max.ms"),
            replica_fetch_max_bytes=raw.number("replica.fetch.max.bytes"),
            unclean_leader_election_enable=raw.flag("unclean.leader.election.enable"),
            offsets_topic_num_partitions=raw.number("offsets.topic.num.partitions"),
            offsets_topic_replication_factor=raw.number("offsets.topic.replication.factor"),
            offsets_topic_segment_bytes=raw.number("offsets.topic.segment.bytes"),
            offsets_retention_minutes=raw.number("offsets.retention.minutes"),
            offsets_retention_check_interval_ms=raw.number("offsets.retention.check.interval.ms"),
            offset_metadata_max_bytes=raw.number("offset.metadata.max.bytes"),
            group_initial_rebalance_delay_ms=raw.number("group.initial.rebalance.delay.ms"),
            group_min_session_timeout_ms=raw.number("group.min.session.timeout.ms"),
            group_max_session_timeout_ms=raw.number("group.max.session.timeout.ms"),
            group_max_size=raw.number("group.max.size"),
            metadata_etcd_endpoints=tuple(raw.items("metadata.etcd.endpoints")),
            broker_session_timeout_ms=raw.number("broker.session.timeout.ms"),
            cluster_name=raw.text("cluster.name"),
            topic_defaults=topic_defaults,
            log_defaults=log_defaults,
        )

    @property
    def cluster_mode(self) -> bool:
        return bool(self.metadata_etcd_endpoints)

    def raw(self, name: str) -> str | None:
        """A setting as given, or its default (DescribeConfigs shows values as strings)."""
        if name in self.explicit:
            return self.explicit[name]
        return BROKER_CONFIGS[name].default

    def describe(self) -> list[tuple[str, str | None, bool]]:
        """(name, value, is_default) of every broker config, for DescribeConfigs. node.id and broker.id both show
        the id in use, whichever of them was given, as Kafka shows them."""
        id_given = any(name in self.explicit for name in _NODE_ID_NAMES)
        return [
            (name, str(self.node_id), not id_given)
            if name in _NODE_ID_NAMES
            else (name, self.raw(name), name not in self.explicit)
            for name in sorted(BROKER_CONFIGS)
        ]

    def topic_log_config(self, configs: Mapping[str, str]) -> LogConfig:
        """The LogConfig of a topic with these explicit configs (validated when the topic was created)."""
        return LogConfig.from_properties(configs, self.log_defaults)

    def validate_topic_configs(self, configs: Mapping[str, str]) -> None:
        """INVALID_CONFIG (a KafkaError) for a name Kafka does not know or a value out of range."""
        for key in configs:
            if key not in KNOWN_TOPIC_CONFIGS:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {key}")
        LogConfig.from_properties(configs, self.log_defaults)

    def describe_topic_configs(self, explicit: Mapping[str, str]) -> list[tuple[str, str | None, int]]:
        """(name, value, source) of every topic config: 1 explicit topic config, 4 broker setting, 5 default."""
        out: list[tuple[str, str | None, int]] = []
        for name in sorted(TOPIC_CONFIG_SYNONYMS):
            if name in explicit:
                out.append((name, explicit[name], TOPIC_CONFIG_SOURCE))
                continue
            broker_name = TOPIC_CONFIG_SYNONYMS[name]
            source = STATIC_BROKER_CONFIG if broker_name in self.explicit else DEFAULT_CONFIG
            out.append((name, self.topic_defaults.get(name), source))
        for name in sorted(set(explicit) - set(TOPIC_CONFIG_SYNONYMS)):
            out.append((name, explicit[name], TOPIC_CONFIG_SOURCE))
        return out


# DescribeConfigs' config sources (Kafka's ConfigSource ids).
TOPIC_CONFIG_SOURCE = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5


class _Raw:
    """The given values over the defaults, read by type while building a BrokerConfig (names already checked)."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, name: str) -> str | None:
        return self.values[name] if name in self.values else BROKER_CONFIGS[name].default

    def text(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise ConfigError(f"{name} is not set")
        return value

    def number(self, name: str) -> int:
        return int(self.text(name))

    def flag(self, name: str) -> bool:
        return self.text(name).lower() == "true"

    def items(self, name: str) -> list[str]:
        value = self.get(name)
        return [] if not value else [v.strip() for v in value.split(",") if v.strip()]


def _retention_ms(raw: _Raw) -> int:
    for name, factor in (
        ("log.retention.ms", 1),
        ("log.retention.minutes", 60_000),
        ("log.retention.hours", 3_600_000),
    ):
        value = raw.get(name)
        if value is not None:
            n = int(value)
            return -1 if n < 0 else n * factor
    raise AssertionError("log.retention.hours has a default")


def _topic_defaults(raw: _Raw) -> dict[str, str]:
    """The default value of every topic config, as the broker's settings give them (Kafka derives retention.ms and
    segment.ms from several keys)."""
    out = {topic: raw.text(broker) for topic, broker in TOPIC_CONFIG_SYNONYMS.items() if raw.get(broker)}
    out["retention.ms"] = str(_retention_ms(raw))
    roll_ms = raw.get("log.roll.ms")
    out["segment.ms"] = str(int(roll_ms) if roll_ms is not None else raw.number("log.roll.hours") * 3_600_000)
    return out


# Topic configs Kafka knows that kbroker accepts and stores but does not act on (docs/kafka-differences.md).
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
