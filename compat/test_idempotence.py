"""Idempotent producers under retries, the same against kbroker and Apache Kafka: every record once and in order.

The scenario runs on the target's sibling (compat/sibling.py), whose clients all connect through a FaultProxy that
spoils two of the producer's Produce responses (compat/proxy.py). The third reaches the producer as
NOT_ENOUGH_REPLICAS_AFTER_APPEND in every partition (a retriable error Kafka itself answers after appending); the
sixth is dropped and its connection closed. Either way the broker has appended those batches (and maybe the ones
pipelined behind them), the producer believes otherwise and sends them again with the same producer id, epoch and
sequence numbers. The broker must recognise them as duplicates and answer with the offsets it first gave them.
The proxy's count pauses after the third until its batches have been retried and answered, so the sixth is never
that retry: a cut of the retry, with four new requests pipelined behind it, leaves the retried batch outside the
producer's last five on any broker, and the Java client then retries it until its delivery timeout (compat/proxy.py
says why).
kcat exits at once when its only broker connection drops ("All broker connections are down", on any broker), so it
gets the error response only.

Checked: both faults happened (the scenario waits for them, it does not hope for them); every record was delivered
and consumed exactly once, in send order per partition, at the offsets the delivery reports named; and, read raw
from the log with Fetch, every batch carries one producer id, epoch 0 and sequence numbers that run on without a gap
or repeat in each partition. Where the client shows producer ids (the Java Admin's and kafka-python 3's
describeProducers, kadm's DescribeProducers: DescribeProducers), the producer it lists is that one, with the last
sequence written.

kafka-python 2.0.2 has no idempotent producer (it arrived in kafka-python 2.1), so it is not among the clients here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest

from compat.clients import Client
from compat.proxy import CUT
from compat.records import check_round_trip, make_records
from compat.scenarios import make_ops
from compat.sibling import Sibling
from compat.test_roundtrip import make_client
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch, iter_batches
from tests.test_groups_support import Wire

pytestmark = pytest.mark.timeout(240)

PARTITIONS = 2
COUNT = 3_000
FAULTS = {3: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 6: CUT}
KCAT_FAULTS = {3: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND}
# Each client's own settings for an idempotent producer that makes many small Produce requests, so that there are
# requests in flight behind the one whose response is lost.
IDEMPOTENT: dict[str, dict[str, Any]] = {
    "java": {"batch.size": "4096"},  # idempotent and acks=all by default
    "kafka-python": {"batch_size": 4096},  # idempotent and acks=all by default
    "confluent-kafka": {"enable.idempotence": "true", "batch.size": "4096"},
    "kcat": {"enable.idempotence": "true", "batch.size": "4096"},
    "franz-go": {"producer.batch.max.bytes": "4096"},  # kgo: idempotent and acks=all by default
}
DESCRIBES_PRODUCERS = {"java", "kafka-python", "franz-go"}


@dataclass(frozen=True)
class Batch:
    partition: int
    base_offset: int
    records: int
    producer_id: int
    producer_epoch: int
    base_sequence: int


def read_batches(bootstrap: str, topic: str, partitions: int) -> list[Batch]:
    """Every batch of the topic, as the log holds it (Fetch v11 from offset 0 to the high watermark)."""
    found: list[Batch] = []
    next_offset = dict.fromkeys(range(partitions), 0)
    with Wire(bootstrap, client_id="compat-read-batches") as wire:
        while True:
            request = FetchRequest(
                max_wait_ms=0,
                topics=[
                    FetchTopic(
                        topic=topic,
                        partitions=[
                            FetchPartition(partition=p, fetch_offset=offset, partition_max_bytes=1 << 20)
                            for p, offset in next_offset.items()
                        ],
                    )
                ],
            )
            (answer,) = wire.call(request, 11).responses
            progressed = False
            for partition in answer.partitions:
                assert partition.error_code == 0, partition
                for batch in iter_batches(bytes(partition.records or b"")):
                    if batch.base_offset < next_offset[partition.partition_index]:
                        continue
                    found.append(
                        Batch(
                            partition.partition_index,
                            batch.base_offset,
                            batch.record_count,
                            batch.producer_id,
                            batch.producer_epoch,
                            batch.base_sequence,
                        )
                    )
                    next_offset[partition.partition_index] = batch.next_offset
                    progressed = True
            if not progressed:
                return found


@pytest.mark.parametrize("client_name", list(IDEMPOTENT))
def test_idempotent_producer_survives_a_lost_response(
    sibling: Sibling, client_name: str, request: pytest.FixtureRequest
) -> None:
    client: Client = make_client(client_name, request)
    bootstrap = sibling.target.bootstrap
    topic = sibling.target.topic(f"idempotence-{client_name}")
    client.create_topic(bootstrap, topic, PARTITIONS)
    sibling.target.wait_topic_ready(topic, PARTITIONS)
    records = client.prepare(make_records(COUNT, PARTITIONS, **client.record_options()))

    faults = sibling.proxy.spoil_produce_responses(KCAT_FAULTS if client_name == "kcat" else FAULTS)
    acks = client.produce(bootstrap, topic, records, "none", config=IDEMPOTENT[client_name])  # type: ignore[call-arg]
    happened = {nth: done.is_set() for nth, done in faults.items()}
    assert all(happened.values()), f"the producer finished before some faults could happen: {happened}"

    consumed = client.consume(bootstrap, topic, PARTITIONS, COUNT)
    check_round_trip(records, consumed, acks=acks, expected_partitions=PARTITIONS)

    batches = read_batches(bootstrap, topic, PARTITIONS)
    assert sum(b.records for b in batches) == COUNT
    assert len({(b.producer_id, b.producer_epoch) for b in batches}) == 1, {
        (b.producer_id, b.producer_epoch) for b in batches
    }
    producer_id, epoch = batches[0].producer_id, batches[0].producer_epoch
    assert producer_id >= 0
    assert epoch == 0
    last_sequence: dict[int, int] = defaultdict(lambda: -1)
    for batch in sorted(batches, key=lambda b: (b.partition, b.base_offset)):
        assert batch.base_sequence == last_sequence[batch.partition] + 1, batch
        last_sequence[batch.partition] = batch.base_sequence + batch.records - 1

    if client_name in DESCRIBES_PRODUCERS:
        ops = make_ops(client_name, request.getfixturevalue)
        described = ops.run(bootstrap, [("producers", topic, str(p)) for p in range(PARTITIONS)])
        assert [d.get("producers") for d in described] == [
            [{"producer_id": producer_id, "epoch": epoch, "last_sequence": last_sequence[p]}]
            for p in range(PARTITIONS)
        ], described


def _produce(topic: str, producer_id: int, base_sequence: int) -> ProduceRequest:
    records = [Record(i, 1_700_000_000_000 + i, b"k", b"v") for i in range(2)]
    batch = build_batch(records, producer_id=producer_id, producer_epoch=0, base_sequence=base_sequence)
    return ProduceRequest(
        acks=-1,
        timeout_ms=30_000,
        topic_data=[
            TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=bytes(batch))])
        ],
    )


@pytest.mark.only_targets("kbroker")
def test_the_proxy_counts_on_once_a_spoiled_batch_is_retried(sibling: Sibling) -> None:
    """The proxy pauses its count while a spoiled batch waits for its retry's answer: the cut then never falls on
    that retry (which the Java client cannot survive with any broker: see compat/proxy.py)."""
    topic = sibling.target.topic("proxy-count")
    sibling.target.create_topic(topic, 1)
    with Wire(sibling.target.bootstrap, client_id="compat-proxy-count") as wire:
        producer_id = wire.call(
            InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000), 4
        )
        assert producer_id.error_code == 0, producer_id
        pid = producer_id.producer_id
        faults = sibling.proxy.spoil_produce_responses(
            {1: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 2: CUT}
        )

        def answer(base_sequence: int) -> tuple[int, int]:
            (partition,) = wire.call(_produce(topic, pid, base_sequence), 9).responses[0].partition_responses
            return partition.error_code, partition.base_offset

        assert answer(0) == (ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, -1)
        assert faults[1].wait(10)
        # Not counted: the spoiled batch (sequence 0) has not been retried yet.
        assert answer(2) == (ErrorCode.NONE, 2)
        assert answer(0) == (ErrorCode.NONE, 0)  # the retry, answered with the batch's first offsets
        assert not faults[2].is_set()
        # The first request counted since: the second, so its response is dropped and the connection cut.
        with pytest.raises(ConnectionError):
            answer(4)
        assert faults[2].wait(10)  # set just after the proxy closed the connection
