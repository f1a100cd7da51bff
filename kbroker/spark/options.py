"""The options of `format("kbroker")`: Spark's Kafka option names and rules, parsed once into typed settings.

The names, defaults and refusals are those of Spark's own connector (the Structured Streaming + Kafka Integration
Guide, and its KafkaSourceProvider): one of `subscribe`, `subscribePattern`, `assign`; `startingOffsets` and
`endingOffsets` as `earliest`, `latest` or JSON with -2/-1; the timestamp forms, which win over the offset forms;
`kafka.*` handed to the Kafka client. Spark's options are case-insensitive (PySpark hands a data source its options
with lower-cased names), so every lookup here is by the lower-cased name.

The client is librdkafka (confluent-kafka), not the Java client, so `kafka.*` names are translated where the Java name
differs, refused where only the JVM can honour them, and otherwise passed on for librdkafka to accept or refuse by
name. Nothing here talks to a broker or imports Spark.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

# The offsets the JSON forms of startingOffsets/endingOffsets use for "the log start" and "the log end".
EARLIEST = -2
LATEST = -1


class OptionError(ValueError):
    """An option Spark's connector would refuse (its IllegalArgumentException), with the same explanation."""


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


# ---- where to read ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subscribe:
    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    # Spark's driver looks for the pattern anywhere in a topic name (Scala's Regex.findFirstIn): re.search.
    pattern: str


@dataclass(frozen=True)
class Assign:
    partitions: tuple[TopicPartition, ...]


Strategy = Subscribe | SubscribePattern | Assign

# ---- where to start and stop ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EarliestOffsets:
    pass


@dataclass(frozen=True)
class LatestOffsets:
    pass


@dataclass(frozen=True)
class SpecificOffsets:
    """Per partition an offset, or EARLIEST / LATEST."""

    offsets: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class SpecificTimestamps:
    """Per partition a timestamp (ms): the first offset whose timestamp is at or after it."""

    timestamps: Mapping[TopicPartition, int]
    latest_when_none_matches: bool


@dataclass(frozen=True)
class GlobalTimestamp:
    """One timestamp (ms) for every partition."""

    timestamp: int
    latest_when_none_matches: bool


OffsetSpec = EarliestOffsets | LatestOffsets | SpecificOffsets | SpecificTimestamps | GlobalTimestamp


# ---- the settings -----------------------------------------------------------------------------------------------

# Spark's defaults: kafkaConsumer.pollTimeoutMs is spark.network.timeout (120 s), maxTriggerDelay 15 minutes.
DEFAULT_POLL_TIMEOUT_MS = 120_000
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000


@dataclass(frozen=True)
class SourceOptions:
    strategy: Strategy
    starting: OffsetSpec
    ending: OffsetSpec  # LatestOffsets for a stream (it has no end)
    fail_on_data_loss: bool
    include_headers: bool
    min_partitions: int | None
    max_records_per_partition: int | None
    max_offsets_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    poll_timeout_ms: int
    fetch_offset_num_retries: int
    fetch_offset_retry_interval_ms: int
    # librdkafka configuration shared by the driver's admin client and the executors' consumers
    client_config: Mapping[str, Any] = field(default_factory=dict)
    # the consumers' group.id: kafka.group.id if given, else groupIdPrefix + a random id, as Spark does
    group_id: str = ""


@dataclass(frozen=True)
class SinkOptions:
    topic: str | None
    client_config: Mapping[str, Any]


