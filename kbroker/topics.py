"""Topic metadata of a single-node broker: names, ids, partition counts and explicit configs, persisted as JSON.

Written atomically (temp file, fsync, rename, fsync of the directory) so that a crash leaves either the old or the
new list, never a torn one. In a cluster the same facts live in etcd (kbroker/cluster/).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kbroker.log.files import replace_file
from protocol.errors import ErrorCode

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = frozenset({"__consumer_offsets"})


@dataclass(slots=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    num_partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class TopicError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def validate_topic_name(name: str) -> None:
    """Kafka's rules (Topic.validate): legal characters, length, not '.' or '..'."""
    if not name:
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise TopicError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters",
        )
    if not _LEGAL.fullmatch(name):
        raise TopicError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name {name!r} is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
        )


def _collision_key(name: str) -> str:
    # Kafka's metric names map '.' to '_', so two topics differing only there collide.
    return name.replace(".", "_")


class TopicRegistry:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "topics.json"
        self.topics: dict[str, TopicMetadata] = {}
        self.by_id: dict[uuid.UUID, TopicMetadata] = {}
        if self.path.exists():
            for raw in json.loads(self.path.read_text())["topics"]:
                t = TopicMetadata(
                    name=raw["name"],
                    topic_id=uuid.UUID(raw["topic_id"]),
                    num_partitions=raw["num_partitions"],
                    replication_factor=raw["replication_factor"],
                    configs=dict(raw["configs"]),
                )
                self._index(t)

    def _index(self, t: TopicMetadata) -> None:
        self.topics[t.name] = t
        self.by_id[t.topic_id] = t

    def get(self, name: str) -> TopicMetadata | None:
        return self.topics.get(name)

    def check_new(self, name: str) -> None:
        validate_topic_name(name)
        if name in self.topics:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        key = _collision_key(name)
        for other in self.topics:
            if _collision_key(other) == key:
                raise TopicError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {other}",
                )

    def add(self, topic: TopicMetadata) -> None:
        self.check_new(topic.name)
        self._index(topic)
        self.save()

    def remove(self, name: str) -> TopicMetadata | None:
        t = self.topics.pop(name, None)
        if t is not None:
            del self.by_id[t.topic_id]
            self.save()
        return t

    def update(self, topic: TopicMetadata) -> None:
        self._index(topic)
        self.save()

    def save(self) -> None:
        doc = {
            "version": 1,
            "topics": [
                {
                    "name": t.name,
                    "topic_id": str(t.topic_id),
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                    "configs": t.configs,
                }
                for t in self.topics.values()
            ],
        }
        write_file_atomically(self.path, json.dumps(doc, indent=1).encode())


def write_file_atomically(path: Path, data: bytes) -> None:
    """Atomic and durable: temporary file, fsync, rename, fsync of the directory."""
    replace_file(path, data, fsync=True, fsync_dir=True)
