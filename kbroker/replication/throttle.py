"""Replication throttles (KIP-73), as kafka-reassign-partitions --throttle sets them: a rate per broker and the
replicas it applies to per topic.

- `leader.replication.throttled.rate` / `follower.replication.throttled.rate` (dynamic broker configs, bytes per
  second): how fast this broker, as a leader, sends the throttled replicas' data to followers, and as a follower,
  fetches it.
- `leader.replication.throttled.replicas` / `follower.replication.throttled.replicas` (topic configs): which
  replicas count, as `PARTITION:BROKER,...` or `*`. On the leader side a partition counts when the list names it on
  this (leading) broker; on the follower side when it names it on this (fetching) broker. As in Kafka, a follower
  already in the ISR is never throttled: throttles slow down catching up, not keeping up.

The quota is a token bucket refilled at the rate and holding at most one second of it, so whatever a throttled
replica copies over any span of T seconds is at most rate x (T + 1) plus one record batch (a fetch never comes back
empty for want of budget alone: the first batch comes whole, KIP-74). Plain synchronous code; time comes from the
caller.
"""

from __future__ import annotations

from collections.abc import Mapping

UNLIMITED = 2**63 - 1
ALL_REPLICAS = "*"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"


class ReplicationQuota:
    """A byte budget per second, shared by every throttled replica of one side (leader or follower) of a broker."""

    def __init__(self, rate: int = UNLIMITED) -> None:
        self.rate = rate
        self._tokens = float(min(rate, UNLIMITED))
        self._updated_ms: int | None = None

    @property
    def unlimited(self) -> bool:
        return self.rate >= UNLIMITED

    def set_rate(self, rate: int) -> None:
        if rate != self.rate:
            self.rate = rate
            self._tokens = min(self._tokens, float(rate))

    def available(self, now_ms: int) -> int:
        """Bytes that may go now (0 once the budget is spent)."""
        if self.unlimited:
            return UNLIMITED
        self._refill(now_ms)
        return max(int(self._tokens), 0)

    def record(self, size: int, now_ms: int) -> None:
        """`size` bytes went (a whole batch may overdraw the budget: it is paid back before more goes)."""
        if self.unlimited:
            return
        self._refill(now_ms)
        self._tokens -= size

    def _refill(self, now_ms: int) -> None:
        if self._updated_ms is not None and now_ms > self._updated_ms:
            self._tokens = min(
                float(self.rate), self._tokens + self.rate * (now_ms - self._updated_ms) / 1000
            )
        self._updated_ms = now_ms if self._updated_ms is None else max(self._updated_ms, now_ms)


def throttled(configs: Mapping[str, str], name: str, partition: int, broker: int) -> bool:
    """Whether the topic configs' `name` list (leader or follower throttled replicas) covers `partition` on
    `broker`."""
    value = configs.get(name, "").strip()
    if not value:
        return False
    if value == ALL_REPLICAS:
        return True
    wanted = f"{partition}:{broker}"
    return any(item.strip() == wanted for item in value.split(","))
