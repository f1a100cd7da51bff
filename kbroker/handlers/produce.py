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

Transactions (docs/transactions.md): transactional batches need the request's transactional id (else the whole
request gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers); control batches are the coordinator's
(INVALID_RECORD from clients). KIP-890: before a batch may begin a transaction on a partition, the leader asks the
transaction coordinator whether the partition is in the producer's transaction. Answers as Kafka's: a partition not
in it gets TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v11), a fenced producer INVALID_PRODUCER_EPOCH, and a
coordinator that cannot tell now (moving, loading, completing the previous transaction) NOT_ENOUGH_REPLICAS, which
every producer retries.
"""

from __future__ import annotations

from kbroker.common import KafkaError, TopicPartition
from kbroker.handlers.registry import CloseConnection, Deferred, RequestContext, handles
from kbroker.log.producer_state import VerificationGuard
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
from protocol.records import (
    COMPRESSION_MASK,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_MASK,
    RecordBatch,
    read_attributes,
)

ZSTD = 4
Records = bytes | bytearray | memoryview
LEADER_HINTS_VERSION = 10


def _check_batch(records: bytes | memoryview | None, version: int) -> KafkaError | None:
    """The checks that depend on the request rather than the log; the log validates the batch itself (framing,
    magic, CRC, record count, size) when it appends."""
    if records is None or len(records) < RECORD_BATCH_OVERHEAD:
        return KafkaError(
            ErrorCode.INVALID_RECORD, "a produce request must carry one record batch per partition"
        )
    if read_attributes(records) & COMPRESSION_MASK == ZSTD and version < 7:
        return KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "zstd needs Produce v7 or later")
    return None


def _verification_error(code: ErrorCode, version: int) -> ErrorCode:
    """What a producer hears when the transaction coordinator did not confirm its partition (Kafka's mapping: the
    error codes old clients handle)."""
    if code is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code is ErrorCode.TRANSACTION_ABORTABLE and version < 11:
        return ErrorCode.INVALID_TXN_STATE
    if code in (
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    ):
        return ErrorCode.NOT_ENOUGH_REPLICAS
    return code


def _has_transactional_batch(req: ProduceRequest) -> bool:
    return any(
        data.records is not None
        and len(data.records) >= RECORD_BATCH_OVERHEAD
        and read_attributes(data.records) & TRANSACTIONAL_MASK
        for topic_data in req.topic_data
        for data in topic_data.partition_data
    )


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
    entries: list[tuple[TopicPartition, Records]] = []
    answered: list[PartitionProduceResponse] = []
    # Kafka's order: the transactional id (for the whole request: WRITE on it for transactional records), WRITE on
    # the topic, then unknown partitions, then the records, then acks.
    no_transactional_id = _has_transactional_batch(req) and (
        req.transactional_id is None or not ctx.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id)
    )
    for topic_data in req.topic_data:
        topic_response = TopicProduceResponse(name=topic_data.name)
        responses.append(topic_response)
        for data in topic_data.partition_data:
            response = PartitionProduceResponse(index=data.index, base_offset=-1)
            topic_response.partition_responses.append(response)
            error: KafkaError | None = None
            if no_transactional_id:
                # (Kafka answers the whole request with the error alone, no message.)
                error = KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
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
            # A view of the request's own buffer: the log stamps offsets into it and writes it as it is.
            entries.append((TopicPartition(topic_data.name, data.index), data.records))
            answered.append(response)

    now = services.clock.now_ms()
    guards: dict[TopicPartition, VerificationGuard] = {}
    if req.transactional_id is not None and entries:
        entries, answered, guards = await _verify(ctx, req.transactional_id, entries, answered, now)
    results = services.replicas.append_records(
        entries, required_acks=req.acks, now_ms=now, verification_guards=guards
    )
    if req.acks != -1 or not results:
        for response, result in zip(answered, results, strict=True):
            _answer(response, result)
    else:
        # The wait must not hold on to `req`: its records are views of the request's buffer (~1 MiB from most
        # clients), and a connection keeps up to MAX_PENDING_RESPONSES of these waits at once.
        timeout_ms = req.timeout_ms

        async def acknowledged() -> ProduceResponse:
            await services.replicas.wait_for_acks(results, timeout_ms)
            for response, result in zip(answered, results, strict=True):
                _answer(response, result)
            return _response(ctx, responses)

        # The batches are appended (in request order) already; only the acknowledgement waits (and the answers
        # are written once it is decided).
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


async def _verify(
    ctx: RequestContext,
    transactional_id: str,
    entries: list[tuple[TopicPartition, Records]],
    answered: list[PartitionProduceResponse],
    now_ms: int,
) -> tuple[
    list[tuple[TopicPartition, Records]],
    list[PartitionProduceResponse],
    dict[TopicPartition, VerificationGuard],
]:
    """KIP-890: the partitions where a batch would begin the producer's transaction are checked with its
    coordinator first; those it does not confirm are answered with the error and left out."""
    # (A control batch from a client is verified too, as Kafka does, before the log refuses it.)
    batches = [(tp, RecordBatch(records)) for tp, records in entries]
    transactional = [(tp, batch) for tp, batch in batches if batch.is_transactional]
    if not transactional:
        return entries, answered, {}
    first = transactional[0][1]
    producer_id, producer_epoch = first.producer_id, first.producer_epoch
    replicas = ctx.services.replicas
    guards = replicas.begin_transaction_verification(producer_id, [tp for tp, _ in transactional], now_ms)
    if not guards:
        return entries, answered, {}
    errors = await ctx.services.transactions.verify_for_produce(
        transactional_id, producer_id, producer_epoch, list(guards)
    )
    kept_entries, kept_answered = [], []
    for entry, response in zip(entries, answered, strict=True):
        error = errors.get(entry[0], ErrorCode.NONE)
        if error is ErrorCode.NONE:
            kept_entries.append(entry)
            kept_answered.append(response)
        else:
            response.error_code = _verification_error(error, ctx.api_version)
            response.error_message = f"the partition is not verified in the transaction: {error.name}"
    return kept_entries, kept_answered, guards
