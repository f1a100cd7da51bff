"""Broker configuration under Kafka's own names.

Every setting a user can pass with `--override key=value` or a properties file (`--config FILE`) is declared in
`BROKER_CONFIGS` with its type, default and a one-line doc; `kbroker serve --help` prints this table. Unknown keys are
rejected with a clear message rather than silently ignored, so a typo never goes unnoticed.

`BrokerConfig.from_properties` checks the names and values once, at start-up, and gives typed settings: each field is
the Kafka name with dots as underscores (`replica.lag.time.max.ms` -> `replica_lag_time_max_ms`), so nothing reads a
setting by string at run time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
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
    # may be set for one listener as listener.name.<listener>.<name>
    per_listener: bool = False

    @property
    def sensitive(self) -> bool:
        """Kafka's PASSWORD type: never shown by DescribeConfigs or in logs."""
        return self.type == "password"


_DEFS = [
    ConfigDef("node.id", "int", "0", "This broker's id in the cluster (broker.id is a synonym)."),
    ConfigDef("broker.id", "int", None, "Synonym of node.id, as in ZooKeeper-mode Kafka."),
    ConfigDef(
        "log.dirs", "string", None, "Data directory (--data-dir); log.dir is a synonym. One directory only."
    ),
    ConfigDef("log.dir", "string", "./kbroker-data", "Data directory when log.dirs is unset."),
    ConfigDef(
        "listeners",
        "string",
        "PLAINTEXT://127.0.0.1:9092",
        "Where to listen: NAME://HOST:PORT, comma-separated (names are security protocols or mapped ones).",
    ),
    ConfigDef(
        "advertised.listeners",
        "string",
        None,
        "What Metadata tells clients of each listener to connect to (default: listeners).",
    ),
    ConfigDef(
        "listener.security.protocol.map",
        "string",
        "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "Listener name to security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).",
    ),
    ConfigDef(
        "inter.broker.listener.name",
        "string",
        None,
        "The listener followers fetch from leaders on (default: the one named security.inter.broker.protocol).",
    ),
    ConfigDef(
        "security.inter.broker.protocol",
        "string",
        "PLAINTEXT",
        "The security protocol between brokers, when inter.broker.listener.name is unset.",
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
        "log.flush.interval.ms",
        "long",
        "1000",
        "Every log is fsynced at least this often (0: only when acks=all, a roll or a clean stop asks), which bounds "
        "what an acks=1 or acks=0 write can lose when every replica loses power (Kafka: unset, never).",
    ),
    ConfigDef(
        "log.flush.linger.ms",
        "long",
        "1",
        "kbroker's own: how long a group commit round of acks=all fsyncs may wait for more produce requests when the "
        "round before it carried several that came close together (a pipelining producer); 0: never.",
    ),
    ConfigDef(
        "log.flush.acks.all.enable",
        "boolean",
        "true",
        "kbroker's own: whether an acks=all produce is answered only once its batch is fsynced on the leader and on "
        "every in-sync follower. false: Kafka's default durability, answered once every in-sync replica has written "
        "it, the fsync left to log.flush.interval.ms; an acknowledged write then survives kill -9 but not the loss "
        "of power of every replica at once.",
    ),
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
    ConfigDef(
        "replica.fetch.max.bytes",
        "int",
        "8388608",
        "Follower fetch size per partition. 8 MiB where Kafka has 1 MiB: a kbroker follower fsyncs what each fetch "
        "brought before its next fetch, so the more a round carries, the fewer fsyncs a backlog costs.",
    ),
    ConfigDef(
        "max.incremental.fetch.session.cache.slots",
        "int",
        "1000",
        "Most incremental fetch sessions (KIP-227) this broker keeps, in 8 shards of slots/8 as Kafka 3.9 (fewer "
        "than 8: no sessions).",
    ),
    ConfigDef(
        "min.incremental.fetch.session.eviction.ms",
        "long",
        "120000",
        "A fetch session unused this long may be evicted by a new one, and a consumer's session older than this by a "
        "larger one (kbroker's own: Kafka's fixed 120000).",
    ),
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
    ConfigDef("transaction.state.log.num.partitions", "int", "50", "Partitions of __transaction_state."),
    ConfigDef(
        "transaction.state.log.replication.factor",
        "short",
        "3",
        "Replicas of __transaction_state (created on first use; a single node: 1).",
    ),
    ConfigDef("transaction.state.log.min.isr", "int", "2", "min.insync.replicas of __transaction_state."),
    ConfigDef(
        "transaction.state.log.segment.bytes", "int", "104857600", "Segment size of __transaction_state."
    ),
    ConfigDef(
        "transaction.max.timeout.ms",
        "int",
        "900000",
        "Largest transaction.timeout.ms a producer may ask for.",
    ),
    ConfigDef(
        "transactional.id.expiration.ms",
        "int",
        "604800000",
        "A transactional id with no transaction for this long is forgotten.",
    ),
    ConfigDef(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "int",
        "10000",
        "How often transactions past their timeout are aborted (their producers fenced).",
    ),
    ConfigDef(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        "int",
        "3600000",
        "How often expired transactional ids are removed.",
    ),
    ConfigDef(
        "transaction.partition.verification.enable",
        "boolean",
        "true",
        "KIP-890: a leader asks the coordinator before a batch may begin a transaction on its partition.",
    ),
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
        "controlled.shutdown.enable",
        "boolean",
        "true",
        "On SIGTERM a cluster node first has its leaderships moved to other in-sync replicas.",
    ),
    ConfigDef(
        "controlled.shutdown.max.retries",
        "int",
        "3",
        "With the next one: a stopping node waits for its leaderships to move at most retries x backoff.",
    ),
    ConfigDef("controlled.shutdown.retry.backoff.ms", "long", "5000", "See controlled.shutdown.max.retries."),
    ConfigDef(
        "auto.leader.rebalance.enable",
        "boolean",
        "true",
        "The controller moves leaderships back to each partition's preferred replica.",
    ),
    ConfigDef(
        "leader.imbalance.check.interval.seconds",
        "long",
        "300",
        "How often the controller looks for leaderships to move back.",
    ),
    ConfigDef(
        "leader.replication.throttled.rate",
        "long",
        "9223372036854775807",
        "Bytes/s a leader sends to throttled replicas (leader.replication.throttled.replicas); dynamic.",
    ),
    ConfigDef(
        "follower.replication.throttled.rate",
        "long",
        "9223372036854775807",
        "Bytes/s a follower fetches for throttled replicas (follower.replication.throttled.replicas); dynamic.",
    ),
    ConfigDef(
        "cluster.name", "string", "default", "Names this cluster's keys in etcd: /kbroker/<cluster.name>/."
    ),
    ConfigDef(
        "admin.listener",
        "string",
        None,
        "http://HOST:PORT of the admin HTTP listener: Prometheus /metrics, /health/live, /health/ready and the web "
        "console at / (kbroker's own; unset: off).",
    ),
]