def source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Parse and check a source's options (Spark's validateBatchOptions / validateStreamOptions)."""
    params = _lower(options)
    if streaming:
        if "endingoffsets" in params:
            raise OptionError("ending offset not valid in streaming queries")
        if "endingoffsetsbytimestamp" in params or "endingtimestamp" in params:
            raise OptionError("ending timestamp not valid in streaming queries")
    strategy = _strategy(params)
    kafka = _kafka_params(params)
    _check_consumer_params(kafka)
    starting = offset_spec(
        params, "startingtimestamp", "startingoffsetsbytimestamp", "startingoffsets", default_latest=streaming
    )
    ending: OffsetSpec = LatestOffsets()
    if not streaming:
        ending = offset_spec(
            params, "endingtimestamp", "endingoffsetsbytimestamp", "endingoffsets", default_latest=True
        )
        _check_batch_limits(starting, ending)
    min_partitions = _positive_int(params, "minpartitions", "minPartitions must be positive")
    max_records = _positive_int(params, "maxrecordsperpartition", "maxRecordsPerPartition must be positive")
    max_per_trigger = _long(params, "maxoffsetspertrigger")
    min_per_trigger = _long(params, "minoffsetspertrigger")
    if max_per_trigger is not None and min_per_trigger is not None and min_per_trigger > max_per_trigger:
        raise OptionError(
            f"The value of minOffsetPerTrigger({min_per_trigger}) is higher than the "
            f"maxOffsetsPerTrigger({max_per_trigger})."
        )
    if not streaming:
        for name in ("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay"):
            if name.lower() in params:
                log.warning("%s option ignored in batch queries", name)
    if "group.id" in kafka:
        log.warning(GROUP_ID_WARNING)
        if "groupidprefix" in params:
            log.warning("Option groupIdPrefix will be ignored as option kafka.group.id has been set.")
        group_id = kafka["group.id"]
    else:
        default_prefix = "spark-kafka-source" if streaming else "spark-kafka-relation"
        group_id = f"{params.get('groupidprefix', default_prefix)}-{uuid.uuid4()}-executor"
    return SourceOptions(
        strategy=strategy,
        starting=starting,
        ending=ending,
        fail_on_data_loss=_bool(params, "failondataloss", default=True),
        include_headers=_bool(params, "includeheaders", default=False),
        min_partitions=min_partitions,
        max_records_per_partition=max_records,
        max_offsets_per_trigger=max_per_trigger,
        min_offsets_per_trigger=min_per_trigger,
        max_trigger_delay_ms=time_string_ms(params.get("maxtriggerdelay", "15m")),
        poll_timeout_ms=_long(params, "kafkaconsumer.polltimeoutms") or DEFAULT_POLL_TIMEOUT_MS,
        fetch_offset_num_retries=_long(params, "fetchoffset.numretries") or 3,
        fetch_offset_retry_interval_ms=_long(params, "fetchoffset.retryintervalms") or 1000,
        client_config=client_config(kafka),
        group_id=group_id,
    )


def include_headers(options: Mapping[str, str]) -> bool:
    """Whether the schema has the headers column (the one option the schema depends on)."""
    return _bool(_lower(options), "includeheaders", default=False)


def sink_options(options: Mapping[str, str]) -> SinkOptions:
    params = _lower(options)
    kafka = _kafka_params(params)
    for name, what in (("key.serializer", "keys"), ("value.serializer", "value")):
        if name in kafka:
            raise OptionError(
                f"Kafka option '{name}' is not supported as {what} are serialized with ByteArraySerializer."
            )
    topic = params.get("topic")
    return SinkOptions(topic=topic.strip() if topic is not None else None, client_config=client_config(kafka))


GROUP_ID_WARNING = (
    "Kafka option 'kafka.group.id' has been set on this query, it is not recommended to set this option. This "
    "option is unsafe to use since multiple concurrent queries or sources using the same group id will interfere "
    "with each other as they are part of the same consumer group."
)

AUTO_OFFSET_RESET_MESSAGE = (
    "Kafka option 'auto.offset.reset' is not supported. Instead set the source option 'startingoffsets' to "
    "'earliest' or 'latest' to specify where to start. Structured Streaming manages which offsets are consumed "
    "internally, rather than relying on the kafkaConsumer to do it. This will ensure that no data is missed when "
    "new topics/partitions are dynamically subscribed. Note that 'startingoffsets' only applies when a new "
    "Streaming query is started, and that resuming will always pick up from where the query left off."
)


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in options.items()}


def _kafka_params(params: Mapping[str, str]) -> dict[str, str]:
    kafka = {
        name.removeprefix("kafka."): value for name, value in params.items() if name.startswith("kafka.")
    }
    if "bootstrap.servers" not in kafka:
        raise OptionError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer")
    return kafka


def _check_consumer_params(kafka: Mapping[str, str]) -> None:
    if "auto.offset.reset" in kafka:
        raise OptionError(AUTO_OFFSET_RESET_MESSAGE)
    for name, what in (("key.deserializer", "keys"), ("value.deserializer", "values")):
        if name in kafka:
            raise OptionError(
                f"Kafka option '{name}' is not supported as {what} are deserialized as byte arrays with "
                f"ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the {what}."
            )
    for name in ("enable.auto.commit", "interceptor.classes"):
        if name in kafka:
            raise OptionError(f"Kafka option '{name}' is not supported")


STRATEGIES = ("subscribe", "subscribepattern", "assign")


def _strategy(params: Mapping[str, str]) -> Strategy:
    given = [name for name in STRATEGIES if name in params]
    if not given:
        raise OptionError(
            "One of the following options must be specified for Kafka source: subscribe, subscribepattern, "
            "assign. See the docs for more details."
        )
    if len(given) > 1:
        raise OptionError(
            "Only one of the following options can be specified for Kafka source: subscribe, subscribepattern, "
            "assign. See the docs for more details."
        )
    name = given[0]
    value = params[name]
    if name == "assign":
        if not value.strip().startswith("{"):
            raise OptionError(
                f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
            )
        return Assign(tuple(sorted(_partitions_json(value))))
    if name == "subscribe":
        topics = tuple(topic.strip() for topic in value.split(",") if topic.strip())
        if not topics:
            raise OptionError(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
        return Subscribe(topics)
    pattern = value.strip()
    if not pattern:
        raise OptionError(
            f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
        )
    try:
        re.compile(pattern)
    except re.error as error:
        raise OptionError(
            f"subscribePattern '{pattern}' is not a valid regular expression: {error}"
        ) from error
    return SubscribePattern(pattern)


def offset_spec(
    params: Mapping[str, str],
    global_key: str,
    by_timestamp_key: str,
    offsets_key: str,
    *,
    default_latest: bool,
) -> OffsetSpec:
    """Spark's getKafkaOffsetRangeLimit: a global timestamp first, then per-partition timestamps, then offsets."""
    strategy = params.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise OptionError(
            "startingOffsetsByTimestampStrategy must be 'error' or 'latest', not "
            f"'{params['startingoffsetsbytimestampstrategy']}'"
        )
    latest_when_none_matches = strategy == "latest"
    if global_key in params:
        text = params[global_key].strip()
        try:
            return GlobalTimestamp(int(text), latest_when_none_matches)
        except ValueError:
            raise OptionError(f"Expected a single long value, got {text}") from None
    if by_timestamp_key in params:
        return SpecificTimestamps(_partition_longs(params[by_timestamp_key]), latest_when_none_matches)
    value = params.get(offsets_key)
    if value is None:
        return LatestOffsets() if default_latest else EarliestOffsets()
    value = value.strip()
    if value.lower() == "latest":
        return LatestOffsets()
    if value.lower() == "earliest":
        return EarliestOffsets()
    return SpecificOffsets(_partition_longs(value))


