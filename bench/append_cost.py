"""What one append costs the broker, and what it burns while idle, as partitions and parked fetchers grow.

    .venv/bin/python bench/append_cost.py --kbroker-rev HEAD                    # writes bench/results-append-cost.md
    .venv/bin/python bench/append_cost.py --kbroker-rev OLD --kbroker-rev NEW  # before/after, interleaved
    .venv/bin/python bench/append_cost.py --quick                               # <1 min smoke check, prints only

For each revision and each partition count P, a single-node kbroker holds a topic of P partitions whose partition 0
receives the appends. 50 raw connections ("parked fetchers") long-poll Fetch on the *other* partitions, which never
receive data, so every fetch waits its whole max_wait_ms and is sent again. One more connection produces one 100 B
record per request to partition 0 at a fixed rate, acks=1 then acks=-1. The broker's CPU comes from /proc/PID/stat
and schedstat. Every client here speaks Kafka with the project's own codec (protocol/) over plain sockets; brokers
are started through tests/broker_process.py. See bench/README.md.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime
import os
import shlex
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(
        0, str(REPO)
    )  # `bench.` and `tests.` are imported by package name, from the repository root

from bench.common import (  # noqa: E402
    BENCH,
    BenchError,
    KBrokerSource,
    cpu_delta,
    kbroker_sources,
    load_average,
    machine,
    sample_cpu,
)
from protocol.codec import decode_from, encode_into  # noqa: E402
from protocol.errors import ErrorCode, ProtocolError  # noqa: E402
from protocol.framing import FrameDecoder, encode_frame  # noqa: E402
from protocol.headers import (  # noqa: E402
    RequestHeader,
    encode_request_header,
    read_response_header,
    request_header_version,
    response_header_version,
)
from protocol.messages import RESPONSES, SCHEMAS  # noqa: E402
from protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest  # noqa: E402
from protocol.messages.create_topics_response import CreateTopicsResponse  # noqa: E402
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic  # noqa: E402
from protocol.messages.fetch_response import FetchResponse  # noqa: E402
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic  # noqa: E402
from protocol.messages.metadata_response import MetadataResponse  # noqa: E402
from protocol.messages.produce_request import (  # noqa: E402
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from protocol.messages.produce_response import ProduceResponse  # noqa: E402
from protocol.primitives import Reader, Writer  # noqa: E402
from protocol.records import Record, build_batch  # noqa: E402
from tests.broker_process import BrokerProcess  # noqa: E402

# Versions every kbroker since Kafka 4.0's minimums serves: Fetch 12 is the last naming topics by name.
FETCH_VERSION = 12
PRODUCE_VERSION = 9
METADATA_VERSION = 12
CREATE_TOPICS_VERSION = 7

TARGET_TOPIC = "append-target"
PARKED_TOPIC = "parked"  # only when P = 1: the fetchers' own idle topic, one partition each
BROKER_OVERRIDES = {
    # retention would otherwise scan every partition every 5 min: not what is measured here
    "log.retention.check.interval.ms": str(24 * 3600 * 1000),
}
PRODUCE_TIMEOUT_MS = 30_000
RESPONSE_TIMEOUT_S = 60.0
READY_TIMEOUT_S = 300.0


# --------------------------------------------------------------------------------------------------------------
# a Kafka connection over a blocking socket, with the project's codec


class Connection:
    """One TCP connection. Requests may be pipelined: a broker answers a connection's requests in order, so a FIFO
    of what was sent says how to decode each response. Not thread-safe; one thread per connection."""

    def __init__(
        self, address: tuple[str, int], *, client_id: str, timeout: float = RESPONSE_TIMEOUT_S
    ) -> None:
        self._sock = socket.create_connection(address, timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._timeout = timeout
        self._client_id = client_id
        self._decoder = FrameDecoder()
        self._pending: collections.deque[tuple[int, type, int]] = collections.deque()
        self._correlation_id = 0

    def send(self, msg: object, version: int) -> None:
        schema = SCHEMAS[type(msg)]
        self._correlation_id += 1
        header = RequestHeader(
            request_api_key=schema.api_key,
            request_api_version=version,
            correlation_id=self._correlation_id,
            client_id=self._client_id,
        )
        w = Writer()
        encode_request_header(w, header, request_header_version(schema, version))
        encode_into(w, msg, version)
        self._pending.append((self._correlation_id, RESPONSES[schema.api_key], version))
        self._sock.settimeout(self._timeout)  # receive() may have left a short one
        self._sock.sendall(encode_frame(w.out))

    def receive(self, timeout: float | None = None) -> object | None:
        """The next response, decoded; None if none is whole within `timeout` s (None: the connection's timeout,
        then BenchError)."""
        deadline = time.monotonic() + (self._timeout if timeout is None else timeout)
        while True:
            frame = self._decoder.next_frame()
            if isinstance(frame, bytearray):
                return self._decode(frame)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if timeout is None:
                    raise BenchError(f"no response within {self._timeout:g} s")
                return None
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(1 << 20)
            except TimeoutError:
                continue
            if not data:
                raise BenchError("the broker closed the connection")
            self._decoder.feed(data)

    def request(self, msg: object, version: int) -> object:
        self.send(msg, version)
        response = self.receive()
        assert response is not None
        return response

    def _decode(self, frame: bytearray) -> object:
        if not self._pending:
            raise BenchError("a response to no request")
        correlation_id, cls, version = self._pending.popleft()
        schema = SCHEMAS[cls]
        r = Reader(frame)
        got = read_response_header(r, response_header_version(schema, version))
        if got != correlation_id:
            raise BenchError(f"response to correlation id {got}, expected {correlation_id}")
        response: object = decode_from(cls, version, r)
        return response

    def close(self) -> None:
        """Also from another thread: a blocked receive() then fails at once."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