# Security: TLS, SASL, authorization, quotas and connection limits (kbroker/security/). Those marked per_listener may
# also be given as listener.name.<listener>.<config> (and sasl.jaas.config as listener.name.<l>.<mechanism>.…).
_SECURITY_DEFS = [
    ConfigDef("ssl.keystore.type", "string", "JKS", "PEM or PKCS12 (JKS is not read).", per_listener=True),
    ConfigDef(
        "ssl.keystore.location",
        "string",
        None,
        "Key store file: the key and its certificate chain.",
        per_listener=True,
    ),
    ConfigDef(
        "ssl.keystore.password", "password", None, "Password of a PKCS12 key store.", per_listener=True
    ),
    ConfigDef(
        "ssl.key.password", "password", None, "Password of an encrypted private key.", per_listener=True
    ),
    ConfigDef(
        "ssl.keystore.certificate.chain", "password", None, "Inline PEM certificate chain.", per_listener=True
    ),
    ConfigDef("ssl.keystore.key", "password", None, "Inline PEM private key (PKCS#8).", per_listener=True),
    ConfigDef("ssl.truststore.type", "string", "JKS", "PEM or PKCS12 (JKS is not read).", per_listener=True),
    ConfigDef("ssl.truststore.location", "string", None, "Trusted CA certificates file.", per_listener=True),
    ConfigDef(
        "ssl.truststore.password", "password", None, "Password of a PKCS12 trust store.", per_listener=True
    ),
    ConfigDef(
        "ssl.truststore.certificates", "password", None, "Inline PEM trusted certificates.", per_listener=True
    ),
    ConfigDef(
        "ssl.client.auth",
        "string",
        "none",
        "Client certificates: required, requested or none.",
        per_listener=True,
    ),
    ConfigDef(
        "ssl.enabled.protocols",
        "list",
        "TLSv1.2,TLSv1.3",
        "TLS versions allowed (1.2 and 1.3).",
        per_listener=True,
    ),
    ConfigDef("ssl.protocol", "string", "TLSv1.3", "The TLS protocol of the context.", per_listener=True),
    ConfigDef(
        "ssl.cipher.suites",
        "list",
        "",
        "Cipher suites (OpenSSL names; default: Python's).",
        per_listener=True,
    ),
    ConfigDef(
        "ssl.endpoint.identification.algorithm",
        "string",
        "https",
        "Host name check of the leader's certificate by followers; empty: none.",
        per_listener=True,
    ),
    ConfigDef(
        "ssl.principal.mapping.rules",
        "string",
        "DEFAULT",
        "Rules mapping a client certificate's DN to a principal name (RULE:pattern/replacement/[LU], DEFAULT).",
        per_listener=True,
    ),
    ConfigDef(
        "sasl.enabled.mechanisms",
        "list",
        "GSSAPI",
        "SASL mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER.",
        per_listener=True,
    ),
    ConfigDef(
        "sasl.mechanism.inter.broker.protocol", "string", "GSSAPI", "SASL mechanism followers log in with."
    ),
    ConfigDef(
        "sasl.jaas.config",
        "password",
        None,
        "JAAS login module of a listener's mechanism (PLAIN users as user_NAME=\"password\"; the broker's own "
        "username/password for the inter-broker listener).",
        per_listener=True,
    ),
    ConfigDef(
        "sasl.server.max.receive.size",
        "int",
        "524288",
        "Largest frame accepted before authentication.",
        per_listener=True,
    ),
    ConfigDef(
        "connections.max.reauth.ms",
        "long",
        "0",
        "Session lifetime of a SASL login; the client must re-authenticate before it ends (0: never).",
        per_listener=True,
    ),
    ConfigDef(
        "connection.failed.authentication.delay.ms",
        "int",
        "100",
        "Delay of the answer to a failed login.",
    ),
    ConfigDef(
        "sasl.oauthbearer.jwks.endpoint.url",
        "string",
        None,
        "JWKS that OAUTHBEARER tokens are verified against (https:// or file://).",
        per_listener=True,
    ),
    ConfigDef(
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "long",
        "3600000",
        "How often the JWKS is read again.",
        per_listener=True,
    ),
    ConfigDef(
        "sasl.oauthbearer.expected.audience",
        "list",
        None,
        "Accepted aud claims (any of them).",
        per_listener=True,
    ),
    ConfigDef("sasl.oauthbearer.expected.issuer", "string", None, "Required iss claim.", per_listener=True),
    ConfigDef(
        "sasl.oauthbearer.sub.claim.name", "string", "sub", "Claim naming the principal.", per_listener=True
    ),
    ConfigDef(
        "sasl.oauthbearer.scope.claim.name", "string", "scope", "Claim holding the scopes.", per_listener=True
    ),
    ConfigDef(
        "sasl.oauthbearer.clock.skew.seconds",
        "int",
        "30",
        "Clock skew allowed on exp/nbf/iat.",
        per_listener=True,
    ),
    ConfigDef(
        "authorizer.class.name",
        "string",
        "",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer turns ACL enforcement on.",
    ),
    ConfigDef("super.users", "string", None, "Principals allowed everything, e.g. User:admin;User:broker."),
    ConfigDef(
        "allow.everyone.if.no.acl.found",
        "boolean",
        "false",
        "Allow an action on a resource with no ACL at all.",
    ),
    ConfigDef(
        "max.connections", "int", "2147483647", "Connections the broker accepts at once.", per_listener=True
    ),
    ConfigDef("max.connections.per.ip", "int", "2147483647", "Connections from one IP address at once."),
    ConfigDef(
        "max.connections.per.ip.overrides",
        "string",
        "",
        "Per-address limits: HOST:N,HOST:N (override the above).",
    ),
    ConfigDef("connections.max.idle.ms", "long", "600000", "An idle connection is closed after this."),
    ConfigDef("quota.window.num", "int", "11", "Samples kept to measure client quota rates."),
    ConfigDef("quota.window.size.seconds", "int", "1", "Length of one quota sample."),
]

