"""`meta.properties` in the data directory: the cluster id and node id this directory belongs to (Kafka's file).

A single node makes up its cluster id the first time it starts; a cluster node adopts the cluster's (the first node to
reach etcd writes its own there) and rewrites the file, so the id survives restarts either way.
"""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

from kbroker.log.files import replace_file

META_PROPERTIES = "meta.properties"


def new_cluster_id() -> str:
    """A random id, spelled as Kafka spells ids (URL-safe base64 of 16 bytes, no padding)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def read_or_create_cluster_id(data_dir: Path, node_id: int) -> str:
    path = data_dir / META_PROPERTIES
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "cluster.id":
                return value.strip()
    cluster_id = new_cluster_id()
    write_meta_properties(data_dir, cluster_id, node_id)
    return cluster_id


def write_meta_properties(data_dir: Path, cluster_id: str, node_id: int) -> None:
    replace_file(
        data_dir / META_PROPERTIES,
        f"version=1\ncluster.id={cluster_id}\nnode.id={node_id}\n".encode(),
        fsync=True,
        fsync_dir=True,
    )