M = TypeVar("M")


def expect(response: object, cls: type[M]) -> M:
    if not isinstance(response, cls):
        raise BenchError(f"expected a {cls.__name__}, got {type(response).__name__}")
    return response


# --------------------------------------------------------------------------------------------------------------
# topics


@dataclass(frozen=True, slots=True)
class Layout:
    """The topics of one partition count, and which partitions each parked fetcher waits on."""

    partitions: int  # P, of the target topic
    topics: dict[str, int]  # name -> partition count
    slices: list[tuple[str, list[int]]]  # one per parked fetcher: (topic, its partitions)

    def describe(self) -> str:
        """e.g. "50 x 99-100 (partitions 1..)" """
        sizes = sorted({len(parts) for _, parts in self.slices})
        if not sizes:
            return "none"
        each = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        where = f"topic {PARKED_TOPIC!r}" if PARKED_TOPIC in self.topics else "partitions 1.."
        return f"{len(self.slices)} x {each} ({where})"


def layout(partitions: int, consumers: int) -> Layout:
    """P > 1: the fetchers share partitions 1..P-1 of the target topic round-robin (disjoint slices; fewer fetchers
    when there are fewer partitions than fetchers). P = 1: there is no other partition, so they park on a second,
    otherwise idle topic with one partition per fetcher."""
    if partitions == 1 and consumers > 0:
        return Layout(
            partitions,
            {TARGET_TOPIC: 1, PARKED_TOPIC: consumers},
            [(PARKED_TOPIC, [i]) for i in range(consumers)],
        )
    others = list(range(1, partitions))
    slices = [(TARGET_TOPIC, others[i::consumers]) for i in range(min(consumers, len(others)))]
    return Layout(partitions, {TARGET_TOPIC: partitions}, slices)