_DEFS += _SECURITY_DEFS
BROKER_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _DEFS}
LISTENER_PREFIX = "listener.name."
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

# Kafka's topic-level configs that we honour, with the broker setting that gives each its default.
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {d.topic_config: d.name for d in _DEFS if d.topic_config}

# The broker configs IncrementalAlterConfigs / AlterConfigs may change at run time (per broker, or for every broker
# as the cluster-wide default), as Kafka allows them: the defaults of topic configs (not log.retention.hours /
# .minutes and log.roll.hours, which Kafka reads at start-up only) and the replication throttles. The others are read
# once at start-up.
DYNAMIC_BROKER_CONFIGS = frozenset(
    {
        *TOPIC_CONFIG_SYNONYMS.values(),
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
    }
)


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


SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    """The listener's name (upper case): a security protocol's name, or one mapped by listener.security.protocol.map."""
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def parse_protocol_map(text: str) -> dict[str, str]:
    """listener.security.protocol.map: NAME:PROTOCOL,NAME:PROTOCOL."""
    out: dict[str, str] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL "
                f"(PROTOCOL one of {', '.join(SECURITY_PROTOCOLS)})"
            )
        out[name.strip().upper()] = protocol
    return out


def parse_listener(text: str, protocol_map: Mapping[str, str] | None = None) -> Listener:
    """NAME://HOST:PORT (HOST may be empty for all interfaces, [v6] bracketed); NAME's security protocol comes from
    listener.security.protocol.map (Kafka's default maps each protocol's own name to itself)."""
    if "://" not in text:
        raise ConfigError(f"listener {text!r} is not NAME://HOST:PORT")
    name, rest = text.split("://", 1)
    name = name.strip().upper()
    protocols = protocol_map if protocol_map is not None else {p: p for p in SECURITY_PROTOCOLS}
    if name not in protocols:
        raise ConfigError(
            f"listener {text!r}: no security protocol for {name} in listener.security.protocol.map "
            f"(one of {', '.join(SECURITY_PROTOCOLS)}, or mapped)"
        )
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"listener {text!r} has no port")
    host = host.strip("[]")
    return Listener(name, host, int(port), protocols[name])


