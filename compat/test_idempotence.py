"""Idempotent producers under retries, the same against kbroker and Apache Kafka: every record once and in order.

The scenario runs on the target's sibling (compat/sibling.py), whose clients all connect through a FaultProxy that
spoils two of the producer's Produce responses (compat/proxy.py). The third reaches the producer as
NOT_ENOUGH_REPLICAS_AFTER_APPEND in every partition (a retriable error Kafka itself answers after appending); the
sixth is dropped and its connection closed. Either way the broker has appended those batches (and maybe the ones
pipelined behind them), the producer believes otherwise and sends them again with the same producer id, epoch and
sequence numbers. The broker must recognise them as duplicates and answer with the offsets it first gave them.
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
from protocol.records import iter_batches
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