def create_topics(address: tuple[str, int], topics: dict[str, int]) -> None:
    request = CreateTopicsRequest(
        topics=[
            CreatableTopic(name=name, num_partitions=n, replication_factor=1) for name, n in topics.items()
        ],
        timeout_ms=int(READY_TIMEOUT_S * 1000),
    )
    with Connection(address, client_id="append-cost-admin", timeout=READY_TIMEOUT_S) as conn:
        response = expect(conn.request(request, CREATE_TOPICS_VERSION), CreateTopicsResponse)
    for topic in response.topics:
        if topic.error_code != ErrorCode.NONE:
            raise BenchError(
                f"CreateTopics {topic.name}: {ErrorCode(topic.error_code).name} {topic.error_message}"
            )


def wait_topics(address: tuple[str, int], topics: dict[str, int], timeout: float = READY_TIMEOUT_S) -> None:
    """Until Metadata shows every partition of `topics` with a leader."""
    request = MetadataRequest(
        topics=[MetadataRequestTopic(name=name) for name in topics], allow_auto_topic_creation=False
    )
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        with Connection(address, client_id="append-cost-admin") as conn:
            response = expect(conn.request(request, METADATA_VERSION), MetadataResponse)
        ready = {
            t.name: len(t.partitions)
            for t in response.topics
            if t.error_code == ErrorCode.NONE
            and all(p.leader_id >= 0 and not p.error_code for p in t.partitions)
        }
        if all(ready.get(name) == n for name, n in topics.items()):
            return
        last = f"ready partitions per topic: {ready}"
        time.sleep(0.2)
    raise BenchError(f"topics {topics} not ready after {timeout:g} s; {last}")


# --------------------------------------------------------------------------------------------------------------
# clients


class ParkedFetcher:
    """A consumer parked on partitions that receive nothing: Fetch at their log end (offset 0) with min_bytes=1, so
    the broker holds each request for max_wait_ms; sent again as soon as it returns, until stop()."""

    def __init__(self, index: int, topic: str, partitions: list[int], max_wait_ms: int) -> None:
        self.index = index
        self.max_wait_ms = max_wait_ms
        self.sent = 0
        self.responses = 0
        self.error: str | None = None
        self._stopping = threading.Event()
        self._conn: Connection | None = None
        self._request = FetchRequest(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=50 * 1024 * 1024,
            topics=[
                FetchTopic(
                    topic=topic,
                    partitions=[
                        FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1 << 20)
                        for p in partitions
                    ],
                )
            ],
        )
        self._thread = threading.Thread(target=self._run, name=f"parked-{index}", daemon=True)

    def start(self, address: tuple[str, int]) -> None:
        self._conn = Connection(
            address, client_id=f"parked-{self.index}", timeout=self.max_wait_ms / 1000 + 30
        )
        self._thread.start()

    def _run(self) -> None:
        assert self._conn is not None
        try:
            while not self._stopping.is_set():
                self._conn.send(self._request, FETCH_VERSION)
                self.sent += 1
                response = expect(self._conn.receive(), FetchResponse)
                problem = fetch_problem(response)
                if problem is not None:
                    # from now on the broker would answer at once: a busy loop, not a parked consumer
                    self.error = problem
                    return
                self.responses += 1
        except (OSError, ProtocolError, BenchError) as e:
            if not self._stopping.is_set():
                self.error = repr(e)

    def stop(self) -> None:
        self._stopping.set()
        if self._conn is not None:
            self._conn.close()
        if self._thread.is_alive():
            self._thread.join(10)


def fetch_problem(response: FetchResponse) -> str | None:
    if response.error_code:
        return f"Fetch error {ErrorCode(response.error_code).name}"
    for topic in response.responses:
        for p in topic.partitions:
            if p.error_code:
                return f"Fetch {topic.topic}-{p.partition_index}: {ErrorCode(p.error_code).name}"
            if p.records:
                return f"Fetch {topic.topic}-{p.partition_index}: records on a partition meant to stay empty"
    return None