def _check_batch_limits(starting: OffsetSpec, ending: OffsetSpec) -> None:
    if isinstance(starting, LatestOffsets):
        raise OptionError("starting offset can't be latest for batch queries on Kafka")
    if isinstance(starting, SpecificOffsets):
        for tp, offset in starting.offsets.items():
            if offset == LATEST:
                raise OptionError(f"startingOffsets for {tp} can't be latest for batch queries on Kafka")
    if isinstance(ending, EarliestOffsets):
        raise OptionError("ending offset can't be earliest for batch queries on Kafka")
    if isinstance(ending, SpecificOffsets):
        for tp, offset in ending.offsets.items():
            if offset == EARLIEST:
                raise OptionError(f"ending offset for {tp} can't be earliest for batch queries on Kafka")
    # Spark's checkOffsetLimitValidity: the same partitions at both ends, and no start after its end.
    pairs: list[tuple[Mapping[TopicPartition, int], Mapping[TopicPartition, int], str]] = []
    if isinstance(starting, SpecificOffsets) and isinstance(ending, SpecificOffsets):
        pairs.append((starting.offsets, ending.offsets, "offset"))
    if isinstance(starting, SpecificTimestamps) and isinstance(ending, SpecificTimestamps):
        pairs.append((starting.timestamps, ending.timestamps, "timestamp"))
    for start, end, what in pairs:
        if set(start) != set(end):
            raise OptionError(
                f"Kafka data source in batch query requires the same topic partitions at the starting and "
                f"ending {what}s: {sorted(map(str, start))} != {sorted(map(str, end))}"
            )
        for tp, first in start.items():
            last = end[tp]
            if first > last and first >= 0 and last >= 0:
                raise OptionError(
                    f"The starting {what} {first} of {tp} is greater than its ending {what} {last}: the end "
                    "must not come before the start"
                )