def _parse_listeners(
    raw: _Raw, protocol_map: Mapping[str, str]
) -> tuple[tuple[Listener, ...], tuple[Listener, ...]]:
    listeners = tuple(parse_listener(text, protocol_map) for text in raw.items("listeners"))
    if not listeners:
        raise ConfigError("listeners names no listener")
    names = [listener.name for listener in listeners]
    if len(set(names)) != len(names):
        raise ConfigError(f"listeners names a listener twice: {', '.join(names)}")
    given = raw.items("advertised.listeners")
    advertised_by_name = {a.name: a for a in (parse_listener(text, protocol_map) for text in given)}
    for name in advertised_by_name:
        if name not in names:
            raise ConfigError(f"advertised.listeners names {name}, which is not in listeners")
    # A listener not advertised explicitly is advertised as it listens (Kafka's rule).
    advertised = tuple(advertised_by_name.get(listener.name, listener) for listener in listeners)
    return listeners, advertised


def _inter_broker_listener(raw: _Raw, listeners: tuple[Listener, ...]) -> str:
    names = [listener.name for listener in listeners]
    explicit = raw.get("inter.broker.listener.name")
    if explicit is not None:
        if explicit.upper() not in names:
            raise ConfigError(
                f"inter.broker.listener.name {explicit} is not one of the listeners ({', '.join(names)})"
            )
        return explicit.upper()
    wanted = raw.text("security.inter.broker.protocol").upper()
    if wanted in names:
        return wanted
    # Kafka refuses to start here; a single node needs no inter-broker listener, so the first one stands in.
    return names[0]


def _check_listener_key(key: str, value: str) -> None:
    """listener.name.<listener>.<config> or listener.name.<listener>.<mechanism>.sasl.jaas.config."""
    rest = key[len(LISTENER_PREFIX) :]
    _listener, _, config = rest.partition(".")
    defn = BROKER_CONFIGS.get(config)
    if defn is None:
        mechanism, _, config = config.partition(".")
        if mechanism.upper() in SASL_MECHANISMS or mechanism.upper() == "GSSAPI":
            defn = BROKER_CONFIGS.get(config)
    if defn is None or not defn.per_listener:
        raise ConfigError(f"unknown broker config {key!r} (kbroker serve --help lists them)")
    _check(defn, value)


