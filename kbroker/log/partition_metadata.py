"""Kafka's partition.metadata: the id of the topic a partition's log belongs to (base64, as Kafka prints ids).

It tells a log from one left by an earlier topic of the same name (deleted and re-created while this node was away).
The log manager reads it with the log, in its opening threads (kbroker/log/log_manager.py); the replica manager
writes it and deletes a log whose topic id is not the topic's.
"""

from __future__ import annotations

import base64
import logging
import uuid
from pathlib import Path

from kbroker.log.files import replace_file

log = logging.getLogger(__name__)

PARTITION_METADATA_FILE = "partition.metadata"


def read_partition_metadata(directory: Path) -> uuid.UUID | None:
    try:
        text = (directory / PARTITION_METADATA_FILE).read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            value = value.strip()
            try:
                return uuid.UUID(bytes=base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
            except ValueError:
                break
    log.warning("unreadable %s in %s", PARTITION_METADATA_FILE, directory)
    return None


def write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    encoded = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    replace_file(
        directory / PARTITION_METADATA_FILE,
        f"version: 0\ntopic_id: {encoded}\n".encode(),
        fsync=True,
        fsync_dir=True,
    )
