"""Metadata's answer for one topic: its partitions with leader, leader epoch, replicas, ISR and offline replicas.

A full Metadata at 10,000 partitions would build 10,000 partition structs and their lists for every request, and
encode them again: most of its time, and allocation that grows with the partitions (and so the garbage collector's
work). `TopicDescriptions` keeps each topic's answer encoded per API version, and uses it again while the topic is
unchanged: while the image holds the same TopicMetadata, the same partition-state mapping for it (images never
mutate their mappings: a change to a topic's partitions gives it a new one, kbroker/metadata/image.py) and the same
set of live brokers (which decides leaders and offline replicas). Any leader, epoch, ISR, replica, partition count
or topic change is a new object there, so a cached answer is never older than the image the request sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from kbroker.metadata.image import MetadataImage, PartitionState, TopicMetadata
from protocol.codec import Encoded, encode_struct
from protocol.errors import ErrorCode
from protocol.messages.metadata_response import (
    MetadataResponse,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

_NO_STATES: dict[int, PartitionState] = {}


def describe_topic(image: MetadataImage, topic: TopicMetadata) -> MetadataResponseTopic:
    partitions = []
    states = image.partitions.get(topic.name, _NO_STATES)
    brokers = image.brokers
    for p in range(topic.num_partitions):
        state = states.get(p)
        if state is None:
            partitions.append(
                MetadataResponsePartition(
                    error_code=ErrorCode.LEADER_NOT_AVAILABLE, partition_index=p, leader_id=-1
                )
            )
            continue
        # A leader that is not a live broker cannot be reached: clients wait and ask again (image.live_leader).
        leader = state.leader if state.leader in brokers else -1
        partitions.append(
            MetadataResponsePartition(
                error_code=ErrorCode.NONE if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=p,
                leader_id=leader,
                leader_epoch=state.leader_epoch,
                replica_nodes=list(state.replicas),
                isr_nodes=list(state.isr),
                offline_replicas=[r for r in state.replicas if r not in brokers],
            )
        )
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=partitions,
    )


@dataclass(slots=True)
class _Entry:
    topic: TopicMetadata
    states: object
    live_brokers: frozenset[int]
    encoded: dict[int, Encoded]
    """By API version."""


class TopicDescriptions:
    """Each topic's Metadata answer, encoded once per version while the topic's state is unchanged."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._image: MetadataImage | None = None
        self._live_brokers: frozenset[int] = frozenset()

    def encoded(self, image: MetadataImage, topic: TopicMetadata, version: int) -> Encoded:
        """The topic as `describe_topic` answers it, encoded for a MetadataResponse at `version`."""
        if image is not self._image:
            self._image = image
            self._live_brokers = frozenset(image.brokers)
            if len(self._entries) > len(image.topics):
                # forget deleted topics
                self._entries = {n: e for n, e in self._entries.items() if n in image.topics}
        states = image.partitions.get(topic.name, _NO_STATES)
        entry = self._entries.get(topic.name)
        if (
            entry is None
            or entry.topic is not topic
            or entry.states is not states
            or entry.live_brokers != self._live_brokers
        ):
            entry = _Entry(topic, states, self._live_brokers, {})
            self._entries[topic.name] = entry
        found = entry.encoded.get(version)
        if found is None:
            found = encode_struct(MetadataResponse, version, describe_topic(image, topic))
            entry.encoded[version] = found
        return found
