"""The event generator: N clickstream events a second into a topic, reproducible from a seed.

    python -m pipelines.generator --bootstrap 127.0.0.1:9092 --topic events --rate 200 --count 10000 --seed 7 \\
        --events-file events.jsonl

Each event (pipelines/events.py) is one record: the user id as key, the event as JSON, the event time as its
timestamp (CreateTime), produced by an idempotent producer (acks=all) at a steady rate. With `--count` it stops after
that many records (duplicates included), else it runs until interrupted. `--events-file` writes every record value
in the order produced, one a line; the same events come again from the same seed and settings
(`pipelines.events.take`), which the run prints.

Event times start at `--start-time` and advance by `--interval-ms` per event. By default the interval is the rate's
(1000 / rate ms: event time follows the wall clock); a larger interval compresses minutes of event time into seconds
(a test sees windows close quickly). Then the default start is early enough that the last event time is the moment
the run ends, never in the future: brokers may refuse timestamps ahead of their clock (Kafka 4's
`log.message.timestamp.after.max.ms` is an hour).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from confluent_kafka import KafkaError, Message, Producer

from pipelines.events import Event, GeneratorSettings, generate

# How often the producer's delivery callbacks run and the pace is checked.
TICK_S = 0.005
FLUSH_TIMEOUT_S = 60.0


def default_start_ms(now_ms: int, count: int | None, rate: float, interval_ms: int) -> int:
    """The first event time: now, unless event time runs faster than the wall clock (then early enough for the
    last of `count` events to be now)."""
    ahead_per_event = interval_ms - 1000 / rate
    if count is None or ahead_per_event <= 0:
        return now_ms
    return now_ms - int(count * ahead_per_event)


@dataclass
class GeneratorStats:
    produced: int = 0
    acked: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    # partition -> the offset after the last record acknowledged there
    end_offsets: dict[int, int] = field(default_factory=dict)

    def delivered(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.failed += 1
            if len(self.errors) < 10:
                self.errors.append(str(error))
            return
        self.acked += 1
        partition, offset = message.partition(), message.offset()
        if partition is not None and offset is not None:
            self.end_offsets[partition] = max(self.end_offsets.get(partition, 0), offset + 1)


class Generator:
    """Produces the events of `settings` into `topic`, `rate` a second, `count` of them (None: until stopped)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        settings: GeneratorSettings,
        *,
        rate: float,
        count: int | None,
        events_file: Path | None = None,
    ) -> None:
        if rate <= 0:
            raise ValueError("the rate must be positive")
        self.topic = topic
        self.settings = settings
        self.rate = rate
        self.count = count
        self.events_file = events_file
        self.stats = GeneratorStats()
        self.produced: list[Event] = []
        self.stop_event = threading.Event()
        self.events = generate(settings)
        if events_file is not None:
            events_file.parent.mkdir(parents=True, exist_ok=True)
            events_file.write_bytes(b"")
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 10,
                "compression.type": "lz4",
                "client.id": "kbroker-pipeline-generator",
            }
        )

    def run(
        self, on_tick: Callable[[GeneratorStats], None] | None = None, *, until: int | None = None
    ) -> GeneratorStats:
        """Produce until `until` (default: `count`) records are out in all, or stop() is called, then wait for every
        acknowledgement. A later call goes on with the next events (a test pauses the stream so)."""
        until = self.count if until is None else until
        out: IO[bytes] | None = self.events_file.open("ab") if self.events_file else None
        try:
            started, already = time.monotonic(), self.stats.produced
            while not self.stop_event.is_set() and (until is None or self.stats.produced < until):
                due = already + int((time.monotonic() - started) * self.rate) + 1
                if until is not None:
                    due = min(due, until)
                while self.stats.produced < due:
                    self._produce(next(self.events), out)
                self.producer.poll(0)
                if on_tick is not None:
                    on_tick(self.stats)
                time.sleep(TICK_S)
            remaining = self.producer.flush(FLUSH_TIMEOUT_S)
            if remaining:
                self.stats.failed += remaining
                self.stats.errors.append(f"{remaining} records unacknowledged after {FLUSH_TIMEOUT_S:.0f} s")
        finally:
            if out is not None:
                out.close()
        return self.stats

    def stop(self) -> None:
        self.stop_event.set()

    def _produce(self, event: Event, out: IO[bytes] | None) -> None:
        value = event.to_json()
        while True:
            try:
                self.producer.produce(
                    self.topic,
                    value,
                    event.user_id.encode(),
                    timestamp=event.event_time_ms,
                    on_delivery=self.stats.delivered,
                )
                break
            except BufferError:  # the producer's queue is full: let it send
                self.producer.poll(0.05)
        self.stats.produced += 1
        self.produced.append(event)
        if out is not None:
            out.write(value + b"\n")