@contextlib.contextmanager
def parked_fetchers(
    address: tuple[str, int], plan: Layout, max_wait_ms: int
) -> Iterator[list[ParkedFetcher]]:
    """Every fetcher of the layout connected and parked (each has sent its first Fetch, and the first ones have
    come back when max_wait_ms is short); all closed on exit."""
    fetchers = [ParkedFetcher(i, topic, parts, max_wait_ms) for i, (topic, parts) in enumerate(plan.slices)]
    try:
        for fetcher in fetchers:
            fetcher.start(address)
        deadline = time.monotonic() + 30
        while any(f.sent == 0 for f in fetchers):
            if time.monotonic() > deadline:
                raise BenchError("parked fetchers did not send their first request within 30 s")
            time.sleep(0.01)
        time.sleep(min(max_wait_ms / 1000, 1.0) + 0.5)
        check_fetchers(fetchers)
        yield fetchers
    finally:
        for fetcher in fetchers:
            fetcher.stop()


def check_fetchers(fetchers: list[ParkedFetcher]) -> None:
    for fetcher in fetchers:
        if fetcher.error is not None:
            raise BenchError(f"parked fetcher {fetcher.index}: {fetcher.error}")


@dataclass(frozen=True, slots=True)
class ProduceRun:
    acks: int
    requests: int
    seconds: float  # from the first request sent to the last response
    cpu: float | None  # broker CPU seconds over that time
    p50_ms: float
    p99_ms: float


def produce_run(
    address: tuple[str, int],
    pid: int,
    batch: bytes,
    *,
    acks: int,
    rate: float,
    seconds: float,
    max_in_flight: int,
) -> ProduceRun:
    """One connection sends one batch (one record) per Produce request to partition 0 at `rate` requests/s for
    `seconds`, open loop (a late request goes at once) but with at most `max_in_flight` unanswered; then waits
    for the last responses. One request before the clock starts warms the connection and the broker's code path."""
    request = ProduceRequest(
        acks=acks,
        timeout_ms=PRODUCE_TIMEOUT_MS,
        topic_data=[
            TopicProduceData(name=TARGET_TOPIC, partition_data=[PartitionProduceData(index=0, records=batch)])
        ],
    )
    with Connection(address, client_id=f"appender-acks{acks}") as conn:
        check_produce(conn.request(request, PRODUCE_VERSION))
        sent_at: collections.deque[float] = collections.deque()
        latencies: list[float] = []
        sent = 0
        cpu0 = sample_cpu(pid)
        start = time.perf_counter()
        end = start + seconds
        last = start
        while True:
            now = time.perf_counter()
            sending = now < end
            if sending and len(sent_at) < max_in_flight:
                due = start + sent / rate
                if now >= due:
                    sent_at.append(now)
                    conn.send(request, PRODUCE_VERSION)
                    sent += 1
                    continue
                response = conn.receive(timeout=due - now)
            elif sent_at:
                response = (
                    conn.receive()
                )  # in-flight full, or draining: the connection's timeout is the limit
            else:
                break
            if response is not None:
                last = time.perf_counter()
                latencies.append(last - sent_at.popleft())
                check_produce(response)
        cpu1 = sample_cpu(pid)
    latencies.sort()
    return ProduceRun(
        acks=acks,
        requests=sent,
        seconds=last - start,
        cpu=cpu_delta(cpu0, cpu1),
        p50_ms=1000 * quantile(latencies, 0.50),
        p99_ms=1000 * quantile(latencies, 0.99),
    )


def check_produce(response: object) -> None:
    produced = expect(response, ProduceResponse)
    for topic in produced.responses:
        for p in topic.partition_responses:
            if p.error_code:
                raise BenchError(
                    f"Produce {topic.name}-{p.index}: {ErrorCode(p.error_code).name} {p.error_message}"
                )


def quantile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def idle_share(pid: int, seconds: float) -> float | None:
    """Share of one core the broker uses over `seconds` of whatever is going on now."""
    a, t0 = sample_cpu(pid), time.perf_counter()
    time.sleep(seconds)
    b, t1 = sample_cpu(pid), time.perf_counter()
    used = cpu_delta(a, b)
    return None if used is None else used / (t1 - t0)


