"""`format("kbroker")`: Spark's Kafka source and sink as a PySpark Python data source.

Where each part runs: Spark calls `schema()` when a DataFrame is loaded; `reader()`/`partitions()` (batch) and the
stream reader's offset methods run in a Python process on the driver, and ask the cluster through an AdminClient
(admin.py); `read()` runs in the executors' Python workers, one task per offset range, and yields Arrow batches
(consumer.py); the writers' `write()` runs in the executors too (producer.py). Readers and writers are pickled from
the driver to the executors, so they hold settings only and make their clients where they run.

A stream's offsets are Spark's own JSON ({"topic": {"0": 42}}, each the next offset to read), kept in the query's
checkpoint by Spark: a restarted query gives them back and goes on exactly where it was. One addition: Spark asks a
Python source for its initial offsets again when a query restarts before its first micro-batch (which Spark always
runs, empty or not) has committed, and `latest` would then name other offsets (Spark's own source writes its initial
offsets into the checkpoint, which a Python source cannot reach); so the end offset of the first batch also carries
the batch's start, under the key "@start" (never a topic name), and `partitions()` plans from that.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import IsolationLevel
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from kbroker.spark.admin import OffsetReader
from kbroker.spark.consumer import (
    INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE,
    INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE,
    read_range,
)
from kbroker.spark.offsets import OffsetRange, rate_limit, records_between, split_ranges
from kbroker.spark.options import (
    OptionError,
    SinkOptions,
    SourceOptions,
    TopicPartition,
    include_headers,
    offsets_from_json,
    offsets_json,
    sink_options,
    source_options,
)
from kbroker.spark.producer import check_sink_schema, write_batches
from kbroker.spark.schema import kafka_schema

log = logging.getLogger(__name__)

FORMAT = "kbroker"
START_KEY = "@start"


class KafkaDataSource(DataSource):
    """Spark's Kafka source and sink, speaking Kafka through librdkafka: `spark.read.format("kbroker")`."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return kafka_schema(include_headers(self.options))

    def _check_read_schema(self, schema: StructType) -> None:
        if schema != kafka_schema(include_headers(self.options)):
            raise OptionError("Kafka source has a fixed schema and cannot be set with a custom one")

    def reader(self, schema: StructType) -> DataSourceReader:
        self._check_read_schema(schema)
        return KafkaBatchReader(source_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        self._check_read_schema(schema)
        return KafkaStreamReader(source_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> KafkaBatchWriter:
        if overwrite:
            raise OptionError("Save mode Overwrite not allowed for Kafka. Allowed save modes are Append.")
        sink = sink_options(self.options)
        check_sink_schema(schema, sink.topic)
        return KafkaBatchWriter(sink)

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaStreamWriter:
        # `overwrite` is the complete output mode, which Spark's own sink accepts (it appends every row again).
        sink = sink_options(self.options)
        check_sink_schema(schema, sink.topic)
        return KafkaStreamWriter(sink)


class KafkaInputPartition(InputPartition):
    """One Spark task: the offsets [from_offset, until_offset) of one topic-partition."""

    def __init__(self, r: OffsetRange) -> None:
        super().__init__(None)
        self.topic = r.tp.topic
        self.partition = r.tp.partition
        self.from_offset = r.from_offset
        self.until_offset = r.until_offset

    @property
    def range(self) -> OffsetRange:
        return OffsetRange(TopicPartition(self.topic, self.partition), self.from_offset, self.until_offset)


def _read(options: SourceOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if not isinstance(partition, KafkaInputPartition):
        return iter(())  # Spark's stand-in when a read plans no partition at all
    return read_range(
        partition.range,
        options.client_config,
        options.group_id,
        fail_on_data_loss=options.fail_on_data_loss,
        include_headers=options.include_headers,
        poll_timeout_ms=options.poll_timeout_ms,
    )


class _DriverClient:
    """A reader's AdminClient, made where it is first used and never pickled (readers travel to executors)."""

    options: SourceOptions
    _offsets: OffsetReader | None = None

    @property
    def offset_reader(self) -> OffsetReader:
        if self._offsets is None:
            self._offsets = OffsetReader(self.options)
        return self._offsets

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_offsets", None)
        return state


class KafkaBatchReader(_DriverClient, DataSourceReader):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        options = self.options
        reader = self.offset_reader
        try:
            tps = reader.partitions()
            # `earliest` and `latest` are resolved by each task when it starts, as Spark's own batch reads do,
            # unless the ranges are to be cut, which needs their sizes now.
            cutting = options.max_records_per_partition is not None or (
                options.min_partitions is not None and options.min_partitions > len(tps)
            )
            # (a task can only ask for the high watermark; read_committed ends at the last stable offset, which the
            # driver's ListOffsets gives)
            symbolic = not cutting and reader.isolation == IsolationLevel.READ_UNCOMMITTED
            start = reader.resolve(options.starting, tps, starting=True, keep_symbolic=symbolic)
            end = reader.resolve(options.ending, tps, starting=False, keep_symbolic=symbolic)
        finally:
            reader.close()
        ranges = [OffsetRange(tp, start[tp], end[tp]) for tp in sorted(tps)]
        for r in ranges:
            if r.resolved and r.from_offset > r.until_offset:
                raise OptionError(
                    f"The starting offset {r.from_offset} of {r.tp} is after its ending offset {r.until_offset}"
                )
        ranges = split_ranges(ranges, options.min_partitions, options.max_records_per_partition)
        return [KafkaInputPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, partition)


class KafkaStreamReader(_DriverClient, DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._initial: dict[str, Any] | None = None
        self._latest: dict[TopicPartition, int] = {}
        self._available_now_target: dict[TopicPartition, int] | None = None
        self._available_now = False
        self._last_trigger_ms = 0.0

    # ---- offsets, on the driver -------------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        reader = self.offset_reader
        offsets = reader.resolve(self.options.starting, reader.partitions(), starting=True)
        self._initial = offsets_json(offsets)
        log.info("Initial offsets: %s", self._initial)
        return self._initial

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True

    def _fetch_latest(self, known: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The partitions' latest offsets. A leader that has just moved may answer a high watermark below offsets
        already seen; Spark asks again (fetchOffset.numRetries) rather than go backwards, and so does this."""
        reader = self.offset_reader
        partitions = reader.partitions()
        for attempt in range(1, self.options.fetch_offset_num_retries + 1):
            latest = reader.latest(partitions)
            behind = {tp: (known[tp], o) for tp, o in latest.items() if tp in known and o < known[tp]}
            if not behind or attempt == self.options.fetch_offset_num_retries:
                if behind:
                    log.warning(
                        "latest offsets behind offsets already read (partition, read, latest): %s", behind
                    )
                return latest
            time.sleep(self.options.fetch_offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        start_offsets = offsets_from_json(_without_start(start))
        if self._available_now:
            if self._available_now_target is None:
                self._available_now_target = self._fetch_latest(start_offsets)
            latest = self._available_now_target
        else:
            latest = self._fetch_latest(start_offsets)
        self._latest = latest
        end = self._admitted(start_offsets, latest, limit)
        # The first batch starts at the offsets initialOffset() just gave; later batches start where the one before
        # ended, even if that happens to be the same offsets. (Spark asks initialOffset() again while it runs the
        # first batch, which is not a new start either.)
        first_batch = self._initial is not None and start == self._initial
        self._initial = None
        if first_batch:
            # Spark runs the first batch even when it is empty: see the module's doc.
            return {**offsets_json(end), START_KEY: start}
        if end == start_offsets:
            return start  # unchanged, so Spark sees no new data
        return offsets_json(end)

    def _admitted(
        self, start: dict[TopicPartition, int], latest: dict[TopicPartition, int], limit: ReadLimit
    ) -> dict[TopicPartition, int]:
        """How far this micro-batch reads under the read limit (Spark's KafkaMicroBatchStream.latestOffset)."""
        if isinstance(limit, ReadAllAvailable):
            return latest
        options = self.options
        now_ms = time.time() * 1000
        if options.min_offsets_per_trigger is not None and not self._available_now:
            waited_enough = now_ms - self._last_trigger_ms >= options.max_trigger_delay_ms
            if not waited_enough and records_between(start, latest) < options.min_offsets_per_trigger:
                return start
            self._last_trigger_ms = now_ms
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else options.max_offsets_per_trigger
        if max_rows is None:
            return latest
        new = [tp for tp in latest if tp not in start]
        return rate_limit(max_rows, start, latest, self.offset_reader.earliest(new) if new else {})

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return offsets_json(self._latest) if self._latest else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """Spark's getOffsetRangesFromResolvedOffsets: new partitions from their earliest offset, and each kind of
        loss (a partition gone, a new one not starting at 0, an offset gone backwards) reported."""
        from_offsets = offsets_from_json(end.get(START_KEY, _without_start(start)))
        until_offsets = offsets_from_json(_without_start(end))
        new = [tp for tp in until_offsets if tp not in from_offsets]
        if new:
            earliest = self.offset_reader.earliest(new)
            missing = sorted(map(str, set(new) - set(earliest)))
            if missing:
                self._data_loss(f"Cannot find earliest offsets of {missing}. Some data may have been missed")
            for tp, offset in sorted(earliest.items()):
                if offset != 0:
                    self._data_loss(
                        f"Added partition {tp} starts from {offset} instead of 0. Some data may have been missed"
                    )
            from_offsets = {**from_offsets, **earliest}
        gone = sorted(map(str, set(from_offsets) - set(until_offsets)))
        if gone:
            self._data_loss(f"{gone} are gone. Some data may have been missed.")
        ranges = []
        for tp in sorted(until_offsets):
            if tp not in from_offsets:
                continue
            first, last = from_offsets[tp], until_offsets[tp]
            if last < first:
                self._data_loss(
                    f"Partition {tp}'s offset was changed from {first} to {last}, some data may have been missed"
                )
                continue
            ranges.append(OffsetRange(tp, first, last))
        ranges = split_ranges(ranges, self.options.min_partitions, self.options.max_records_per_partition)
        return [KafkaInputPartition(r) for r in ranges]

    def _data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise RuntimeError(f"{message}. {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")
        log.warning("%s. %s", message, INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE)

    def commit(self, end: dict[str, Any]) -> None:
        # Offsets live in Spark's checkpoint; nothing is committed to Kafka (as with Spark's own source).
        pass

    def stop(self) -> None:
        if self._offsets is not None:
            self._offsets.close()

    # ---- records, on the executors ----------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, partition)


def _without_start(offsets: dict[str, Any]) -> dict[str, Any]:
    return {topic: partitions for topic, partitions in offsets.items() if topic != START_KEY}


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    records: int


class KafkaBatchWriter(DataSourceArrowWriter):
    def __init__(self, sink: SinkOptions) -> None:
        self.sink = sink

    # PySpark's Arrow writers take record batches where their base class's write takes rows.
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:  # type: ignore[override]
        return KafkaCommitMessage(write_batches(iterator, self.sink.topic, self.sink.client_config))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        log.info("wrote %d records", sum(m.records for m in messages if isinstance(m, KafkaCommitMessage)))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # What the finished tasks wrote stays written: Kafka has no undo outside transactions, which Spark's own
        # sink does not use either.
        pass


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, sink: SinkOptions) -> None:
        self.sink = sink

    # PySpark's Arrow writers take record batches where their base class's write takes rows.
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:  # type: ignore[override]
        return KafkaCommitMessage(write_batches(iterator, self.sink.topic, self.sink.client_config))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        pass

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        pass
