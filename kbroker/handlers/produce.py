"""Produce (0), v3-11 (v3 is Kafka 4.0's minimum: magic v2 batches only).

Each partition's records must be exactly one magic-v2 batch with a valid CRC (CORRUPT_MESSAGE) and a consistent
record count (INVALID_RECORD), no larger than `max.message.bytes` (MESSAGE_TOO_LARGE); zstd needs v7+
(UNSUPPORTED_COMPRESSION_TYPE); acks must be -1, 0 or 1 (INVALID_REQUIRED_ACKS); the internal topic
`__consumer_offsets` is not for clients (INVALID_TOPIC_EXCEPTION). The log assigns offsets, stamps the leader epoch and
applies LogAppendTime, and checks idempotent producers' sequences (a retried batch among the last five gets its
original offsets back).

Acknowledgement (docs/durability.md): acks=0 gets no response at all; acks=1 answers once the batch is written to the
operating system; acks=-1 is refused before writing when the ISR is smaller than `min.insync.replicas`
(NOT_ENOUGH_REPLICAS), and answers once the batch is fsynced here and replicated to every in-sync replica
(REQUEST_TIMED_OUT after the request's timeout). An fsync failure fails the request with KAFKA_STORAGE_ERROR and
takes the partition offline.
From v10 (KIP-951) a partition refused with NOT_LEADER_OR_FOLLOWER names its current leader and epoch, and the
response lists that leader's endpoint, as Kafka does.
Not implemented: transactions (a transactional batch gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED, see docs).
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import CloseConnection, Deferred, RequestContext, handles
from kbroker.replication.replica_manager import ProduceResult
from kbroker.security.acl import AclOperation as Op
from kbroker.security.acl import ResourceType as R
from protocol.errors import ErrorCode
from protocol.messages.produce_request import ProduceRequest
from protocol.messages.produce_response import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from protocol.records import RECORD_BATCH_OVERHEAD, RecordBatch

ZSTD = 4
LEADER_HINTS_VERSION = 10
TRANSACTIONS_UNSUPPORTED = "transactions are not supported by kbroker"


def _check_batch(records: bytes | memoryview | None, version: int) -> KafkaError | None:
    """The checks that depend on the request rather than the log; the log validates the batch itself (framing,
    magic, CRC, record count, size) when it appends."""
    if records is None or len(records) < RECORD_BATCH_OVERHEAD:
        return KafkaError(
            ErrorCode.INVALID_RECORD, "a produce request must carry one record batch per partition"
        )
    batch = RecordBatch(records)
    if batch.compression == ZSTD and version < 7:
        return KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "zstd needs Produce v7 or later")
    if batch.is_transactional or batch.is_control:
        return KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TRANSACTIONS_UNSUPPORTED)
    return None


def _answer(response: PartitionProduceResponse, result: ProduceResult) -> None:
    if result.error is not None:
        response.error_code = result.error.code
        # As Kafka: only records that fail validation are explained, with the log start offset (KIP-467); a batch
        # too large or corrupt is not.
        response.error_message = result.error.message if result.invalid_records else None
        response.log_start_offset = result.log_start_offset
        response.base_offset = -1
        return
    assert result.info is not None
    response.error_code = ErrorCode.NONE
    response.base_offset = result.info.base_offset
    response.log_append_time_ms = result.info.log_append_time
    response.log_start_offset = result.info.log_start_offset


@handles(ProduceRequest, 3, 11)
async def handle(
    ctx: RequestContext, req: ProduceRequest
) -> ProduceResponse | Deferred[ProduceResponse] | None:
    services = ctx.services
    image = services.metadata.image()
    authorized = {t.name for t in req.topic_data if ctx.authorize(Op.WRITE, R.TOPIC, t.name)}
    responses: list[TopicProduceResponse] = []
    entries: list[tuple[TopicPartition, bytearray]] = []
    answered: list[PartitionProduceResponse] = []
    for topic_data in req.topic_data:
        topic_response = TopicProduceResponse(name=topic_data.name)
        responses.append(topic_response)
        for data in topic_data.partition_data:
            response = PartitionProduceResponse(index=data.index, base_offset=-1)
            topic_response.partition_responses.append(response)
            # Kafka's order: the transactional id, WRITE on the topic, then unknown partitions, then the records,
            # then acks.
            error: KafkaError | None = None
            if req.transactional_id is not None:
                error = KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TRANSACTIONS_UNSUPPORTED)
            elif topic_data.name not in authorized:
                error = KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif not image.has_partition(topic_data.name, data.index):
                error = KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                error = _check_batch(data.records, ctx.api_version)
            if error is None and req.acks not in (-1, 0, 1):
                error = KafkaError(ErrorCode.INVALID_REQUIRED_ACKS)
            if error is not None:
                response.error_code, response.error_message = error.code, error.message
                continue
            assert data.records is not None
            entries.append((TopicPartition(topic_data.name, data.index), bytearray(data.records)))
            answered.append(response)

    now = services.clock.now_ms()
    results = services.replicas.append_records(entries, required_acks=req.acks, now_ms=now)
    for response, result in zip(answered, results, strict=True):
        _answer(response, result)

    if req.acks == -1 and results:

        async def acknowledged() -> ProduceResponse:
            await services.replicas.wait_for_acks(results, req.timeout_ms)
            for response, result in zip(answered, results, strict=True):
                _answer(response, result)
            return _response(ctx, responses)

        # The batches are appended (in request order) already; only the acknowledgement waits.
        return Deferred(acknowledged)
    if req.acks == 0:
        if any(p.error_code for t in responses for p in t.partition_responses):
            # acks=0 producers never read a response: Kafka closes the connection so they notice and refresh metadata
            raise CloseConnection("acks=0 produce failed")
        return None
    return _response(ctx, responses)


def _response(ctx: RequestContext, responses: list[TopicProduceResponse]) -> ProduceResponse:
    """The answer, with KIP-951's hints from v10: each partition refused with NOT_LEADER_OR_FOLLOWER names the leader
    as this node knows it now, and the leaders' endpoints are listed."""
    endpoints: dict[int, NodeEndpoint] = {}
    if ctx.api_version >= LEADER_HINTS_VERSION:
        image = ctx.services.metadata.image()
        for topic_response in responses:
            for response in topic_response.partition_responses:
                if response.error_code != ErrorCode.NOT_LEADER_OR_FOLLOWER:
                    continue
                leader, epoch, broker = image.current_leader(topic_response.name, response.index)
                response.current_leader = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                address = broker.endpoint(ctx.listener) if broker is not None else None
                if broker is not None and address is not None:
                    # the leader's address on the listener this client uses
                    endpoints[broker.node_id] = NodeEndpoint(
                        node_id=broker.node_id, host=address[0], port=address[1], rack=broker.rack
                    )
    return ProduceResponse(responses=responses, node_endpoints=[endpoints[n] for n in sorted(endpoints)])