# --------------------------------------------------------------------------------------------------------------
# the run


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    partitions: list[int]
    consumers: int
    max_wait_ms: int
    rate: float
    seconds: float
    idle_seconds: float
    settle_seconds: float
    rounds: int
    value_size: int
    max_in_flight: int
    acks_modes: list[int]


@dataclass(slots=True)
class Measurement:
    round: int
    source: str
    partitions: int
    idle_none: float | None  # share of one core, nothing connected
    idle_parked: float | None  # share of one core, only the parked fetchers
    fetch_responses_per_s: float
    produce: dict[int, ProduceRun] = field(default_factory=dict)

    def cpu_per_request(self, acks: int) -> float | None:
        run = self.produce.get(acks)
        return None if run is None or run.cpu is None or not run.requests else run.cpu / run.requests

    def marginal_cpu_per_request(self, acks: int) -> float | None:
        """CPU per request over what the broker burns anyway with the fetchers parked: the append's own cost."""
        run = self.produce.get(acks)
        if run is None or run.cpu is None or not run.requests or self.idle_parked is None:
            return None
        return (run.cpu - self.idle_parked * run.seconds) / run.requests


class BenchBroker(BrokerProcess):
    """The test fixture's broker, with a longer wait for readiness: loading thousands of partitions takes a
    while on this machine."""

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        super().wait_ready(timeout)


@dataclass(slots=True)
class Cell:
    """One revision with one partition count: its broker's data directory and port are kept across rounds; the
    broker is started for each measurement and stopped after it."""

    source: KBrokerSource
    layout: Layout
    broker: BenchBroker

    @property
    def name(self) -> str:
        return f"{self.source.label} P={self.layout.partitions}"

    @property
    def address(self) -> tuple[str, int]:
        return (self.broker.host, self.broker.port)

    def prepare(self) -> float:
        """Start the broker on an empty data directory, create the topics, stop it; returns the seconds taken."""
        t0 = time.monotonic()
        self.broker.start()
        try:
            create_topics(self.address, self.layout.topics)
            wait_topics(self.address, self.layout.topics)
        finally:
            self.broker.terminate()
        return time.monotonic() - t0


def make_cells(sources: list[KBrokerSource], plan: Plan, root: Path) -> list[Cell]:
    """P by P, every revision next to the others, so that what is compared is measured minutes apart at most."""
    cells = []
    for partitions in plan.partitions:
        for i, source in enumerate(sources):
            name = f"src{i}-p{partitions}"
            broker = BenchBroker(
                root / name / "data",
                overrides=BROKER_OVERRIDES,
                log_path=root / name / "broker.log",
                source_dir=source.directory,
            )
            cells.append(Cell(source, layout(partitions, plan.consumers), broker))
    return cells


def measure(cell: Cell, plan: Plan, round_index: int, acks_order: list[int], batch: bytes) -> Measurement:
    broker = cell.broker
    started = time.monotonic()
    broker.start()
    try:
        wait_topics(cell.address, cell.layout.topics)
        ready = time.monotonic() - started
        time.sleep(plan.settle_seconds)
        idle_none = idle_share(broker.pid, plan.idle_seconds)
        with parked_fetchers(cell.address, cell.layout, plan.max_wait_ms) as fetchers:
            before, t0 = sum(f.responses for f in fetchers), time.perf_counter()
            idle_parked = idle_share(broker.pid, plan.idle_seconds)
            fetch_rate = (sum(f.responses for f in fetchers) - before) / (time.perf_counter() - t0)
            m = Measurement(
                round_index, cell.source.label, cell.layout.partitions, idle_none, idle_parked, fetch_rate
            )
            for acks in acks_order:
                m.produce[acks] = produce_run(
                    cell.address,
                    broker.pid,
                    batch,
                    acks=acks,
                    rate=plan.rate,
                    seconds=plan.seconds,
                    max_in_flight=plan.max_in_flight,
                )
            check_fetchers(fetchers)
    finally:
        broker.terminate()
    shown = "  ".join(
        f"acks={acks}: {fmt_us(m.cpu_per_request(acks))} µs/req ({fmt_us(m.marginal_cpu_per_request(acks))} over "
        f"parked), {run.requests / run.seconds:.0f} req/s, p99 {run.p99_ms:.1f} ms"
        for acks, run in m.produce.items()
    )
    print(
        f"{cell.name:>22}: ready in {ready:4.1f} s; idle {fmt_share(idle_none)}, parked {fmt_share(idle_parked)} "
        f"({fetch_rate:.0f} fetches/s); {shown}",
        flush=True,
    )
    return m


