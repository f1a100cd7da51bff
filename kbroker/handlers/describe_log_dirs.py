"""DescribeLogDirs (35), v1-4 (v1 is Kafka 4.0's minimum).

kbroker keeps every partition in one data directory (log.dirs names exactly one), so the answer has one log
directory: its absolute path, each partition log in it (all of them, or those of the topics asked for) with its size
in bytes and how far its log end is below the high watermark, and (v4) the file system's total and usable bytes.
There are never future logs (AlterReplicaLogDirs moves replicas between directories; there is only one). Without
DESCRIBE on the cluster the answer lists nothing (v3+: CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import os

from kbroker.handlers.registry import RequestContext, handles
from kbroker.security.acl import AclOperation as Op
from protocol.errors import ErrorCode
from protocol.messages.describe_log_dirs_request import DescribeLogDirsRequest
from protocol.messages.describe_log_dirs_response import (
    DescribeLogDirsPartition,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)


@handles(DescribeLogDirsRequest, 1, 4)
async def handle(ctx: RequestContext, req: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    if not ctx.authorize_cluster(Op.DESCRIBE):
        # As Kafka: nothing described (v3+ also says why).
        return DescribeLogDirsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED if ctx.api_version >= 3 else 0
        )
    wanted = None if req.topics is None else {t.topic: set(t.partitions) for t in req.topics}
    log_dir = ctx.services.config.data_dir.resolve()
    result = DescribeLogDirsResult(log_dir=str(log_dir))
    by_topic: dict[str, DescribeLogDirsTopic] = {}
    for entry in sorted(ctx.services.replicas.log_dir_partitions(wanted), key=lambda e: e.tp):
        topic = by_topic.get(entry.tp.topic)
        if topic is None:
            topic = by_topic[entry.tp.topic] = DescribeLogDirsTopic(name=entry.tp.topic)
            result.topics.append(topic)
        topic.partitions.append(
            DescribeLogDirsPartition(
                partition_index=entry.tp.partition, partition_size=entry.size, offset_lag=entry.offset_lag
            )
        )
    if ctx.api_version >= 4:
        try:
            stats = os.statvfs(log_dir)
            result.total_bytes = stats.f_blocks * stats.f_frsize
            result.usable_bytes = stats.f_bavail * stats.f_frsize
        except OSError:
            pass  # unknown: -1, as the spec allows
    return DescribeLogDirsResponse(results=[result])
