"""The clickstream events of the pipeline: what one event is, and the exact sequence a seed makes.

An event is one JSON object, the value of one Kafka record keyed by its user id and stamped (CreateTime) with its
event time:

    {"event_id": "1c0f…", "user_id": "u0042", "event_type": "purchase", "page": "/product/17",
     "amount_cents": 2599, "event_time": "2026-11-24T10:00:00.120Z"}

`generate(settings)` yields the records to produce, in order, as a pure function of the settings: the same seed and
settings give the same events, byte for byte. Event times advance by `interval_ms` per event from `start_ms`; a
`late_fraction` of the events carry an event time between half of `max_lateness_ms` and all of it behind (a phone
that was offline), and after a `duplicate_fraction` of the events one of the last few is sent again unchanged (a
producer's retry that got through twice). Everything downstream (the reference in reference.py, the tests) relies on
lateness staying below the streaming job's watermark delay.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

# Event types and their weights: most visits are page views, few end in a purchase.
EVENT_TYPES = ("page_view", "click", "add_to_cart", "purchase")
TYPE_WEIGHTS = (60, 25, 10, 5)
PAGES = 50
# A duplicate re-sends one of the last RESEND_HORIZON events.
RESEND_HORIZON = 20


@dataclass(frozen=True)
class Event:
    event_id: str
    user_id: str
    event_type: str
    page: str
    amount_cents: int
    event_time_ms: int

    def to_json(self) -> bytes:
        """The Kafka record's value: compact JSON, keys in a fixed order."""
        return json.dumps(
            {
                "event_id": self.event_id,
                "user_id": self.user_id,
                "event_type": self.event_type,
                "page": self.page,
                "amount_cents": self.amount_cents,
                "event_time": format_time(self.event_time_ms),
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_json(cls, value: bytes | str) -> Event:
        fields = json.loads(value)
        return cls(
            event_id=fields["event_id"],
            user_id=fields["user_id"],
            event_type=fields["event_type"],
            page=fields["page"],
            amount_cents=int(fields["amount_cents"]),
            event_time_ms=parse_time(fields["event_time"]),
        )


@dataclass(frozen=True)
class GeneratorSettings:
    """Everything the event sequence depends on."""

    seed: int
    start_ms: int
    interval_ms: int = 1000
    users: int = 200
    late_fraction: float = 0.02
    max_lateness_ms: int = 120_000
    duplicate_fraction: float = 0.02


def format_time(ms: int) -> str:
    """ISO 8601 in UTC with milliseconds, as Spark's JSON reader parses it into a timestamp."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_time(text: str) -> int:
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def generate(settings: GeneratorSettings) -> Iterator[Event]:
    """The events to produce, in order, without end (take as many as wanted)."""
    rng = random.Random(settings.seed)
    recent: list[Event] = []
    index = 0
    while True:
        nominal = settings.start_ms + index * settings.interval_ms
        index += 1
        event_time = nominal
        if rng.random() < settings.late_fraction:
            half = settings.max_lateness_ms // 2
            event_time -= rng.randint(half, settings.max_lateness_ms)
        event_type = rng.choices(EVENT_TYPES, TYPE_WEIGHTS)[0]
        event = Event(
            event_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            user_id=f"u{rng.randrange(settings.users):04d}",
            event_type=event_type,
            page=f"/product/{rng.randrange(PAGES)}",
            amount_cents=rng.randint(100, 20_000) if event_type == "purchase" else 0,
            event_time_ms=event_time,
        )
        yield event
        recent = [*recent[-(RESEND_HORIZON - 1) :], event]
        if rng.random() < settings.duplicate_fraction:
            yield rng.choice(recent)


def take(settings: GeneratorSettings, count: int) -> list[Event]:
    """The first `count` records of a run (duplicates count as records)."""
    out: list[Event] = []
    for event in generate(settings):
        if len(out) == count:
            break
        out.append(event)
    return out


def write_events(path: Path, events: Iterable[Event]) -> None:
    """One record value a line, in production order."""
    with path.open("wb") as file:
        for event in events:
            file.write(event.to_json() + b"\n")


def read_events(path: Path) -> list[Event]:
    return [Event.from_json(line) for line in path.read_bytes().splitlines() if line.strip()]
