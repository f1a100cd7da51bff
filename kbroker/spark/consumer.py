"""One Spark task's read: the records [from, until) of one partition, as Arrow record batches of Spark's Kafka schema.

A confluent-kafka Consumer assigned to the partition (no group membership, no commits) fetches in librdkafka's
threads; this loop only copies each message's fields into column lists and hands Arrow a chunk at a time, so no
Python row object is ever made. Spark's Kafka connector's rules for lost data apply (KafkaDataConsumer):

- the start is below the log start offset (retention deleted it): OFFSET_OUT_OF_RANGE, which librdkafka reports
  because `auto.offset.reset` is `error` here. failOnDataLoss=true fails the task saying which records are gone;
  false logs a warning and goes on from the log start offset (or ends the range if the log starts past it);
- a jump in offsets where the log start moved past the records skipped is loss too; a jump within the log (a
  compacted topic, a transaction marker) is not;
- the log ends before `until` (truncated since the range was planned): loss, as above.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, Message
from confluent_kafka import TopicPartition as ClientTopicPartition

from kbroker.spark.offsets import OffsetRange, resolve
from kbroker.spark.schema import arrow_schema

log = logging.getLogger(__name__)

# Records per Arrow batch: large enough that Arrow's per-batch cost vanishes, small enough to keep a task's memory
# in the tens of MB at 1 KiB records.
CHUNK_RECORDS = 8192
# How long one consume() call may block; the task gives up after kafkaConsumer.pollTimeoutMs without progress.
POLL_S = 0.5

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was aged out "
    "by Kafka or the topic may have been deleted before all the data in the topic was processed. If you don't "
    'want your streaming query to fail on such cases, set the source option "failOnDataLoss" to "false".'
)
INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was aged out "
    "by Kafka or the topic may have been deleted before all the data in the topic was processed. If you want your "
    'streaming query to fail on such cases, set the source option "failOnDataLoss" to "true".'
)


class DataLossError(RuntimeError):
    """Records a task was to read are gone (failOnDataLoss=true)."""


def consumer_config(client_config: Mapping[str, Any], group_id: str) -> dict[str, Any]:
    """A consumer that reads only what it is told: assigned partitions, no commits, no offset reset (an offset out
    of range is an error to act on), and, like the Java client Spark uses, read_uncommitted unless asked."""
    config = dict(client_config)
    config.setdefault("group.id", group_id)
    config.setdefault("isolation.level", "read_uncommitted")
    config.update(
        {
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            "enable.partition.eof": False,
            "logger": log,
        }
    )
    return config


def read_range(
    r: OffsetRange,
    client_config: Mapping[str, Any],
    group_id: str,
    *,
    fail_on_data_loss: bool,
    include_headers: bool,
    poll_timeout_ms: int,
) -> Iterator[pa.RecordBatch]:
    consumer = Consumer(consumer_config(client_config, group_id))
    try:
        yield from _Reader(
            consumer, group_id, r, fail_on_data_loss, include_headers, poll_timeout_ms
        ).batches()
    finally:
        consumer.close()


class _Reader:
    def __init__(
        self,
        consumer: Consumer,
        group_id: str,
        r: OffsetRange,
        fail_on_data_loss: bool,
        include_headers: bool,
        poll_timeout_ms: int,
    ) -> None:
        self.consumer = consumer
        self.group_id = group_id
        self.range = r
        self.client_tp = ClientTopicPartition(r.tp.topic, r.tp.partition)
        self.fail_on_data_loss = fail_on_data_loss
        self.include_headers = include_headers
        self.poll_timeout_s = poll_timeout_ms / 1000
        self.schema = arrow_schema(include_headers)

    def watermarks(self) -> tuple[int, int]:
        low, high = self.consumer.get_watermark_offsets(
            self.client_tp, timeout=self.poll_timeout_s, cached=False
        )
        return int(low), int(high)

    def _position(self) -> int:
        """The consumer's next offset (past the records it skipped, at read_committed); -1 before any fetch."""
        [tp] = self.consumer.position([self.client_tp])
        return int(tp.offset)

    def data_loss(self, message: str) -> None:
        where = f"(GroupId: {self.group_id}, TopicPartition: {self.range.tp})"
        if self.fail_on_data_loss:
            raise DataLossError(f"{message} {where}. {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")
        log.warning("%s %s. %s", message, where, INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE)

    def batches(self) -> Iterator[pa.RecordBatch]:
        r = self.range
        start, until = r.from_offset, r.until_offset
        if not r.resolved:
            low, high = self.watermarks()
            start, until = resolve(start, low, high), resolve(until, low, high)
        if start > until:
            raise ValueError(
                f"Beginning offset {start} is after the ending offset {until} for topic {r.tp.topic} partition "
                f"{r.tp.partition}. You either provided an invalid fromOffset, or the Kafka topic has been damaged"
            )
        if start == until:
            return
        expected = start  # the next offset this range still needs
        self.consumer.assign([ClientTopicPartition(r.tp.topic, r.tp.partition, start)])
        last_progress = time.monotonic()
        while expected < until:
            messages: list[Message] = self.consumer.consume(CHUNK_RECORDS, POLL_S)
            if not messages:
                if self._position() >= until:
                    # At read_committed a range may end with offsets no record is handed over for (transaction
                    # markers, aborted records); the consumer's position passes them, as Spark's connector checks.
                    break
                if time.monotonic() - last_progress > self.poll_timeout_s:
                    expected = self._stalled(expected, until)
                    last_progress = time.monotonic()
                continue
            last_progress = time.monotonic()
            resume = None
            if any([message.error() is not None for message in messages]):
                messages, resume = self._without_errors(messages, expected, until)
            if messages:
                offsets: list[int] = [message.offset() for message in messages]  # type: ignore[misc]
                if offsets[0] > expected:
                    # (within one fetch, offsets only jump over compacted records or control records)
                    self._on_gap(expected, offsets[0])
                if offsets[-1] >= until:
                    cut = bisect.bisect_left(offsets, until)
                    messages, offsets = messages[:cut], offsets[:cut]
                if messages:
                    yield self._batch(messages, offsets)
                    expected = offsets[-1] + 1
                else:
                    expected = until
            if resume is not None:
                expected = resume

    def _without_errors(
        self, messages: list[Message], expected: int, until: int
    ) -> tuple[list[Message], int | None]:
        """The records of a consume() call without its error events, and where to read next if an offset out of
        range ended them (the consumer then re-assigned there). Other errors are librdkafka's to retry (a leader
        moving, a broker restarting) unless fatal, and take no offset."""
        records: list[Message] = []
        for message in messages:
            error = message.error()
            if error is None:
                records.append(message)
            elif error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                # nothing of this partition follows the error; the records before it are still good
                after = records[-1].offset() if records else None
                return records, self._out_of_range(expected if after is None else after + 1, until)
            elif error.fatal():
                raise RuntimeError(f"cannot read {self.range.tp}: {error}")
            else:
                log.info("%s while reading %s; the consumer retries", error, self.range.tp)
        return records, None

    def _out_of_range(self, expected: int, until: int) -> int:
        """The next offset to read after OFFSET_OUT_OF_RANGE (re-assigning the consumer there), or `until`."""
        low, high = self.watermarks()
        if expected < low:
            self.data_loss(f"Cannot fetch offset {expected}: the log of {self.range.tp} now starts at {low}")
            resume = min(low, until)
        elif expected >= high:
            self.data_loss(
                f"Cannot fetch offsets [{expected}, {until}): the log of {self.range.tp} now ends at {high}"
            )
            resume = until
        else:
            resume = expected  # the offset came back (a leader change): read it again
        if resume < until:
            self.consumer.assign([ClientTopicPartition(self.range.tp.topic, self.range.tp.partition, resume)])
        return resume

    def _on_gap(self, expected: int, offset: int) -> None:
        """Offsets [expected, offset) were skipped. Within the log that is compaction or a control record; below
        the log start offset it is retention's doing, i.e. loss."""
        low = int(self.consumer.get_watermark_offsets(self.client_tp, cached=True)[0])
        if low < 0:  # not known yet
            low, _ = self.watermarks()
        if low > expected:
            self.data_loss(f"Skip missing records in [{expected}, {min(low, offset)})")

    def _stalled(self, expected: int, until: int) -> int:
        """Nothing came for pollTimeoutMs: the log ends before `until` (loss), or the broker does not answer."""
        _, high = self.watermarks()
        if high <= expected:
            self.data_loss(
                f"Cannot fetch offsets [{expected}, {until}): the log of {self.range.tp} ends at {high}"
            )
            return until
        raise TimeoutError(
            f"Cannot fetch record for offset {expected} of {self.range.tp} in "
            f"{self.poll_timeout_s * 1000:.0f} milliseconds (kafkaConsumer.pollTimeoutMs)"
        )

    def _batch(self, messages: list[Message], offsets: list[int]) -> pa.RecordBatch:
        count = len(messages)
        topic, partition = self.range.tp
        # librdkafka's timestamp types are Kafka's plus one (0 = none, 1 = CreateTime, 2 = LogAppendTime).
        kinds, timestamps = zip(*[message.timestamp() for message in messages], strict=True)
        columns: list[pa.Array[Any]] = [
            pa.array([message.key() for message in messages], pa.binary()),
            pa.array([message.value() for message in messages], pa.binary()),
            pa.repeat(pa.scalar(topic, pa.string()), count),
            pa.repeat(pa.scalar(partition, pa.int32()), count),
            pa.array(offsets, pa.int64()),
            pc.multiply(pa.array(timestamps, pa.int64()), 1000).cast(pa.timestamp("us", tz="UTC")),
            pc.subtract(pa.array(kinds, pa.int32()), pa.scalar(1, pa.int32())),
        ]
        if self.include_headers:
            headers = [message.headers() for message in messages]
            columns.append(pa.array(headers, self.schema.field("headers").type))
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)
