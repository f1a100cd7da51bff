"""The rules a new topic (CreateTopics, auto-creation) and new partitions (CreatePartitions) must pass, the same for a
single node and a cluster."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from kbroker.common import CodedError
from kbroker.config import BrokerConfig
from kbroker.metadata.image import MetadataImage
from protocol.errors import ErrorCode

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


class InvalidTopic(CodedError):
    error_code = ErrorCode.INVALID_TOPIC_EXCEPTION


class TopicAlreadyExists(CodedError):
    error_code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitions(CodedError):
    error_code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactor(CodedError):
    error_code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidReplicaAssignment(CodedError):
    error_code = ErrorCode.INVALID_REPLICA_ASSIGNMENT


class UnknownTopic(CodedError):
    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


def validate_topic_name(name: str) -> None:
    """Kafka's rules for topic names (they also keep a name safe as an etcd key segment and a directory name)."""
    if not name:
        raise InvalidTopic("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopic('Topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopic(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters"
        )
    if not _LEGAL_TOPIC_NAME.fullmatch(name):
        raise InvalidTopic(
            f"Topic name {name!r} is illegal, it contains a character other than ASCII alphanumerics, '.', '_' "
            "and '-'"
        )


def _collision_key(name: str) -> str:
    # Kafka's metric names map '.' to '_', so two topics that differ only there collide.
    return name.replace(".", "_")


def check_new_topic(
    image: MetadataImage,
    config: BrokerConfig,
    name: str,
    num_partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
) -> None:
    """Raise KafkaError unless a topic with these settings could be created now, with Kafka's codes and messages."""
    validate_topic_name(name)
    if name in image.topics:
        raise TopicAlreadyExists(f"Topic '{name}' already exists.")
    key = _collision_key(name)
    for other in image.topics:
        if _collision_key(other) == key:
            raise InvalidTopic(f"Topic '{name}' collides with existing topic: {other}")
    if num_partitions <= 0:
        raise InvalidPartitions("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactor("Replication factor must be larger than 0.")
    live = len(image.brokers)
    if replication_factor > live:
        raise InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: {live}."
        )
    config.validate_topic_configs(configs)


def validate_replicas(replicas: Sequence[int], brokers: Collection[int], what: str) -> None:
    """INVALID_REPLICA_ASSIGNMENT for an empty list, a duplicate or a broker that is not registered, as Kafka's
    controller checks a manual assignment."""
    if not replicas:
        raise InvalidReplicaAssignment(
            f"The manual partition assignment of {what} includes an empty replica list."
        )
    if len(set(replicas)) != len(replicas):
        raise InvalidReplicaAssignment(
            f"The manual partition assignment of {what} includes a duplicate replica: {list(replicas)}."
        )
    for broker in replicas:
        if broker not in brokers:
            raise InvalidReplicaAssignment(
                f"The manual partition assignment of {what} includes broker {broker}, but no such broker is "
                "registered."
            )


def check_new_partitions(
    image: MetadataImage, name: str, total: int, assignments: Sequence[Sequence[int]] | None
) -> dict[int, tuple[int, ...]]:
    """Raise KafkaError unless topic `name` can grow to `total` partitions now (CreatePartitions); the explicit
    assignment of each new partition (empty without `assignments`)."""
    topic = image.topics.get(name)
    if topic is None:
        raise UnknownTopic()  # with no message, as Kafka
    current = topic.num_partitions
    if total < current:
        raise InvalidPartitions(
            f"The topic {name} currently has {current} partition(s); {total} would not be an increase."
        )
    if total == current:
        raise InvalidPartitions(f"Topic already has {current} partition(s).")
    new = range(current, total)
    if assignments is None:
        live = len(image.brokers)
        if topic.replication_factor > live:
            raise InvalidReplicationFactor(
                f"Unable to replicate the partition {topic.replication_factor} time(s): only {live} broker(s) "
                "are registered."
            )
        return {}
    if len(assignments) != len(new):
        raise InvalidReplicaAssignment(
            f"Attempted to add {len(new)} additional partition(s), but only {len(assignments)} assignment(s) "
            "were specified."
        )
    placed: dict[int, tuple[int, ...]] = {}
    for partition, replicas in zip(new, assignments, strict=True):
        validate_replicas(replicas, image.brokers, f"partition {partition}")
        if len(replicas) != topic.replication_factor:
            raise InvalidReplicaAssignment(
                f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this "
                f"is not consistent with previous partitions, which have {topic.replication_factor} replica(s)."
            )
        placed[partition] = tuple(replicas)
    return placed