# ---- JSON forms -------------------------------------------------------------------------------------------------


def _json(text: str, example: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise OptionError(f"Expected e.g. {example}, got {text}") from None


def _partitions_json(text: str) -> list[TopicPartition]:
    """{"topicA":[0,1],"topicB":[2,4]}"""
    example = '{"topicA":[0,1],"topicB":[0,1]}'
    value = _json(text, example)
    if not isinstance(value, dict):
        raise OptionError(f"Expected e.g. {example}, got {text}")
    out = []
    for topic, partitions in value.items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) for p in partitions):
            raise OptionError(f"Expected e.g. {example}, got {text}")
        out += [TopicPartition(topic, p) for p in partitions]
    return out


def _partition_longs(text: str) -> dict[TopicPartition, int]:
    """{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}"""
    example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
    value = _json(text, example)
    if not isinstance(value, dict):
        raise OptionError(f"Expected e.g. {example}, got {text}")
    out = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, dict):
            raise OptionError(f"Expected e.g. {example}, got {text}")
        for partition, number in partitions.items():
            if not isinstance(number, int) or isinstance(number, bool):
                raise OptionError(f"Expected e.g. {example}, got {text}")
            try:
                out[TopicPartition(topic, int(partition))] = number
            except ValueError:
                raise OptionError(f"Expected e.g. {example}, got {text}") from None
    return out


def offsets_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """The JSON form of partition offsets, Spark's own ({"topic": {"0": 23}}), sorted for stable comparison."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return out


def offsets_from_json(value: Mapping[str, Any]) -> dict[TopicPartition, int]:
    return {
        TopicPartition(topic, int(partition)): int(offset)
        for topic, partitions in value.items()
        if isinstance(partitions, dict)
        for partition, offset in partitions.items()
    }


# ---- scalars ----------------------------------------------------------------------------------------------------


def _bool(params: Mapping[str, str], name: str, *, default: bool) -> bool:
    value = params.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise OptionError(f"{name} must be 'true' or 'false', not '{value}'")
    return lowered == "true"


def _long(params: Mapping[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise OptionError(f"Option '{name}' must be a whole number, not '{value}'") from None


def _positive_int(params: Mapping[str, str], name: str, message: str) -> int | None:
    value = _long(params, name)
    if value is not None and value <= 0:
        raise OptionError(message)
    return value


TIME_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def time_string_ms(text: str) -> int:
    """Spark's Utils.timeStringAsMs: "15m", "10s", "100ms", a bare number being milliseconds."""
    match = re.fullmatch(r"\s*(-?\d+)\s*([a-z]*)\s*", text.lower())
    if match is None or match.group(2) not in ("", *TIME_UNITS_MS):
        raise OptionError(f"Invalid time string '{text}': expected e.g. 100ms, 10s, 15m, 2h, 1d")
    return int(match.group(1)) * TIME_UNITS_MS.get(match.group(2), 1)


# ---- kafka.* for librdkafka -------------------------------------------------------------------------------------

