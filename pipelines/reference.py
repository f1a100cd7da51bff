"""What the pipeline's jobs must output, computed in plain Python from the events produced.

The streaming job (streaming.py) and the batch job (batch.py) are checked against these functions, never against
Spark: the same rules written twice, once as Spark operators and once as loops over a list.

- `window_aggregates`: de-duplicate by event id (the first copy counts), assign each event to its tumbling and
  sliding windows as Spark's `window()` does (windows start at multiples of the slide since the epoch, start
  inclusive, end exclusive), and count events and sum amounts per (window kind, window start, event type).
- `closed`: the windows an append-mode query has emitted once its watermark (the largest event time seen, less the
  delay) has reached `watermark_ms`: Spark emits and forgets a window when its end is at or before the watermark.
- `daily_report`: the batch job's report over an event-time range.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pipelines.events import Event

MINUTE_MS = 60_000


@dataclass(frozen=True)
class WindowSpec:
    """One windowing of event time: tumbling when `slide_ms == size_ms`."""

    kind: str
    size_ms: int
    slide_ms: int

    def starts(self, event_time_ms: int) -> list[int]:
        """The starts of the windows an event time falls in, earliest first."""
        last = event_time_ms - event_time_ms % self.slide_ms
        out = []
        start = last
        while start + self.size_ms > event_time_ms:
            out.append(start)
            start -= self.slide_ms
        return sorted(out)


# The two windowings of the streaming job: per minute, and the last two minutes every minute.
TUMBLING = WindowSpec("tumbling_1m", MINUTE_MS, MINUTE_MS)
SLIDING = WindowSpec("sliding_2m_every_1m", 2 * MINUTE_MS, MINUTE_MS)
WINDOWS = (TUMBLING, SLIDING)


@dataclass(frozen=True, order=True)
class WindowKey:
    kind: str
    window_start_ms: int
    window_end_ms: int
    event_type: str


@dataclass(frozen=True)
class WindowTotals:
    events: int
    amount_cents: int


def deduplicate(events: Iterable[Event]) -> list[Event]:
    """The first copy of each event id, in order."""
    seen: set[str] = set()
    out = []
    for event in events:
        if event.event_id not in seen:
            seen.add(event.event_id)
            out.append(event)
    return out


def window_aggregates(
    events: Iterable[Event], windows: Iterable[WindowSpec] = WINDOWS
) -> dict[WindowKey, WindowTotals]:
    counts: Counter[WindowKey] = Counter()
    amounts: Counter[WindowKey] = Counter()
    specs = list(windows)
    for event in deduplicate(events):
        for spec in specs:
            for start in spec.starts(event.event_time_ms):
                key = WindowKey(spec.kind, start, start + spec.size_ms, event.event_type)
                counts[key] += 1
                amounts[key] += event.amount_cents
    return {key: WindowTotals(counts[key], amounts[key]) for key in sorted(counts)}


def final_watermark_ms(events: Iterable[Event], delay_ms: int) -> int:
    """The watermark once every event has been read: the largest event time seen, less the delay."""
    return max(event.event_time_ms for event in events) - delay_ms


def closed(aggregates: Mapping[WindowKey, WindowTotals], watermark_ms: int) -> dict[WindowKey, WindowTotals]:
    return {key: totals for key, totals in aggregates.items() if key.window_end_ms <= watermark_ms}


def daily_report(
    events: Iterable[Event], from_ms: int, to_ms: int, bucket_ms: int, top: int
) -> dict[str, Any]:
    """The batch job's report over the events whose event time is in [from_ms, to_ms), de-duplicated: per time
    bucket and event type the events and revenue, the totals, and the `top` users by events (ties by user id)."""
    chosen = [event for event in deduplicate(events) if from_ms <= event.event_time_ms < to_ms]
    buckets: dict[tuple[int, str], list[int]] = {}
    for event in chosen:
        bucket = event.event_time_ms - event.event_time_ms % bucket_ms
        totals = buckets.setdefault((bucket, event.event_type), [0, 0])
        totals[0] += 1
        totals[1] += event.amount_cents
    per_user = Counter(event.user_id for event in chosen)
    revenue = Counter[str]()
    for event in chosen:
        revenue[event.user_id] += event.amount_cents
    ranked = sorted(per_user, key=lambda user: (-per_user[user], user))[:top]
    return {
        "from_ms": from_ms,
        "to_ms": to_ms,
        "events": len(chosen),
        "users": len(per_user),
        "revenue_cents": sum(event.amount_cents for event in chosen),
        "buckets": [
            {"bucket_start_ms": bucket, "event_type": event_type, "events": n, "revenue_cents": cents}
            for (bucket, event_type), (n, cents) in sorted(buckets.items())
        ],
        "top_users": [
            {"user_id": user, "events": per_user[user], "revenue_cents": revenue[user]} for user in ranked
        ],
    }
