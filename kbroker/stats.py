"""Plain counters the broker's parts keep for monitoring: no locks, no labels, no Prometheus.

Each part owns its counters (the replica manager its per-topic traffic, the dispatcher its per-API requests, the
group committer its fsync times) and bumps them on the hot path with a few integer additions per request or batch,
never per record. `kbroker/monitoring/collector.py` reads them when Prometheus scrapes and turns them into Kafka's
broker metrics. Everything here runs on the trio thread (or, for `LatencyHistogram.observe`, from one worker thread
at a time), so plain ints are enough.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

# Request and fsync latencies in seconds: 0.5 ms to 10 s, roughly doubling (what Kafka's RequestMetrics' percentiles
# and a dashboard's p50/p99 need).
LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)


class LatencyHistogram:
    """Counts of observations per bucket (upper bounds `bounds`, the last bucket +Inf) and their sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """(upper bound as Prometheus writes it, observations at or below it), +Inf last."""
        out: list[tuple[str, int]] = []
        running = 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += n
            out.append(("+Inf" if bound == float("inf") else repr(bound), running))
        return out


@dataclass(slots=True)
class TopicTraffic:
    """Kafka's BrokerTopicMetrics of one topic on this node: what producers wrote, consumers and followers read."""

    messages_in: int = 0
    bytes_in: int = 0
    messages_out: int = 0
    bytes_out: int = 0
    replication_bytes_out: int = 0
    produce_requests: int = 0
    fetch_requests: int = 0
    failed_produce_requests: int = 0


@dataclass(slots=True)
class ReplicationStats:
    """ReplicaManager's counters: ISR changes, parked requests (the purgatories' sizes) and per-topic traffic."""

    isr_shrinks: int = 0
    isr_expands: int = 0
    parked_produces: int = 0
    parked_fetches: int = 0
    # of which followers' fetches of partitions (not the failure detector's empty probes, kbroker/cluster/)
    parked_follower_fetches: int = 0
    topics: dict[str, TopicTraffic] = field(default_factory=dict)

    def topic(self, name: str) -> TopicTraffic:
        traffic = self.topics.get(name)
        if traffic is None:
            traffic = self.topics[name] = TopicTraffic()
        return traffic


@dataclass(slots=True)
class RequestStats:
    """The dispatcher's and the connections' counters: requests and their latency per API, open connections."""

    latency: dict[str, LatencyHistogram] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    active_connections: int = 0
    connections_created: int = 0

    def histogram(self, api: str) -> LatencyHistogram:
        histogram = self.latency.get(api)
        if histogram is None:
            histogram = self.latency[api] = LatencyHistogram()
        return histogram