# Java client names librdkafka spells differently (a function converts the value where the unit differs too).
RENAMED: dict[str, tuple[str, Callable[[str], str]]] = {
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", str),
    "send.buffer.bytes": ("socket.send.buffer.bytes", str),
    "fetch.max.wait.ms": ("fetch.wait.max.ms", str),
    "max.request.size": ("message.max.bytes", str),
    "buffer.memory": ("queue.buffering.max.kbytes", lambda value: str(max(1, int(value) // 1024))),
}
# Java client settings with no meaning for librdkafka: accepted and left out, as the docs say.
IGNORED = frozenset(
    {
        "max.poll.records",  # the source reads in chunks of its own size
        "default.api.timeout.ms",
        "max.block.ms",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.recording.level",
        "metrics.sample.window.ms",
        "auto.include.jmx.reporter",
        "enable.metrics.push",
        "ssl.keystore.type",
        "ssl.truststore.type",
        "ssl.protocol",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.provider",
        "ssl.secure.random.implementation",
    }
)
# Java-only settings that would change what is read or written: refused, with what to use instead.
REFUSED = {
    "ssl.truststore.location": "librdkafka reads no Java truststore: give the CA certificates as a PEM file in "
    "kafka.ssl.ca.location",
    "ssl.truststore.password": "librdkafka reads no Java truststore: give the CA certificates as a PEM file in "
    "kafka.ssl.ca.location",
    "ssl.truststore.certificates": "give the CA certificates as a PEM file in kafka.ssl.ca.location",
    "ssl.keystore.certificate.chain": "give the client certificate in kafka.ssl.certificate.location (PEM)",
    "ssl.keystore.key": "give the client key in kafka.ssl.key.location (PEM)",
    "partitioner.class": "a Java class cannot run in librdkafka: choose librdkafka's kafka.partitioner "
    "(murmur2_random, the Java client's hash, is the default here)",
    "transactional.id": "the sink writes without transactions (as Spark's own Kafka sink does)",
    "sasl.login.callback.handler.class": "a Java class cannot run in librdkafka",
    "sasl.client.callback.handler.class": "a Java class cannot run in librdkafka",
}
JAAS = re.compile(
    r"^\s*org\.apache\.kafka\.common\.security\.(?:plain\.PlainLoginModule|scram\.ScramLoginModule)\s+required"
    r"(?P<body>.*?);?\s*$",
    re.DOTALL,
)
JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))""")


def client_config(kafka: Mapping[str, str]) -> dict[str, Any]:
    """The librdkafka configuration for the `kafka.*` options (their names without the prefix)."""
    config: dict[str, Any] = {}
    for name, value in kafka.items():
        if name in REFUSED:
            raise OptionError(
                f"Kafka option '{name}' is not supported by format(\"kbroker\"): {REFUSED[name]}"
            )
        if name in IGNORED:
            log.info("Kafka option '%s' has no librdkafka equivalent and is ignored", name)
            continue
        if name == "sasl.jaas.config":
            config.update(_jaas(value))
        elif name == "ssl.endpoint.identification.algorithm" and value == "":
            config[name] = "none"  # the Java client's "" (no hostname check) is librdkafka's "none"
        elif name in RENAMED:
            new_name, convert = RENAMED[name]
            try:
                config[new_name] = convert(value)
            except ValueError:
                raise OptionError(f"Kafka option '{name}' must be a number, not '{value}'") from None
        else:
            config[name] = value
    return config


def _jaas(value: str) -> dict[str, str]:
    """The user name and password of a PLAIN or SCRAM JAAS line, as librdkafka's sasl.username/sasl.password."""
    match = JAAS.match(value)
    if match is None:
        raise OptionError(
            "Kafka option 'sasl.jaas.config' is supported for PlainLoginModule and ScramLoginModule only; for "
            "other mechanisms give librdkafka's own settings (e.g. kafka.sasl.oauthbearer.*, "
            "kafka.sasl.kerberos.*)"
        )
    found = {
        key: quoted if quoted else bare for key, quoted, bare in JAAS_OPTION.findall(match.group("body"))
    }
    if "username" not in found or "password" not in found:
        raise OptionError('Kafka option \'sasl.jaas.config\' must give username="..." and password="..."')
    unescape = re.compile(r"\\(.)")
    return {
        "sasl.username": unescape.sub(r"\1", found["username"]),
        "sasl.password": unescape.sub(r"\1", found["password"]),
    }
