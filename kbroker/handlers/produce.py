"""Produce (0), v3-11 (v3 is Kafka 4.0's minimum: magic v2 batches only).

Each partition's records must be exactly one magic-v2 batch with a valid CRC (CORRUPT_MESSAGE) and a consistent
record count (INVALID_RECORD), no larger than `max.message.bytes` (MESSAGE_TOO_LARGE); zstd needs v7+
(UNSUPPORTED_COMPRESSION_TYPE). The log assigns offsets, stamps the leader epoch and applies LogAppendTime, and checks
idempotent producers' sequences (a retried batch among the last five gets its original offsets back).

Acknowledgement (docs/durability.md): acks=0 gets no response at all; acks=1 answers once the batch is written to the
operating system; acks=-1 answers once the batch is fsynced (group commit) and, in a cluster, replicated to every
in-sync replica. An fsync failure fails the request with KAFKA_STORAGE_ERROR and takes the partition offline.
Not implemented: transactions (a transactional batch gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED, see docs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import trio

from kbroker.broker import AppendError, now_ms
from kbroker.handlers.registry import CloseConnection, Deferred, RequestContext, handles
from protocol.errors import ErrorCode
from protocol.messages.produce_request import ProduceRequest
from protocol.messages.produce_response import PartitionProduceResponse, ProduceResponse, TopicProduceResponse
from protocol.records import RECORD_BATCH_OVERHEAD, RecordBatch

log = logging.getLogger(__name__)

ZSTD = 4


@dataclass(slots=True)
class _Pending:
    response: PartitionProduceResponse
    topic: str
    partition: int
    last_offset: int


def _check_batch(records: bytes | memoryview | None, version: int) -> tuple[ErrorCode, str | None]:
    """The checks that depend on the request rather than the log; the log validates the batch itself (framing,
    magic, CRC, record count, size) when it appends."""
    if records is None or len(records) < RECORD_BATCH_OVERHEAD:
        return ErrorCode.INVALID_RECORD, "a produce request must carry one record batch per partition"
    batch = RecordBatch(records)
    if batch.compression == ZSTD and version < 7:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "zstd needs Produce v7 or later"
    if batch.is_transactional or batch.is_control:
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactions are not supported by kbroker"
    return ErrorCode.NONE, None


@handles(0, 3, 11)
async def handle(ctx: RequestContext, req: ProduceRequest) -> ProduceResponse | Deferred | None:
    broker = ctx.broker
    version = ctx.api_version
    responses: list[TopicProduceResponse] = []
    pending: list[_Pending] = []
    bad_acks = req.acks not in (-1, 0, 1)
    now = now_ms()
    for topic_data in req.topic_data:
        topic_resp = TopicProduceResponse(name=topic_data.name)
        responses.append(topic_resp)
        topic = broker.topics.get(topic_data.name)
        for pdata in topic_data.partition_data:
            presp = PartitionProduceResponse(index=pdata.index, base_offset=-1)
            topic_resp.partition_responses.append(presp)
            if bad_acks:
                presp.error_code = ErrorCode.INVALID_REQUIRED_ACKS
                continue
            if req.transactional_id is not None:
                presp.error_code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                presp.error_message = "transactions are not supported by kbroker"
                continue
            if topic is None or not 0 <= pdata.index < topic.num_partitions:
                presp.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            if topic.is_internal:
                presp.error_code = ErrorCode.INVALID_TOPIC_EXCEPTION
                presp.error_message = f"cannot produce to the internal topic {topic.name}"
                continue
            code, message = _check_batch(pdata.records, version)
            if code != ErrorCode.NONE:
                presp.error_code = code
                presp.error_message = message
                continue
            assert pdata.records is not None
            try:
                info = broker.append_records(topic.name, pdata.index, bytearray(pdata.records), req.acks, now)
            except AppendError as exc:
                presp.error_code = exc.code
                presp.error_message = exc.message
                continue
            presp.base_offset = info.base_offset
            presp.log_append_time_ms = info.log_append_time
            presp.log_start_offset = info.log_start_offset
            # A duplicate (an idempotent retry) waits too: its first attempt may still be waiting for its fsync.
            pending.append(_Pending(presp, topic.name, pdata.index, info.last_offset))

    if req.acks == -1 and pending:

        async def wait_one(p: _Pending) -> None:
            try:
                await broker.wait_acks_all(p.topic, p.partition, p.last_offset, req.timeout_ms)
            except AppendError as exc:
                p.response.error_code = exc.code
                p.response.error_message = exc.message
                p.response.base_offset = -1

        async def acknowledged() -> ProduceResponse:
            async with trio.open_nursery() as nursery:
                for p in pending:
                    nursery.start_soon(wait_one, p)
            return ProduceResponse(responses=responses)

        # The batches are appended (in request order) already; only the acknowledgement waits.
        return Deferred(acknowledged)
    if req.acks == 0:
        if any(p.error_code for t in responses for p in t.partition_responses):
            # acks=0 producers never read a response: Kafka closes the connection so they notice and refresh metadata
            raise CloseConnection("acks=0 produce failed")
        return None
    return ProduceResponse(responses=responses)