# Two names of one setting (broker.id from ZooKeeper-mode Kafka).
_NODE_ID_NAMES = ("node.id", "broker.id")


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """Validated, typed broker settings. Build with `BrokerConfig.from_properties({...})`."""

    explicit: Mapping[str, str]
    """The settings given (by --override, --config or a flag), by Kafka name: DescribeConfigs tells them apart."""
    node_id: int
    data_dir: Path
    listeners: tuple[Listener, ...]
    advertised_listeners: tuple[Listener, ...]
    """One per listener, in the same order: what Metadata tells the clients of that listener."""
    inter_broker_listener_name: str
    num_partitions: int
    default_replication_factor: int
    auto_create_topics_enable: bool
    delete_topic_enable: bool
    socket_request_max_bytes: int
    log_retention_check_interval_ms: int
    log_flush_interval_ms: int
    log_flush_linger_ms: int
    log_flush_acks_all_enable: bool
    log_cleaner_enable: bool
    log_cleaner_backoff_ms: int
    replica_lag_time_max_ms: int
    replica_fetch_wait_max_ms: int
    max_incremental_fetch_session_cache_slots: int
    min_incremental_fetch_session_eviction_ms: int
    replica_fetch_max_bytes: int
    unclean_leader_election_enable: bool
    offsets_topic_num_partitions: int
    offsets_topic_replication_factor: int
    offsets_topic_segment_bytes: int
    offsets_retention_minutes: int
    offsets_retention_check_interval_ms: int
    offset_metadata_max_bytes: int
    transaction_state_log_num_partitions: int
    transaction_state_log_replication_factor: int
    transaction_state_log_min_isr: int
    transaction_state_log_segment_bytes: int
    transaction_max_timeout_ms: int
    transactional_id_expiration_ms: int
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int
    transaction_remove_expired_transaction_cleanup_interval_ms: int
    transaction_partition_verification_enable: bool
    group_initial_rebalance_delay_ms: int
    group_min_session_timeout_ms: int
    group_max_session_timeout_ms: int
    group_max_size: int
    metadata_etcd_endpoints: tuple[str, ...]
    broker_session_timeout_ms: int
    cluster_name: str
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_seconds: int = 300
    leader_replication_throttled_rate: int = 2**63 - 1
    follower_replication_throttled_rate: int = 2**63 - 1
    authorizer_class_name: str = ""
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False
    max_connections_per_ip: int = 2**31 - 1
    max_connections_per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    connections_max_idle_ms: int = 600_000
    connection_failed_authentication_delay_ms: int = 100
    quota_window_num: int = 11
    quota_window_size_seconds: int = 1
    sasl_mechanism_inter_broker_protocol: str = "GSSAPI"
    topic_defaults: Mapping[str, str] = field(default_factory=dict)
    """The default value of every topic config, as the broker's settings give them (Kafka's synonyms)."""
    log_defaults: LogConfig = field(default_factory=LogConfig)
    """The same, parsed: the LogConfig of a topic with no config of its own."""

    @classmethod
    def from_properties(cls, values: Mapping[str, str]) -> BrokerConfig:
        """Check every name and value (ConfigError naming the one at fault) and build the settings."""
        for key, value in values.items():
            if key.startswith(LISTENER_PREFIX):
                _check_listener_key(key, value)
                continue
            defn = BROKER_CONFIGS.get(key)
            if defn is None:
                raise ConfigError(f"unknown broker config {key!r} (kbroker serve --help lists them)")
            _check(defn, value)
        raw = _Raw(dict(values))
        listeners, advertised = _parse_listeners(
            raw, parse_protocol_map(raw.text("listener.security.protocol.map"))
        )
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
            listeners=listeners,
            advertised_listeners=advertised,
            inter_broker_listener_name=_inter_broker_listener(raw, listeners),
            num_partitions=raw.number("num.partitions"),
            default_replication_factor=raw.number("default.replication.factor"),
            auto_create_topics_enable=raw.flag("auto.create.topics.enable"),
            delete_topic_enable=raw.flag("delete.topic.enable"),
            socket_request_max_bytes=raw.number("socket.request.max.bytes"),
            log_retention_check_interval_ms=raw.number("log.retention.check.interval.ms"),
            log_flush_interval_ms=raw.number("log.flush.interval.ms"),
            log_flush_linger_ms=raw.number("log.flush.linger.ms"),
            log_flush_acks_all_enable=raw.flag("log.flush.acks.all.enable"),
            log_cleaner_enable=raw.flag("log.cleaner.enable"),
            log_cleaner_backoff_ms=raw.number("log.cleaner.backoff.ms"),
            replica_lag_time_max_ms=raw.number("replica.lag.time.max.ms"),
            replica_fetch_wait_max_ms=raw.number("replica.fetch.wait.max.ms"),
            max_incremental_fetch_session_cache_slots=raw.number("max.incremental.fetch.session.cache.slots"),
            min_incremental_fetch_session_eviction_ms=raw.number("min.incremental.fetch.session.eviction.ms"),
            replica_fetch_max_bytes=raw.number("replica.fetch.max.bytes"),
            unclean_leader_election_enable=raw.flag("unclean.leader.election.enable"),
            offsets_topic_num_partitions=raw.number("offsets.topic.num.partitions"),
            offsets_topic_replication_factor=raw.number("offsets.topic.replication.factor"),
            offsets_topic_segment_bytes=raw.number("offsets.topic.segment.bytes"),
            offsets_retention_minutes=raw.number("offsets.retention.minutes"),
            offsets_retention_check_interval_ms=raw.number("offsets.retention.check.interval.ms"),
            offset_metadata_max_bytes=raw.number("offset.metadata.max.bytes"),
            transaction_state_log_num_partitions=raw.number("transaction.state.log.num.partitions"),
            transaction_state_log_replication_factor=raw.number("transaction.state.log.replication.factor"),
            transaction_state_log_min_isr=raw.number("transaction.state.log.min.isr"),
            transaction_state_log_segment_bytes=raw.number("transaction.state.log.segment.bytes"),
            transaction_max_timeout_ms=raw.number("transaction.max.timeout.ms"),
            transactional_id_expiration_ms=raw.number("transactional.id.expiration.ms"),
            transaction_abort_timed_out_transaction_cleanup_interval_ms=raw.number(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms"
            ),
            transaction_remove_expired_transaction_cleanup_interval_ms=raw.number(
                "transaction.remove.expired.transaction.cleanup.interval.ms"
            ),
            transaction_partition_verification_enable=raw.flag("transaction.partition.verification.enable"),
            group_initial_rebalance_delay_ms=raw.number("group.initial.rebalance.delay.ms"),
            group_min_session_timeout_ms=raw.number("group.min.session.timeout.ms"),
            group_max_session_timeout_ms=raw.number("group.max.session.timeout.ms"),
            group_max_size=raw.number("group.max.size"),
            metadata_etcd_endpoints=tuple(raw.items("metadata.etcd.endpoints")),
            broker_session_timeout_ms=raw.number("broker.session.timeout.ms"),
            cluster_name=raw.text("cluster.name"),
            authorizer_class_name=raw.text("authorizer.class.name").strip(),
            super_users=tuple(u.strip() for u in (raw.get("super.users") or "").split(";") if u.strip()),
            allow_everyone_if_no_acl_found=raw.flag("allow.everyone.if.no.acl.found"),
            max_connections_per_ip=raw.number("max.connections.per.ip"),
            max_connections_per_ip_overrides=_per_ip_overrides(raw.items("max.connections.per.ip.overrides")),
            connections_max_idle_ms=raw.number("connections.max.idle.ms"),
            connection_failed_authentication_delay_ms=raw.number("connection.failed.authentication.delay.ms"),
            quota_window_num=raw.number("quota.window.num"),
            quota_window_size_seconds=raw.number("quota.window.size.seconds"),
            sasl_mechanism_inter_broker_protocol=raw.text("sasl.mechanism.inter.broker.protocol")
            .strip()
            .upper(),
            controlled_shutdown_enable=raw.flag("controlled.shutdown.enable"),
            controlled_shutdown_max_retries=raw.number("controlled.shutdown.max.retries"),
            controlled_shutdown_retry_backoff_ms=raw.number("controlled.shutdown.retry.backoff.ms"),
            auto_leader_rebalance_enable=raw.flag("auto.leader.rebalance.enable"),
            leader_imbalance_check_interval_seconds=raw.number("leader.imbalance.check.interval.seconds"),
            leader_replication_throttled_rate=raw.number("leader.replication.throttled.rate"),
            follower_replication_throttled_rate=raw.number("follower.replication.throttled.rate"),
            topic_defaults=topic_defaults,
            log_defaults=log_defaults,
        )

    @property
    def cluster_mode(self) -> bool:
        return bool(self.metadata_etcd_endpoints)

    @property
    def inter_broker_listener(self) -> Listener:
        return next(lst for lst in self.listeners if lst.name == self.inter_broker_listener_name)

    @property
    def advertised_inter_broker_listener(self) -> Listener:
        return next(lst for lst in self.advertised_listeners if lst.name == self.inter_broker_listener_name)

    def listener_value(self, listener: str, name: str, mechanism: str | None = None) -> str | None:
        """A setting as one listener sees it: listener.name.<listener>.[<mechanism>.]<name>, else <name> given or
        defaulted (Kafka's order)."""
        prefix = f"{LISTENER_PREFIX}{listener.lower()}."
        if mechanism is not None:
            value = self.explicit.get(f"{prefix}{mechanism.lower()}.{name}")
            if value is not None:
                return value
        value = self.explicit.get(prefix + name)
        return value if value is not None else self.raw(name)

    def raw(self, name: str) -> str | None:
        """A setting as given, or its default (DescribeConfigs shows values as strings)."""
        if name in self.explicit:
            return self.explicit[name]
        return BROKER_CONFIGS[name].default

    def describe(
        self, dynamic: DynamicBrokerConfigs | None = None
    ) -> list[tuple[str, str | None, int, list[tuple[str | None, int]]]]:
        """(name, value, source, synonyms) of every broker config, for DescribeConfigs: the value from this broker's
        dynamic configs, else the cluster-wide dynamic default, else the start-up setting, else the default; the
        synonyms are every one of those that is set, in that order, as (value, source). node.id and broker.id both
        show the id in use, whichever of them was given, as Kafka shows them."""
        dynamic = dynamic or DynamicBrokerConfigs()
        id_given = any(name in self.explicit for name in _NODE_ID_NAMES)
        out: list[tuple[str, str | None, int, list[tuple[str | None, int]]]] = []
        for name in sorted(BROKER_CONFIGS):
            if name in _NODE_ID_NAMES:
                source = STATIC_BROKER_CONFIG if id_given else DEFAULT_CONFIG
                given: list[tuple[str | None, int]] = (
                    [(self.explicit[name], STATIC_BROKER_CONFIG)] if name in self.explicit else []
                )
                default = BROKER_CONFIGS[name].default
                given += [(default, DEFAULT_CONFIG)] if default is not None else []
                out.append((name, str(self.node_id), source, given))
                continue
            synonyms: list[tuple[str | None, int]] = [
                (value, source)
                for value, source in (
                    (dynamic.node.get(name), DYNAMIC_BROKER_CONFIG),
                    (dynamic.cluster.get(name), DYNAMIC_DEFAULT_BROKER_CONFIG),
                    (self.explicit.get(name), STATIC_BROKER_CONFIG),
                    (BROKER_CONFIGS[name].default, DEFAULT_CONFIG),
                )
                if value is not None
            ]
            value, source = synonyms[0] if synonyms else (None, DEFAULT_CONFIG)
            if BROKER_CONFIGS[name].sensitive:
                # A secret's value is never described, as Kafka: only where it comes from (and a default).
                value = None
                synonyms = [(None if src != DEFAULT_CONFIG else v, src) for v, src in synonyms]
            out.append((name, value, source, synonyms))
        return out

    def with_dynamic(self, dynamic: DynamicBrokerConfigs) -> BrokerConfig:
        """These settings with the dynamic broker configs over them (the cluster-wide defaults, then this broker's
        own): what the topic defaults and replication throttles are now. `explicit` stays the start-up settings."""
        values = {**self.explicit, **dynamic.cluster, **dynamic.node}
        if values == self.explicit:
            return self
        return dataclasses.replace(BrokerConfig.from_properties(values), explicit=self.explicit)

    def validate_dynamic_broker_configs(self, configs: Mapping[str, str]) -> None:
        """INVALID_CONFIG for an unknown name or a bad value, INVALID_REQUEST for a config that is not dynamic (Kafka's
        words for both)."""
        static = sorted(
            name for name in configs if name in BROKER_CONFIGS and name not in DYNAMIC_BROKER_CONFIGS
        )
        if static:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Cannot update these configs dynamically: Set({', '.join(static)})",
            )
        for name, value in configs.items():
            defn = BROKER_CONFIGS.get(name)
            if defn is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown broker config name: {name}")
            try:
                _check(defn, value)
            except ConfigError as exc:
                raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None
        try:
            self.with_dynamic(DynamicBrokerConfigs(cluster=configs))
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None

    def topic_log_config(self, configs: Mapping[str, str]) -> LogConfig:
        """The LogConfig of a topic with these explicit configs (validated when the topic was created)."""
        return LogConfig.from_properties(configs, self.log_defaults)

    def validate_topic_configs(self, configs: Mapping[str, str]) -> None:
        """INVALID_CONFIG (a KafkaError) for a name Kafka does not know or a value out of range."""
        for key in configs:
            if key not in KNOWN_TOPIC_CONFIGS:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {key}")
        LogConfig.from_properties(configs, self.log_defaults)

    def describe_topic_configs(
        self, explicit: Mapping[str, str], dynamic: DynamicBrokerConfigs | None = None
    ) -> list[tuple[str, str | None, int]]:
        """(name, value, source) of every topic config: 1 explicit topic config, else the source of the broker setting
        that gives its default (2 this broker's dynamic config, 3 the cluster-wide dynamic default, 4 a start-up
        setting, 5 the default)."""
        dynamic = dynamic or DynamicBrokerConfigs()
        current = self.with_dynamic(dynamic)
        out: list[tuple[str, str | None, int]] = []
        for name in sorted(TOPIC_CONFIG_SYNONYMS):
            if name in explicit:
                out.append((name, explicit[name], TOPIC_CONFIG_SOURCE))
                continue
            out.append((name, current.topic_defaults.get(name), self.broker_source(name, dynamic)))
        for name in sorted(set(explicit) - set(TOPIC_CONFIG_SYNONYMS)):
            out.append((name, explicit[name], TOPIC_CONFIG_SOURCE))
        return out

    def broker_source(self, topic_config: str, dynamic: DynamicBrokerConfigs) -> int:
        """Where the default of a topic config comes from: the first of the broker settings Kafka derives it from
        that is set, by the place it is set in."""
        names = TOPIC_DEFAULT_SOURCES.get(topic_config, (TOPIC_CONFIG_SYNONYMS[topic_config],))
        for layer, source in (
            (dynamic.node, DYNAMIC_BROKER_CONFIG),
            (dynamic.cluster, DYNAMIC_DEFAULT_BROKER_CONFIG),
            (self.explicit, STATIC_BROKER_CONFIG),
        ):
            if any(name in layer for name in names):
                return source
        return DEFAULT_CONFIG


