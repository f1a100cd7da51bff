"""The rules a new topic must pass, the same for a single node and a cluster (CreateTopics, auto-creation)."""

from __future__ import annotations

import re
from collections.abc import Mapping

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
