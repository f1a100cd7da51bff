"""High watermark checkpoint: `replication-offset-checkpoint` in the data directory, Kafka's file and format.

A node restarts with each partition's high watermark as last checkpointed, not at its log end: records
above the high watermark may never have been replicated, so a node that is elected leader right after a restart
must not show them to consumers before its followers have them. The checkpoint is written every few seconds and at
a clean shutdown; a stale one only makes the high watermark start lower, and it catches up as followers fetch.

Format: a version line (0), a count line, then one "topic partition offset" line per partition.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from kbroker.common import TopicPartition
from kbroker.log.files import replace_file

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "replication-offset-checkpoint"
_VERSION = 0


def read_checkpoint(data_dir: Path) -> dict[TopicPartition, int]:
    """The checkpointed high watermarks; empty if there is no file (a corrupt one is logged and ignored)."""
    path = data_dir / CHECKPOINT_FILE
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    try:
        if int(lines[0]) != _VERSION:
            raise ValueError(f"unknown version {lines[0]!r}")
        count = int(lines[1])
        out: dict[TopicPartition, int] = {}
        for line in lines[2 : 2 + count]:
            topic, partition, offset = line.split()
            out[TopicPartition(topic, int(partition))] = int(offset)
        if len(out) != count:
            raise ValueError(f"{len(out)} entries, header says {count}")
        return out
    except (ValueError, IndexError) as exc:
        # Only ever replaced whole, so this is disk damage; starting every high watermark low is safe.
        log.warning("ignoring corrupt %s: %s", path, exc)
        return {}


def write_checkpoint(data_dir: Path, high_watermarks: Mapping[TopicPartition, int]) -> None:
    lines = [str(_VERSION), str(len(high_watermarks))]
    lines += [f"{tp.topic} {tp.partition} {offset}" for tp, offset in sorted(high_watermarks.items())]
    replace_file(data_dir / CHECKPOINT_FILE, ("\n".join(lines) + "\n").encode(), fsync=True, fsync_dir=True)