# DescribeConfigs' config sources (Kafka's ConfigSource ids).
TOPIC_CONFIG_SOURCE = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# The broker settings a topic config's default is derived from, where there are several (Kafka's synonyms).
TOPIC_DEFAULT_SOURCES: dict[str, tuple[str, ...]] = {
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
}


@dataclass(frozen=True, slots=True)
class DynamicBrokerConfigs:
    """The dynamic broker configs that apply to one broker: the cluster-wide defaults and its own."""

    cluster: Mapping[str, str] = field(default_factory=dict)
    node: Mapping[str, str] = field(default_factory=dict)


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


def _per_ip_overrides(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        host, sep, limit = item.rpartition(":")
        if not sep or not limit.strip().isdigit():
            raise ConfigError(f"max.connections.per.ip.overrides: {item!r} is not HOST:LIMIT")
        out[host.strip()] = int(limit)
    return out


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

# IncrementalAlterConfigs' operations (Kafka's AlterConfigOp.OpType ids).
SET_CONFIG = 0
DELETE_CONFIG = 1
APPEND_CONFIG = 2
SUBTRACT_CONFIG = 3

# The configs of type LIST, the only ones APPEND and SUBTRACT apply to.
LIST_CONFIGS = frozenset(
    {
        "cleanup.policy",
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
        "log.cleanup.policy",
    }
)


def apply_config_changes(
    current: Mapping[str, str],
    changes: Sequence[tuple[str, int, str | None]],
    defaults: Mapping[str, str | None],
) -> dict[str, str]:
    """IncrementalAlterConfigs' (name, operation, value) changes to a resource's explicit configs: SET, DELETE
    (back to the default), and for list configs APPEND and SUBTRACT (from the current value, else the default, as
    Kafka does). KafkaError INVALID_CONFIG for a null value or a list operation on another type; INVALID_REQUEST for
    an unknown operation."""
    configs = dict(current)
    for name, operation, value in changes:
        if operation == DELETE_CONFIG:
            configs.pop(name, None)
            continue
        if operation not in (SET_CONFIG, APPEND_CONFIG, SUBTRACT_CONFIG):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {operation} for {name}")
        if value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for : {name}")
        if operation == SET_CONFIG:
            configs[name] = value
            continue
        if name not in LIST_CONFIGS:
            verb = "append" if operation == APPEND_CONFIG else "subtract"
            raise KafkaError(
                ErrorCode.INVALID_CONFIG, f"Config value {verb} is not allowed for config key: {name}"
            )
        base = configs.get(name, defaults.get(name)) or ""
        items = [item.strip() for item in base.split(",") if item.strip()]
        given = [item.strip() for item in value.split(",") if item.strip()]
        if operation == APPEND_CONFIG:
            items += [item for item in given if item not in items]
        else:
            items = [item for item in items if item not in given]
        configs[name] = ",".join(items)
    return configs
