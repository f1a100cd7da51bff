"""Kafka's broker metrics for Prometheus, read from the broker's own state when Prometheus scrapes.

Nothing here runs on the request path: the parts of the broker keep plain counters (kbroker/stats.py), and this
collector turns them, and the partitions' and groups' current state, into metric families at scrape time, on the
trio thread (so it sees no half-applied change). Names follow the usual JMX-exporter spelling of Kafka's MBeans
(`kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=T` becomes
`kafka_server_brokertopicmetrics_messagesin_total{topic="T"}`), and consumer lag follows kafka-exporter
(`kafka_consumergroup_lag`), so existing dashboards and alerts find them. Timings are histograms in seconds
(Prometheus' convention) rather than Kafka's percentile gauges in milliseconds. docs/operations.md lists them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from kbroker.common import TopicPartition
from kbroker.coordinator.wiring import GroupService
from kbroker.log.flusher import GroupCommitter
from kbroker.metadata.api import MetadataView
from kbroker.replication.fetch_session import FetchManager
from kbroker.replication.replica_manager import ReplicaManager
from kbroker.stats import LatencyHistogram, RequestStats
from protocol.errors import ErrorCode


@dataclass(frozen=True)
class BrokerState:
    """What the monitoring side reads of a running broker (built by kbroker/app.py)."""

    node_id: int
    cluster_mode: bool
    metadata: MetadataView
    replicas: ReplicaManager
    groups: GroupService
    committer: GroupCommitter
    requests: RequestStats
    fetch_sessions: FetchManager | None = None


def _histogram(name: str, doc: str, label: str, series: dict[str, LatencyHistogram]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=[label] if label else None)
    for value, h in sorted(series.items()):
        family.add_metric([value] if label else [], h.cumulative(), h.total)
    return family


class BrokerCollector(Collector):
    def __init__(self, state: BrokerState) -> None:
        self.state = state

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        yield from self._topic_traffic()
        yield from self._requests()
        yield from self._replication()
        yield from self._fetch_sessions()
        yield from self._logs()
        yield from self._consumer_groups()

    def _topic_traffic(self) -> Iterator[CounterMetricFamily]:
        stats = self.state.replicas.stats
        fields = (
            ("messagesin", "messages_in", "Records appended by producers (MessagesInPerSec)."),
            ("bytesin", "bytes_in", "Bytes appended by producers (BytesInPerSec)."),
            ("messagesout", "messages_out", "Records sent to consumers (kbroker's; Kafka counts bytes only)."),
            ("bytesout", "bytes_out", "Bytes sent to consumers (BytesOutPerSec)."),
            ("replicationbytesout", "replication_bytes_out", "Bytes sent to followers (ReplicationBytesOut)."),
            ("totalproducerequests", "produce_requests", "Partition appends asked for (TotalProduceRequests)."),
            ("failedproducerequests", "failed_produce_requests", "Partition appends refused (FailedProduceRequests)."),
        )  # fmt: skip
        for short, attribute, doc in fields:
            family = CounterMetricFamily(f"kafka_server_brokertopicmetrics_{short}", doc, labels=["topic"])
            for topic, traffic in sorted(stats.topics.items()):
                family.add_metric([topic], getattr(traffic, attribute))
            yield family

    def _requests(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        requests = self.state.requests
        counts = CounterMetricFamily(
            "kafka_network_requestmetrics_requests",
            "Requests answered, per API (RequestsPerSec).",
            labels=["request"],
        )
        for api, h in sorted(requests.latency.items()):
            counts.add_metric([api], h.count)
        yield counts
        yield _histogram(
            "kafka_network_requestmetrics_totaltime_seconds",
            "Time from a request's arrival to its response, per API (TotalTimeMs).",
            "request",
            requests.latency,
        )
        yield GaugeMetricFamily(
            "kafka_server_socketservermetrics_connection_count",
            "Open client connections.",
            value=requests.active_connections,
        )
        yield CounterMetricFamily(
            "kafka_server_socketservermetrics_connection_creation",
            "Client connections accepted.",
            value=requests.connections_created,
        )
        yield _histogram(
            "kafka_log_logflushstats_logflush_seconds",
            "Time of each log's fsync (LogFlushRateAndTimeMs).",
            "",
            {"": self.state.committer.fsync_seconds},
        )

    def _replication(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        replicas = self.state.replicas
        stats = replicas.stats
        leaders = under_replicated = under_min_isr = 0
        for partition in replicas.partitions.values():
            leader = partition.replication
            if leader is None:
                continue
            leaders += 1
            if len(leader.isr) < len(leader.replicas):
                under_replicated += 1
            if len(leader.isr) < partition.config.min_insync_replicas:
                under_min_isr += 1
        image = self.state.metadata.image()
        offline = 0
        # Kafka's controller alone reports offline partitions, so that a sum over brokers counts each once.
        if not self.state.cluster_mode or image.controller_id == self.state.node_id:
            for topic, states in image.partitions.items():
                for index in states:
                    if image.live_leader(topic, index) < 0:
                        offline += 1
        purgatory = GaugeMetricFamily(
            "kafka_server_delayedoperationpurgatory_purgatorysize",
            "Requests waiting in a purgatory (acks=all produces, long-polling fetches).",
            labels=["delayedOperation"],
        )
        purgatory.add_metric(["Produce"], stats.parked_produces)
        purgatory.add_metric(["Fetch"], stats.parked_fetches)
        yield purgatory
        yield GaugeMetricFamily(
            "kafka_server_delayedoperationpurgatory_followerfetches",
            "Of the waiting fetches, followers' fetches of partitions (the failure detector's probes are not).",
            value=stats.parked_follower_fetches,
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_leadercount", "Partitions this broker leads.", value=leaders
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_partitioncount",
            "Partitions this broker holds a replica of.",
            value=len(replicas.partitions),
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_underreplicatedpartitions",
            "Partitions this broker leads whose ISR is smaller than their replica set.",
            value=under_replicated,
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_underminisrpartitioncount",
            "Partitions this broker leads with fewer in-sync replicas than min.insync.replicas.",
            value=under_min_isr,
        )
        yield GaugeMetricFamily(
            "kafka_controller_kafkacontroller_offlinepartitionscount",
            "Partitions without a live leader (reported by the controller; a single node is its own).",
            value=offline,
        )
        yield CounterMetricFamily(
            "kafka_server_replicamanager_isrshrinks",
            "ISR shrinks of partitions led here.",
            value=stats.isr_shrinks,
        )
        yield CounterMetricFamily(
            "kafka_server_replicamanager_isrexpands",
            "ISR expansions of partitions led here.",
            value=stats.isr_expands,
        )

    def _fetch_sessions(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        """Kafka's FetchSessionCache metrics, and kbroker's own count of fetches by kind of fetch context."""
        manager = self.state.fetch_sessions
        if manager is None:
            return
        yield GaugeMetricFamily(
            "kafka_server_fetchsessioncache_numincrementalfetchsessions",
            "Incremental fetch sessions in the cache (NumIncrementalFetchSessions).",
            value=manager.cache.size,
        )
        yield GaugeMetricFamily(
            "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
            "Partitions of all incremental fetch sessions (NumIncrementalFetchPartitionsCached).",
            value=manager.cache.total_partitions,
        )
        yield CounterMetricFamily(
            "kafka_server_fetchsessioncache_incrementalfetchsessionevictions",
            "Fetch sessions evicted to make room for new ones (IncrementalFetchSessionEvictionsPerSec).",
            value=manager.stats.evictions,
        )
        requests = CounterMetricFamily(
            "kafka_server_fetchsessioncache_fetchrequests",
            "Fetch requests by context: full (creates a session), incremental, sessionless, error (kbroker's own).",
            labels=["context"],
        )
        partitions = CounterMetricFamily(
            "kafka_server_fetchsessioncache_fetchrequestpartitions",
            "Partitions listed in those fetch requests, by context (kbroker's own).",
            labels=["context"],
        )
        for kind in ("full", "incremental", "sessionless", "error"):
            requests.add_metric([kind], manager.stats.requests.get(kind, 0))
            partitions.add_metric([kind], manager.stats.request_partitions.get(kind, 0))
        yield requests
        yield partitions
        yield CounterMetricFamily(
            "kafka_server_fetchsessioncache_incrementalfetchpartitionsread",
            "Partitions incremental fetches read; settled ones (nothing to answer since their last read) are not "
            "read (kbroker's own).",
            value=manager.stats.incremental_partitions_read,
        )

    def _logs(self) -> Iterator[GaugeMetricFamily]:
        labels = ["topic", "partition"]
        size = GaugeMetricFamily(
            "kafka_log_log_size", "Bytes of the partition's log on this broker.", labels=labels
        )
        segments = GaugeMetricFamily(
            "kafka_log_log_numlogsegments", "Segments of the partition's log.", labels=labels
        )
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "The log's start offset.", labels=labels)
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "The log's end offset.", labels=labels)
        for tp, partition in sorted(self.state.replicas.partitions.items()):
            log = partition.log
            if log.closed:
                continue
            key = [tp.topic, str(tp.partition)]
            size.add_metric(key, log.size_in_bytes)
            segments.add_metric(key, len(log.segments))
            start.add_metric(key, log.log_start_offset)
            end.add_metric(key, log.log_end_offset)
        yield size
        yield segments
        yield start
        yield end

    def _consumer_groups(self) -> Iterator[GaugeMetricFamily]:
        """Lag of every group this broker coordinates, on the partitions it holds a replica of (their high
        watermark is known here; a cluster's other partitions are reported by no one: docs/operations.md)."""
        labels = ["consumergroup", "topic", "partition"]
        current = GaugeMetricFamily(
            "kafka_consumergroup_current_offset", "The group's committed offset.", labels=labels
        )
        lag = GaugeMetricFamily(
            "kafka_consumergroup_lag", "High watermark minus the group's committed offset.", labels=labels
        )
        members = GaugeMetricFamily(
            "kafka_consumergroup_members", "Members of the group.", labels=["consumergroup"]
        )
        coordinator = self.state.groups.coordinator
        partitions = self.state.replicas.partitions
        for listing in sorted(coordinator.list_groups(), key=lambda g: g.group_id):
            group_id = listing.group_id
            group = coordinator.groups.get(group_id)
            members.add_metric([group_id], len(group.members) if group is not None else 0)
            fetched = coordinator.fetch_offsets(group_id, None)
            if fetched.error != ErrorCode.NONE:
                continue
            for offset in fetched.partitions:
                if offset.offset < 0:
                    continue
                key = [group_id, offset.topic, str(offset.partition)]
                current.add_metric(key, offset.offset)
                partition = partitions.get(TopicPartition(offset.topic, offset.partition))
                if partition is not None and not partition.log.closed:
                    lag.add_metric(key, max(partition.high_watermark - offset.offset, 0))
        yield current
        yield lag
        yield members
