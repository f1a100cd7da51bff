"""Every stock client, every compression codec: create a topic with 8 partitions, produce, consume it all back.

For each (client, codec) the client creates the topic with its own admin API (kcat: confluent-kafka's), the
scenario waits until every partition's leader serves it (Target.wait_topic_ready), the client sends records spread
over the 8 partitions, reads every partition back with assign + seek to beginning, and asks for
the end offsets. The check: every record exactly once, offsets dense from 0 in each partition, records in send
order per partition, and key, value, headers and timestamp equal to what was sent (for what the client can
express: see each adapter's record_options).

Counts: 50,000 records for one codec per client (chosen so each codec gets one 50k run from some client)
and 10,000 for the other codecs; franz-go, the sixth client, runs 10,000 for every codec. 50k x 5 codecs x 6
clients would take most of half an hour on CI's 2 cores, where pure-Python kafka-python moves roughly 20k
records/s; 10k still makes many batches per partition. The targets are kbroker and Apache Kafka 3.9.2.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest

from compat.clients import CODECS, Client
from compat.clients.confluent import Confluent
from compat.clients.franz import Franz
from compat.clients.java import Java
from compat.clients.kafka_python import KafkaPython
from compat.clients.kafka_python_202 import KafkaPython202
from compat.clients.kcat import Kcat
from compat.records import check_round_trip, make_records
from compat.target import Target

PARTITIONS = 8
FULL_COUNT = 50_000
SMALL_COUNT = 10_000
# The codec that gets the 50k run, per client (None: 10k for every codec).
FULL_CODEC: dict[str, str | None] = {
    "kafka-python": "zstd",
    "kafka-python-2.0.2": "gzip",
    "confluent-kafka": "lz4",
    "kcat": "snappy",
    "java": "none",
    # Every codec has its 50k run above; franz-go adds its own batches and compressors at 10k, cheaply.
    "franz-go": None,
}


def make_client(name: str, request: pytest.FixtureRequest) -> Client:
    # Tool fixtures are requested only for the client in use, so a missing tool skips only its own tests.
    if name == "kafka-python":
        return KafkaPython()
    if name == "kafka-python-2.0.2":
        return KafkaPython202(request.getfixturevalue("kp202_python"))
    if name == "confluent-kafka":
        return Confluent()
    if name == "kcat":
        return Kcat(request.getfixturevalue("kcat_path"))
    if name == "java":
        return Java(request.getfixturevalue("java_harness"))
    if name == "franz-go":
        return Franz(request.getfixturevalue("franz_program"))
    raise ValueError(name)


# The reference is Apache Kafka 3.9.2, the release the codec targets; 4.3.1 answered every client and codec alike
# (2026-11) and this matrix is CI's second-largest cost, so it runs against one release.
@pytest.mark.slow
@pytest.mark.only_targets("kbroker", "kafka-3.9.2")
@pytest.mark.timeout(900)
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("client_name", list(FULL_CODEC))
def test_produce_and_consume_back(
    target: Target, client_name: str, codec: str, request: pytest.FixtureRequest
) -> None:
    client = make_client(client_name, request)
    reason = client.unsupported_codec_reason(codec)
    if reason is not None:
        pytest.skip(reason)
    count = FULL_COUNT if FULL_CODEC[client_name] == codec else SMALL_COUNT
    topic = target.topic(f"roundtrip-{client_name}-{codec}")

    client.create_topic(target.bootstrap, topic, PARTITIONS)
    target.wait_topic_ready(topic, PARTITIONS)
    records = client.prepare(make_records(count, PARTITIONS, **client.record_options()))
    started = time.time()
    acks = client.produce(target.bootstrap, topic, records, codec)
    finished = time.time()
    if acks is not None:
        assert len(acks) == count, f"{len(acks)} delivery reports for {count} records"
    consumed = client.consume(target.bootstrap, topic, PARTITIONS, count)

    check_round_trip(
        records,
        consumed,
        acks=acks,
        timestamp_range=(int(started * 1000) - 1, int(finished * 1000) + 1),
        expected_partitions=PARTITIONS,
    )
    per_partition = Counter(record.partition for record in consumed)
    assert client.end_offsets(target.bootstrap, topic, PARTITIONS) == {
        p: per_partition[p] for p in range(PARTITIONS)
    }
