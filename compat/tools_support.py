"""What the scenarios of Kafka's CLI tools (compat/test_tools_*.py) share: set-up through our own codec (no JVM
start; topics come from Target.create_topic), the target's facts the tools print (its node id, its kind), and parsing
of the tools' output.

Set-up goes over the wire rather than through a tool because every tool run costs a JVM start (~1 s here); the
tool under test is the only JVM a step starts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from compat.kafka.tools import ToolResult
from compat.target import Target
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from tests.test_groups_support import Wire


def is_kbroker(target: Target) -> bool:
    """kbroker started here, or an external broker (assumed to be a kbroker: `--bootstrap` is how a kbroker
    elsewhere is checked)."""
    return not target.name.startswith("kafka")


def node_id(target: Target) -> int:
    """The id of the (single) broker behind the target's bootstrap address."""
    with Wire(target.bootstrap.split(",")[0], client_id="compat-tools") as wire:
        metadata = wire.call(MetadataRequest(topics=[]), 12)
    ids: list[int] = [broker.node_id for broker in metadata.brokers]
    assert len(ids) == 1, f"the tool scenarios expect one broker, Metadata lists {ids}"
    return ids[0]


def produce(target: Target, topic: str, partition: int, batches: Sequence[bytes]) -> list[int]:
    """Send each batch in a Produce request of its own (acks=-1) to the single broker; their base offsets."""
    offsets = []
    with Wire(target.bootstrap.split(",")[0], client_id="compat-tools") as wire:
        for batch in batches:
            request = ProduceRequest(
                acks=-1,
                timeout_ms=30_000,
                topic_data=[
                    TopicProduceData(
                        name=topic, partition_data=[PartitionProduceData(index=partition, records=batch)]
                    )
                ],
            )
            answer = wire.call(request, 9).responses[0].partition_responses[0]
            assert answer.error_code == 0, f"Produce to {topic}-{partition}: {answer}"
            offsets.append(answer.base_offset)
    return offsets


# FindCoordinator / OffsetCommit errors while the group coordinator (and, on Kafka, __consumer_offsets) comes up
_COORDINATOR_STARTING = {
    14,
    15,
    16,
}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def commit_offset(target: Target, group: str, topic: str, partition: int, offset: int) -> None:
    """Commit `offset` for a group with no members (a "simple" commit: generation -1, no member id), as
    kafka-consumer-groups --reset-offsets does. Kafka creates __consumer_offsets on the first FindCoordinator, so
    this asks until the coordinator answers."""
    request = OffsetCommitRequest(
        group_id=group,
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                partitions=[OffsetCommitRequestPartition(partition_index=partition, committed_offset=offset)],
            )
        ],
    )
    deadline = time.monotonic() + 60
    with Wire(target.bootstrap.split(",")[0], client_id="compat-tools") as wire:
        while True:
            found = wire.call(FindCoordinatorRequest(key_type=0, coordinator_keys=[group]), 4).coordinators[0]
            error = found.error_code
            if error == 0:
                error = wire.call(request, 9).topics[0].partitions[0].error_code
                if error == 0:
                    return
            assert error in _COORDINATOR_STARTING, f"OffsetCommit of {group}: error {error}"
            assert time.monotonic() < deadline, f"OffsetCommit of {group}: error {error} for 60 s"
            time.sleep(0.2)


def leader_epoch(target: Target, topic: str, partition: int) -> int:
    with Wire(target.bootstrap.split(",")[0], client_id="compat-tools") as wire:
        metadata = wire.call(MetadataRequest(topics=[MetadataRequestTopic(name=topic)]), 12)
    (answer,) = metadata.topics
    epoch: int = next(p.leader_epoch for p in answer.partitions if p.partition_index == partition)
    return epoch


_EXCEPTION = re.compile(r"\b((?:[a-z]+\.)+[A-Z]\w*(?:Exception|Error))\b")


def exceptions(result: ToolResult) -> list[str]:
    """The simple names of the Java exceptions a tool printed (messages differ between brokers; the exception
    class is the error code the client got)."""
    return [name.rsplit(".", 1)[-1] for name in _EXCEPTION.findall(result.output)]


def table(text: str, columns: Sequence[str]) -> list[dict[str, str]]:
    """The rows of the whitespace-aligned table whose header is `columns` (kafka-consumer-groups prints them), as
    column -> value, up to the next blank line. Kafka 3.9's --reset-offsets prints its rows without line breaks, so
    the rows are cut from the run of values by the number of columns, not by lines."""
    header = re.search(r"\s+".join(re.escape(column) for column in columns), text)
    if header is None:
        raise AssertionError(f"no table with the columns {' '.join(columns)} in:\n{text}")
    body = re.split(r"\n\s*\n", text[header.end() :].lstrip("\n"), maxsplit=1)[0]
    values = body.split()
    assert len(values) % len(columns) == 0, f"a row of {' '.join(columns)} is incomplete:\n{body}"
    return [
        dict(zip(columns, values[i : i + len(columns)], strict=True))
        for i in range(0, len(values), len(columns))
    ]