def parse_start(text: str) -> int:
    """An ISO 8601 time (UTC unless it says otherwise) or milliseconds since the epoch."""
    if text.isdigit():
        return int(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def add_event_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that decide the events (shared with pipelines/run.py)."""
    parser.add_argument("--seed", type=int, default=1, help="(default: 1)")
    parser.add_argument("--rate", type=float, default=100.0, help="records a second (default: 100)")
    parser.add_argument(
        "--interval-ms",
        type=int,
        help="event time between consecutive events (default: 1000 / rate, the wall clock's pace)",
    )
    parser.add_argument(
        "--start-time",
        help="the first event time, ISO 8601 or epoch ms (default: now, or earlier when event time runs faster "
        "than the clock; see above)",
    )
    parser.add_argument("--users", type=int, default=200, help="distinct user ids (default: 200)")
    parser.add_argument(
        "--late-fraction", type=float, default=0.02, help="share of events that arrive late (default: 0.02)"
    )
    parser.add_argument(
        "--max-lateness",
        type=int,
        default=120,
        metavar="SECONDS",
        help="a late event's time is between half this and this far behind (default: 120; keep it well under the "
        "streaming job's --watermark-delay)",
    )
    parser.add_argument(
        "--duplicate-fraction",
        type=float,
        default=0.02,
        help="share of events followed by a re-sent copy of a recent one (default: 0.02)",
    )


def settings_from(
    args: argparse.Namespace, count: int | None, now_ms: int | None = None
) -> GeneratorSettings:
    interval_ms = args.interval_ms if args.interval_ms is not None else max(1, round(1000 / args.rate))
    if args.start_time is not None:
        start_ms = parse_start(args.start_time)
    else:
        now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
        start_ms = default_start_ms(now, count, args.rate, interval_ms)
    return GeneratorSettings(
        seed=args.seed,
        start_ms=start_ms,
        interval_ms=interval_ms,
        users=args.users,
        late_fraction=args.late_fraction,
        max_lateness_ms=args.max_lateness * 1000,
        duplicate_fraction=args.duplicate_fraction,
    )


def describe(settings: GeneratorSettings) -> str:
    """The settings as the Python call that regenerates the same events."""
    return f"pipelines.events.take({settings!r}, COUNT)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.generator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bootstrap", required=True, help="the Kafka bootstrap servers")
    parser.add_argument("--topic", default="events", help="(default: events)")
    parser.add_argument("--count", type=int, help="records to produce, duplicates included (default: no end)")
    parser.add_argument(
        "--events-file", type=Path, help="write each record's value here, one a line, in order"
    )
    add_event_arguments(parser)
    args = parser.parse_args(argv)
    settings = settings_from(args, args.count)
    print(f"events: {describe(settings)}", file=sys.stderr)
    generator = Generator(
        args.bootstrap, args.topic, settings, rate=args.rate, count=args.count, events_file=args.events_file
    )
    last = [0.0]

    def tick(stats: GeneratorStats) -> None:
        now = time.monotonic()
        if now - last[0] >= 1.0:
            last[0] = now
            print(f"produced {stats.produced}, acknowledged {stats.acked}", file=sys.stderr)

    # Ctrl-C or SIGTERM stops producing; what was produced is still flushed and counted.
    signal.signal(signal.SIGINT, lambda signum, frame: generator.stop())
    signal.signal(signal.SIGTERM, lambda signum, frame: generator.stop())
    stats = generator.run(tick)
    print(f"produced {stats.produced}, acknowledged {stats.acked}, failed {stats.failed}", file=sys.stderr)
    for error in stats.errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if stats.failed else 0


if __name__ == "__main__":
    sys.exit(main())
