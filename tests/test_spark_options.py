"""format("kbroker")'s option rules and offset arithmetic (kbroker/spark/options.py, offsets.py), without a broker.

The expected values are Spark's own connector's: the same refusals for the same options, the same proportional
split of ranges under minPartitions, the same shares under maxOffsetsPerTrigger. The source on real Spark against
real brokers is compat/test_spark.py.
"""

from __future__ import annotations

import pytest

from kbroker.spark.offsets import OffsetRange, rate_limit, split_ranges
from kbroker.spark.options import (
    EARLIEST,
    LATEST,
    Assign,
    EarliestOffsets,
    GlobalTimestamp,
    LatestOffsets,
    OptionError,
    SpecificOffsets,
    SpecificTimestamps,
    Subscribe,
    SubscribePattern,
    TopicPartition,
    client_config,
    sink_options,
    source_options,
    time_string_ms,
)

pytestmark = pytest.mark.timeout(30)

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
T0, T1, T2 = (TopicPartition("t", p) for p in range(3))


def batch(**options: str) -> dict[str, str]:
    return {**BOOTSTRAP, "subscribe": "t", **options}


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        ({"subscribe": "t"}, False, "'kafka.bootstrap.servers' must be specified"),
        (BOOTSTRAP, False, "One of the following options must be specified"),
        (
            {**BOOTSTRAP, "subscribe": "t", "subscribePattern": "t.*"},
            False,
            "Only one of the following options",
        ),
        ({**BOOTSTRAP, "subscribe": " , "}, False, "No topics to subscribe to"),
        ({**BOOTSTRAP, "subscribePattern": "  "}, False, "Pattern to subscribe is empty"),
        ({**BOOTSTRAP, "subscribePattern": "("}, False, "not a valid regular expression"),
        ({**BOOTSTRAP, "assign": "t"}, False, "No topicpartitions to assign"),
        ({**BOOTSTRAP, "assign": '{"t": 0}'}, False, "Expected e.g."),
        (batch(**{"kafka.auto.offset.reset": "earliest"}), False, "'auto.offset.reset' is not supported"),
        (batch(**{"kafka.key.deserializer": "x"}), True, "'key.deserializer' is not supported"),
        (batch(**{"kafka.value.deserializer": "x"}), False, "'value.deserializer' is not supported"),
        (batch(**{"kafka.enable.auto.commit": "true"}), False, "'enable.auto.commit' is not supported"),
        (batch(**{"kafka.interceptor.classes": "x"}), True, "'interceptor.classes' is not supported"),
        (batch(startingOffsets="latest"), False, "starting offset can't be latest for batch queries"),
        (batch(startingOffsets='{"t": {"0": -1}}'), False, "startingOffsets for t-0 can't be latest"),
        (batch(endingOffsets="earliest"), False, "ending offset can't be earliest for batch queries"),
        (batch(endingOffsets='{"t": {"0": -2}}'), False, "ending offset for t-0 can't be earliest"),
        (batch(endingOffsets="latest"), True, "ending offset not valid in streaming queries"),
        (batch(endingTimestamp="5"), True, "ending timestamp not valid in streaming queries"),
        (batch(startingTimestamp="soon"), False, "Expected a single long value, got soon"),
        (batch(startingOffsets='{"t": {"0": "1"}}'), False, "Expected e.g."),
        (
            batch(startingOffsets='{"t": {"0": 1}}', endingOffsets='{"t": {"1": 2}}'),
            False,
            "the same topic partitions",
        ),
        (
            batch(startingOffsets='{"t": {"0": 5}}', endingOffsets='{"t": {"0": 2}}'),
            False,
            "must not come before",
        ),
        (batch(startingOffsetsByTimestampStrategy="first"), False, "must be 'error' or 'latest'"),
        (batch(minPartitions="0"), False, "minPartitions must be positive"),
        (batch(maxRecordsPerPartition="-1"), False, "maxRecordsPerPartition must be positive"),
        (
            batch(minOffsetsPerTrigger="10", maxOffsetsPerTrigger="5"),
            True,
            r"minOffsetPerTrigger\(10\) is higher",
        ),
        (batch(failOnDataLoss="yes"), False, "must be 'true' or 'false'"),
        (batch(maxTriggerDelay="soon"), True, "Invalid time string"),
        (batch(**{"kafka.ssl.truststore.location": "/x.jks"}), False, "kafka.ssl.ca.location"),
        (batch(**{"kafka.sasl.jaas.config": "com.example.Login required;"}), False, "PlainLoginModule"),
    ],
)
def test_refused_source_options(options: dict[str, str], streaming: bool, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        source_options(options, streaming=streaming)


def test_source_defaults_and_strategies() -> None:
    read = source_options(batch(), streaming=False)
    assert read.strategy == Subscribe(("t",))
    assert (read.starting, read.ending) == (EarliestOffsets(), LatestOffsets())
    assert read.fail_on_data_loss
    assert not read.include_headers
    assert read.group_id.startswith("spark-kafka-relation-")
    assert read.group_id.endswith("-executor")
    stream = source_options(batch(groupIdPrefix="mine"), streaming=True)
    assert stream.starting == LatestOffsets()
    assert stream.group_id.startswith("mine-")
    assert source_options(batch(**{"kafka.group.id": "g"}), streaming=True).group_id == "g"
    pattern = source_options({**BOOTSTRAP, "subscribePattern": " t.* "}, streaming=False)
    assert pattern.strategy == SubscribePattern("t.*")
    assign = source_options({**BOOTSTRAP, "assign": '{"t": [2, 0], "u": [1]}'}, streaming=False)
    assert assign.strategy == Assign((T0, T2, TopicPartition("u", 1)))
    many = source_options(
        {**BOOTSTRAP, "SUBSCRIBE": " t , u ,"}, streaming=False
    )  # names are case-insensitive
    assert many.strategy == Subscribe(("t", "u"))


def test_offset_forms_and_their_precedence() -> None:
    def starting(**options: str) -> object:
        return source_options(batch(**options), streaming=False).starting

    assert starting(startingOffsets=" EARLIEST ") == EarliestOffsets()
    assert starting(startingOffsets='{"t": {"0": 5, "1": -2}}') == SpecificOffsets({T0: 5, T1: EARLIEST})
    by_ts = '{"t": {"0": 100}}'
    assert starting(startingOffsetsByTimestamp=by_ts, startingOffsets="earliest") == SpecificTimestamps(
        {T0: 100}, latest_when_none_matches=False
    )
    # a global timestamp wins over both
    assert starting(
        startingTimestamp="7", startingOffsetsByTimestamp=by_ts, startingOffsetsByTimestampStrategy="LATEST"
    ) == GlobalTimestamp(7, latest_when_none_matches=True)
    ending = source_options(batch(endingOffsets='{"t": {"0": -1}}'), streaming=False).ending
    assert ending == SpecificOffsets({T0: LATEST})


def test_trigger_options() -> None:
    stream = source_options(batch(maxOffsetsPerTrigger="100", minOffsetsPerTrigger="10"), streaming=True)
    assert (stream.max_offsets_per_trigger, stream.min_offsets_per_trigger) == (100, 10)
    assert stream.max_trigger_delay_ms == 15 * 60_000
    assert [time_string_ms(text) for text in ("250", "250ms", "3s", "2m", "1h", "1d")] == [
        250,
        250,
        3000,
        120_000,
        3_600_000,
        86_400_000,
    ]


def test_kafka_options_for_librdkafka() -> None:
    config = client_config(
        {
            "bootstrap.servers": "b:9092",
            "receive.buffer.bytes": "65536",
            "fetch.max.wait.ms": "100",
            "buffer.memory": "33554432",
            "max.poll.records": "500",  # nothing to set in librdkafka
            "ssl.endpoint.identification.algorithm": "",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="alice" password="p\\"w;d";',
            "linger.ms": "5",  # the same name in both clients
        }
    )
    assert config == {
        "bootstrap.servers": "b:9092",
        "socket.receive.buffer.bytes": "65536",
        "fetch.wait.max.ms": "100",
        "queue.buffering.max.kbytes": "32768",
        "ssl.endpoint.identification.algorithm": "none",
        "sasl.username": "alice",
        "sasl.password": 'p"w;d',
        "linger.ms": "5",
    }
    with pytest.raises(OptionError, match="transactions"):
        client_config({"transactional.id": "x"})


def test_sink_options() -> None:
    assert sink_options({**BOOTSTRAP, "topic": " out "}).topic == "out"
    assert sink_options(BOOTSTRAP).topic is None
    with pytest.raises(OptionError, match=r"'value\.serializer' is not supported"):
        sink_options({**BOOTSTRAP, "kafka.value.serializer": "x"})


# ---- offset ranges ---------------------------------------------------------------------------------------------


def r(tp: TopicPartition, start: int, end: int) -> OffsetRange:
    return OffsetRange(tp, start, end)


def test_one_task_per_partition_unless_asked() -> None:
    ranges = [r(T0, 0, 100), r(T1, 5, 5), r(T2, EARLIEST, LATEST)]
    # the empty range goes; the unresolved one stays, for its task to resolve
    assert split_ranges(ranges, None, None) == [r(T0, 0, 100), r(T2, EARLIEST, LATEST)]
    assert split_ranges(ranges, 2, None) == [r(T0, 0, 100), r(T2, EARLIEST, LATEST)]


def test_min_partitions_cuts_large_ranges_in_proportion() -> None:
    # 3 partitions, 4 tasks wanted: the largest range is cut in two (Spark's KafkaOffsetRangeCalculator)
    ranges = [r(T0, 0, 10), r(T1, 0, 10), r(T2, 0, 20)]
    assert split_ranges(ranges, 4, None) == [r(T0, 0, 10), r(T1, 0, 10), r(T2, 0, 10), r(T2, 10, 20)]
    # a small range keeps its task and its records are left out of the others' proportion
    ranges = [r(T0, 0, 1), r(T1, 0, 99)]
    assert split_ranges(ranges, 4, None) == [r(T0, 0, 1), r(T1, 0, 33), r(T1, 33, 66), r(T1, 66, 99)]


def test_max_records_per_partition() -> None:
    assert split_ranges([r(T0, 10, 15), r(T1, 0, 2)], None, 2) == [
        r(T0, 10, 11),
        r(T0, 11, 13),
        r(T0, 13, 15),
        r(T1, 0, 2),
    ]


def test_rate_limit_shares_in_proportion() -> None:
    start = {T0: 0, T1: 0}
    assert rate_limit(6, start, {T0: 10, T1: 10}, {}) == {T0: 3, T1: 3}
    # a partition with little left still gets one record; nothing goes past the latest offset
    assert rate_limit(10, {T0: 0, T1: 0}, {T0: 1000, T1: 1}, {}) == {T0: 9, T1: 1}
    # a partition that is new since the last batch starts at its earliest offset
    assert rate_limit(4, {T0: 0}, {T0: 4, T1: 104}, {T1: 100}) == {T0: 2, T1: 102}
    # nothing new: the latest offsets as they are
    assert rate_limit(4, {T0: 7}, {T0: 7}, {}) == {T0: 7}