def run(cells: list[Cell], plan: Plan) -> tuple[list[Measurement], list[str]]:
    batch = bytes(
        build_batch(
            [Record(offset=0, timestamp=int(time.time() * 1000), key=None, value=os.urandom(plan.value_size))]
        )
    )
    results: list[Measurement] = []
    failures: list[str] = []
    for round_index in range(plan.rounds):
        order = cells if round_index % 2 == 0 else cells[::-1]
        acks_order = plan.acks_modes if round_index % 2 == 0 else plan.acks_modes[::-1]
        print(f"--- round {round_index + 1}/{plan.rounds}", flush=True)
        for cell in order:
            try:
                results.append(measure(cell, plan, round_index, acks_order, batch))
            except (BenchError, AssertionError, OSError, ProtocolError) as e:
                text = f"{cell.name}, round {round_index + 1}: {e!r}\n{cell.broker.log_tail(3000)}"
                failures.append(text)
                print(f"{cell.name:>22}: FAILED {text}", flush=True)
    return results, failures


# --------------------------------------------------------------------------------------------------------------
# report


def fmt_us(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e6:,.0f}"


def fmt_share(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"


def summary(values: Sequence[float | None], fmt: Callable[[float], str]) -> str:
    """Median, and the range over the rounds in parentheses."""
    present = sorted(v for v in values if v is not None)
    if not present:
        return "—"
    text = fmt(statistics.median(present))
    if len(present) > 1:
        text += f" ({fmt(present[0])} to {fmt(present[-1])})"
    return text


def paired_ratio(rows: list[Measurement], base: list[Measurement], acks: int) -> float | None:
    """Median over rounds of the CPU per request of `rows` over that of `base` in the same round: two runs a
    minute or two apart at most."""
    by_round = {m.round: m.cpu_per_request(acks) for m in base}
    ratios = []
    for m in rows:
        a, b = m.cpu_per_request(acks), by_round.get(m.round)
        if a is not None and b:
            ratios.append(a / b)
    return statistics.median(ratios) if ratios else None


def report(
    sources: list[KBrokerSource],
    plan: Plan,
    results: list[Measurement],
    failures: list[str],
    meta: dict[str, str],
) -> str:
    def rows_of(source: KBrokerSource, partitions: int) -> list[Measurement]:
        return [m for m in results if m.source == source.label and m.partitions == partitions]

    us: Callable[[float], str] = lambda x: f"{x * 1e6:,.0f}"  # noqa: E731
    share: Callable[[float], str] = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    layouts = {p: layout(p, plan.consumers) for p in plan.partitions}
    out = [
        f"Date: {meta['date']}  ",
        f"Machine: {meta['machine']}  ",
        f"kbroker: {'; '.join(f'`{s.label}` = {s.description}' for s in sources)}  ",
        f"Command: `{meta['command']}`  ",
        f"Load average (1 min) at the start and the end: {meta['load_start']} / {meta['load_end']} "
        "(other work on the machine shows here)  ",
        f"Plan: {plan.rounds} round{'s' if plan.rounds != 1 else ''}; in each, every (partition count, revision) "
        "in turn, the order reversed every other round; for each a broker started on its data directory "
        "(topics created beforehand), "
        f"{plan.settle_seconds:g} s to settle, {plan.idle_seconds:g} s idle with nothing connected, "
        f"{plan.idle_seconds:g} s idle with the fetchers parked, then "
        + " and ".join(f"acks={a}" for a in plan.acks_modes)
        + f" (order alternating) for {plan.seconds:g} s each at {plan.rate:g} Produce requests/s of one "
        f"{plan.value_size} B record to partition 0 (open loop, at most {plan.max_in_flight} in flight, one "
        f"connection, our own codec, Produce v{PRODUCE_VERSION}). Parked fetchers: Fetch v{FETCH_VERSION}, "
        f"max_wait_ms={plan.max_wait_ms}, min_bytes=1, at the log end of partitions that never receive data; "
        f"with P = 1 they park on a second topic {PARKED_TOPIC!r} of {plan.consumers} partitions, one each.  ",
        "",
        "### Idle: broker CPU, share of one core (median over rounds; range in parentheses)",
        "",
        "| partitions | kbroker | parked fetchers x partitions each | nothing connected | fetchers parked "
        "| fetch responses/s |",
        "|---|---|---|---|---|---|",
    ]
    for partitions in plan.partitions:
        for source in sources:
            rows = rows_of(source, partitions)
            out.append(
                f"| {partitions:,} | {source.label} | {layouts[partitions].describe()} "
                f"| {summary([m.idle_none for m in rows], share)} "
                f"| {summary([m.idle_parked for m in rows], share)} "
                f"| {summary([m.fetch_responses_per_s for m in rows], lambda x: f'{x:.0f}')} |"
            )
    compare = len(sources) > 1
    out += [
        "",
        "### One append: broker CPU per Produce request, µs (median over rounds; range in parentheses)",
        "",
        "*total*: the broker's CPU over the run divided by the requests; *over parked*: less what it burns in the "
        "same time with only the fetchers parked (the previous measurement), i.e. the append's own cost."
        + (f" *÷ {sources[0].label}*: the median of the per-round ratios of *total*." if compare else ""),
        "",
        "| partitions | kbroker | acks | CPU µs/request, total | over parked | requests/s achieved "
        "| latency p50 ms | p99 ms |" + (f" ÷ {sources[0].label} |" if compare else ""),
        "|---|---|---|---|---|---|---|---|" + ("---|" if compare else ""),
    ]
    for partitions in plan.partitions:
        for acks in plan.acks_modes:
            for source in sources:
                rows = [m for m in rows_of(source, partitions) if acks in m.produce]
                runs = [m.produce[acks] for m in rows]
                line = (
                    f"| {partitions:,} | {source.label} | {acks} "
                    f"| {summary([m.cpu_per_request(acks) for m in rows], us)} "
                    f"| {summary([m.marginal_cpu_per_request(acks) for m in rows], us)} "
                    f"| {summary([r.requests / r.seconds for r in runs], lambda x: f'{x:.0f}')} "
                    f"| {summary([r.p50_ms for r in runs], lambda x: f'{x:.2f}')} "
                    f"| {summary([r.p99_ms for r in runs], lambda x: f'{x:.1f}')} |"
                )
                if compare:
                    ratio = paired_ratio(rows, rows_of(sources[0], partitions), acks)
                    line += f" {'' if ratio is None else f'{ratio:.2f}'} |"
                out.append(line)
    out.append("")
    if failures:
        out += ["### Failures", ""]
        for text in failures:
            out += ["```", text, "```"]
        out.append("")
    out += ["<details><summary>Per-round values</summary>", ""]
    for m in sorted(results, key=lambda m: (m.partitions, m.source, m.round)):
        shown = "; ".join(
            f"acks={acks} {fmt_us(m.cpu_per_request(acks))} µs/req ({fmt_us(m.marginal_cpu_per_request(acks))} "
            f"over parked), {r.requests} requests in {r.seconds:.1f} s, p50/p99 {r.p50_ms:.2f}/{r.p99_ms:.1f} ms"
            for acks, r in sorted(m.produce.items())
        )
        out.append(
            f"- P={m.partitions} {m.source} round {m.round + 1}: idle {fmt_share(m.idle_none)}, parked "
            f"{fmt_share(m.idle_parked)} ({m.fetch_responses_per_s:.0f} fetches/s); {shown}"
        )
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------------------
# main


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--kbroker-rev",
        metavar="REV",
        action="append",
        help="run kbroker from a clean export of this commit; repeat to compare revisions side by side "
        "[the working tree]",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke check, under a minute: one round, short windows"
    )
    parser.add_argument("--partitions", type=int_list, help="partition counts P [1,100,5000]")
    parser.add_argument(
        "--consumers", type=int, default=50, help="parked fetchers (0: none, the bare cost of an append) [50]"
    )
    parser.add_argument("--max-wait-ms", type=int, default=500, help="the parked fetches' max_wait_ms [500]")
    parser.add_argument("--rate", type=float, default=200.0, help="Produce requests/s [200]")
    parser.add_argument("--seconds", type=float, help="duration of each produce run [10; quick 3]")
    parser.add_argument("--idle-seconds", type=float, help="duration of each idle measurement [5; quick 2]")
    parser.add_argument("--settle-seconds", type=float, help="wait after the broker is ready [3; quick 1]")
    parser.add_argument("--rounds", type=int, help="rounds [5; quick 1]")
    parser.add_argument("--value-size", type=int, default=100, help="bytes of the record's value [100]")
    parser.add_argument(
        "--max-in-flight", type=int, default=5, help="unanswered Produce requests at most [5]"
    )
    parser.add_argument("--acks", type=int_list, default=[1, -1], help="acks of the produce runs [1,-1]")
    parser.add_argument(
        "--out", type=Path, help="write the markdown here [bench/results-append-cost.md unless --quick]"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    plan = Plan(
        partitions=args.partitions or [1, 100, 5000],
        consumers=args.consumers,
        max_wait_ms=args.max_wait_ms,
        rate=args.rate,
        seconds=args.seconds or (3.0 if quick else 10.0),
        idle_seconds=args.idle_seconds or (2.0 if quick else 5.0),
        settle_seconds=args.settle_seconds if args.settle_seconds is not None else (1.0 if quick else 3.0),
        rounds=args.rounds or (1 if quick else 5),
        value_size=args.value_size,
        max_in_flight=args.max_in_flight,
        acks_modes=args.acks,
    )
    if min(plan.partitions) < 1 or plan.consumers < 0 or plan.rate <= 0 or plan.max_in_flight < 1:
        parser.error("partitions, rate and max-in-flight must be positive, consumers not negative")
    out = args.out if args.out is not None or quick else BENCH / "results-append-cost.md"
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "command": ".venv/bin/python bench/append_cost.py "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
        "load_start": load_average(),
    }
    print(meta["machine"], flush=True)
    root = Path(tempfile.mkdtemp(prefix="kbroker-append-cost-"))
    try:
        with kbroker_sources(args.kbroker_rev) as sources:
            for source in sources:
                print(f"kbroker {source.label}: {source.description}", flush=True)
            cells = make_cells(sources, plan, root)
            try:
                for cell in cells:
                    print(
                        f"{cell.name:>22}: topics {cell.layout.topics} created in {cell.prepare():.1f} s",
                        flush=True,
                    )
                results, failures = run(cells, plan)
            finally:
                for cell in cells:
                    cell.broker.stop()
            meta["load_end"] = load_average()
            text = report(sources, plan, results, failures, meta)
    except BenchError as e:
        print(f"append_cost: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(text)
    if out is not None:
        out.write_text(
            "# kbroker: the cost of one append, and idle CPU, against partitions and parked fetchers\n\n"
            "Written by `bench/append_cost.py`; see `bench/README.md` for what is measured.\n\n" + text
        )
        print(f"written to {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
