"""The driver's questions to the cluster: which partitions a source reads, and their offsets (earliest, latest, by
timestamp), through confluent-kafka's AdminClient: Metadata and ListOffsets, as Spark's own KafkaOffsetReaderAdmin
asks them. Calls that fail are retried `fetchOffset.numRetries` times, `fetchOffset.retryIntervalMs` apart, each
time with a fresh client, as Spark does.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from confluent_kafka import IsolationLevel, KafkaException
from confluent_kafka import TopicPartition as ClientTopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import OffsetSpec as ClientOffsetSpec

from kbroker.spark.options import (
    EARLIEST,
    LATEST,
    Assign,
    EarliestOffsets,
    LatestOffsets,
    OffsetSpec,
    OptionError,
    SourceOptions,
    SpecificOffsets,
    SpecificTimestamps,
    Strategy,
    Subscribe,
    SubscribePattern,
    TopicPartition,
)

log = logging.getLogger(__name__)

# Kafka's internal topics, which the Java Admin's listTopics leaves out and so Spark never reads by pattern.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
REQUEST_TIMEOUT_S = 60.0  # the Java client's default.api.timeout.ms
T = TypeVar("T")


class OffsetReader:
    """One source's view of the cluster from the driver. Not thread-safe; close() when done."""

    def __init__(self, options: SourceOptions) -> None:
        self.strategy: Strategy = options.strategy
        self.config = dict(options.client_config)
        read_committed = (
            str(self.config.get("isolation.level", "read_uncommitted")).lower() == "read_committed"
        )
        self.isolation = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
        self.attempts = max(1, options.fetch_offset_num_retries)
        self.retry_interval_s = options.fetch_offset_retry_interval_ms / 1000
        self._admin: AdminClient | None = None

    def close(self) -> None:
        # AdminClient has no close(): dropping the last reference destroys the handle and its threads.
        self._admin = None

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            config: dict[str, Any] = {**admin_config(self.config), "logger": log}
            self._admin = AdminClient(config)
        return self._admin

    def _retrying(self, what: str, call: Callable[[], T]) -> T:
        for attempt in range(1, self.attempts + 1):
            try:
                return call()
            except OptionError:
                raise
            except Exception as error:
                if attempt == self.attempts:
                    raise
                log.warning("Error in attempt %d getting Kafka %s: %s", attempt, what, error)
                time.sleep(self.retry_interval_s)
                self.close()
        raise AssertionError("unreachable")

    # ---- partitions -------------------------------------------------------------------------------------------

    def partitions(self) -> set[TopicPartition]:
        """The partitions the strategy names that exist now (Spark's assignedTopicPartitions)."""
        return self._retrying("partitions", self._partitions)

    def _partitions(self) -> set[TopicPartition]:
        metadata = self.admin.list_topics(timeout=REQUEST_TIMEOUT_S)
        topics = metadata.topics
        strategy = self.strategy
        if isinstance(strategy, SubscribePattern):
            pattern = re.compile(strategy.pattern)
            names = [
                n
                for n in topics
                if n not in INTERNAL_TOPICS and pattern.search(n) and topics[n].error is None
            ]
        elif isinstance(strategy, Subscribe):
            names = list(strategy.topics)
        else:
            names = sorted({tp.topic for tp in strategy.partitions})
        out: set[TopicPartition] = set()
        for name in names:
            topic = topics.get(name)
            if topic is None or topic.error is not None:
                if isinstance(strategy, Subscribe):
                    reason = topic.error if topic is not None else "it does not exist"
                    raise KafkaException(f"cannot read topic {name}: {reason}")
                continue
            out.update(TopicPartition(name, p) for p in topic.partitions)
        if isinstance(strategy, Assign):
            out &= set(strategy.partitions)
        return out

    # ---- offsets ----------------------------------------------------------------------------------------------

    def earliest(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list_offsets({tp: ClientOffsetSpec.earliest() for tp in partitions})  # type: ignore[no-untyped-call]

    def latest(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list_offsets({tp: ClientOffsetSpec.latest() for tp in partitions})  # type: ignore[no-untyped-call]

    def by_timestamp(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The first offset at or after each timestamp; LATEST where no record is that late."""
        found = self._list_offsets({tp: ClientOffsetSpec.for_timestamp(ts) for tp, ts in timestamps.items()})
        return {tp: offset if offset >= 0 else LATEST for tp, offset in found.items()}

    def _list_offsets(self, specs: Mapping[TopicPartition, Any]) -> dict[TopicPartition, int]:
        if not specs:
            return {}

        def call() -> dict[TopicPartition, int]:
            request = {ClientTopicPartition(tp.topic, tp.partition): spec for tp, spec in specs.items()}
            futures = self.admin.list_offsets(
                request, isolation_level=self.isolation, request_timeout=REQUEST_TIMEOUT_S
            )
            return {
                TopicPartition(tp.topic, tp.partition): future.result(REQUEST_TIMEOUT_S).offset
                for tp, future in futures.items()
            }

        return self._retrying("offsets", call)

    def resolve(
        self,
        spec: OffsetSpec,
        partitions: set[TopicPartition],
        *,
        starting: bool,
        keep_symbolic: bool = False,
    ) -> dict[TopicPartition, int]:
        """The offsets an offset spec names for `partitions`. With keep_symbolic, `earliest` and `latest` (and
        -2/-1 in JSON) stay EARLIEST/LATEST, for the reading task to resolve when it starts."""
        if isinstance(spec, EarliestOffsets):
            wanted = dict.fromkeys(partitions, EARLIEST)
        elif isinstance(spec, LatestOffsets):
            wanted = dict.fromkeys(partitions, LATEST)
        elif isinstance(spec, SpecificOffsets):
            if set(spec.offsets) != partitions:
                raise OptionError(
                    f"If {'startingOffsets' if starting else 'endingOffsets'} contains specific offsets, you must "
                    f"specify all TopicPartitions. Use -1 for latest, -2 for earliest. Specified: "
                    f"{sorted(map(str, spec.offsets))} Assigned: {sorted(map(str, partitions))}"
                )
            wanted = dict(spec.offsets)
        else:
            if isinstance(spec, SpecificTimestamps):
                if set(spec.timestamps) != partitions:
                    raise OptionError(
                        "If starting/endingOffsetsByTimestamp contains specific offsets, you must specify all "
                        f"topics. Specified: {sorted(map(str, spec.timestamps))} Assigned: "
                        f"{sorted(map(str, partitions))}"
                    )
                timestamps = dict(spec.timestamps)
            else:
                timestamps = dict.fromkeys(partitions, spec.timestamp)
            wanted = self.by_timestamp(timestamps)
            if starting and not spec.latest_when_none_matches:
                for tp, offset in wanted.items():
                    if offset == LATEST:
                        raise OptionError(
                            f"No offset matched from request of topic-partition {tp} and timestamp "
                            f"{timestamps[tp]}."
                        )
        if keep_symbolic:
            return wanted
        return self.concrete(wanted)

    def concrete(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """EARLIEST and LATEST replaced by the partitions' offsets now."""
        earliest = self.earliest(tp for tp, o in offsets.items() if o == EARLIEST)
        latest = self.latest(tp for tp, o in offsets.items() if o == LATEST)
        return {tp: earliest.get(tp, latest.get(tp, o)) if o < 0 else o for tp, o in offsets.items()}


def admin_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The client configuration without what only a consumer understands (librdkafka would warn of each)."""
    consumer_only = {"isolation.level", "group.id", "enable.auto.commit", "auto.offset.reset"}
    return {
        name: value
        for name, value in config.items()
        if name not in consumer_only and not name.startswith("fetch")
    }
