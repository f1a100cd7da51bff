"""Many concurrent connections producing and consuming, as a scenario of bench/run.py (`--connections 1000`).

N connections, half producers and half consumers, to one broker, on a fresh topic of N/2 partitions: producer i
appends to partition i, consumer i reads partition i from its start, so every record is read exactly once. The
clients are our own, minimal: asyncio over our codec (protocol/), spread over 4 worker processes of this program
(`python bench/connections.py --worker CONFIG`) because 1,000 librdkafka instances would need several threads each.

- **Producer**: Produce v9, acks=1, one batch of 10 records of 100 B (fresh create-time timestamps) per request,
  4 requests/s (20,000 records/s offered by 500 producers), paced by a schedule, one request in flight: a late
  response delays the next request, so a saturated broker shows as a rate below the offered one.
- **Consumer**: Fetch v12, `max_wait_ms=500`, `min_bytes=1`, 1 MiB per partition, the next offset after the last
  batch received (a long poll, as a consumer's fetcher does; no group: 500 groups would measure the coordinator).
- Every worker opens all its connections and sends one Produce on each producer's (until the partition takes it:
  Kafka answers NOT_LEADER_OR_FOLLOWER for a moment after it created 500 partitions), then waits for the word to
  start; producers produce for `seconds`; each consumer stops once it has read up to where its producer left the
  log (at most 30 s later).

Reported: the records acknowledged per second (rec/s), the records consumed and how many were never seen (lag: not
read within 30 s after the run), errors (failed connections, error codes, dropped connections), the Produce round
trip p50/p99 and the end-to-end latency p99 (a consumer's receive time less the batch's create time: ms resolution),
the broker's CPU over the run (/proc) per record produced (the consumption of the same records included) and its
largest RSS sampled every 0.5 s. Not against the mock (it auto-creates 4-partition topics only).

The bench raises its own open-file limit to the hard limit (inherited by the brokers and the workers); kbroker's
`max.connections` and `max.connections.per.ip` default to 2^31-1 as Kafka's do.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from crc32c import crc32c  # noqa: E402

from bench.common import BENCH, PYTHON, BenchError, cpu_delta  # noqa: E402
from protocol.codec import decode_from, encode_into  # noqa: E402
from protocol.headers import (  # noqa: E402
    RequestHeader,
    encode_request_header,
    read_response_header,
    request_header_version,
    response_header_version,
)
from protocol.messages import RESPONSES, SCHEMAS  # noqa: E402
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic  # noqa: E402
from protocol.messages.fetch_response import FetchResponse  # noqa: E402
from protocol.messages.produce_request import (  # noqa: E402
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from protocol.messages.produce_response import ProduceResponse  # noqa: E402
from protocol.primitives import Reader, Writer  # noqa: E402
from protocol.records import Record, build_batch  # noqa: E402

if TYPE_CHECKING:  # bench/run.py imports this module when asked for the scenario
    from bench.run import Attempt, Target

SCENARIO = "connections {n}"
FETCH_VERSION = 12
PRODUCE_VERSION = 9
WORKERS = 4
VALUE_SIZE = 100
BATCH_RECORDS = 10
REQUESTS_PER_S = 4.0  # per producer
CONSUMER_TAIL_S = 30.0  # at most: a consumer stops once it has read what its producer wrote
CONNECT_TIMEOUT_S = 60.0


# --------------------------------------------------------------------------------------------------------------
# the worker: asyncio clients over our codec


@dataclass
class WorkerConfig:
    host: str
    port: int
    topic: str
    producers: list[int]  # the partitions this worker's producers append to
    consumers: list[int]  # the partitions this worker's consumers read
    seconds: float
    requests_per_s: float = REQUESTS_PER_S
    batch_records: int = BATCH_RECORDS
    value_size: int = VALUE_SIZE
    acks: int = 1


@dataclass
class WorkerResult:
    connected: int = 0
    connect_errors: int = 0
    produced: int = 0  # records acknowledged without an error
    requests: int = 0
    consumed: int = 0
    fetches: int = 0
    error_codes: int = 0
    dropped: int = 0  # connections lost during the run
    first_error: str | None = None
    produce_ms: list[float] = field(default_factory=list)
    e2e_ms: list[float] = field(default_factory=list)

    def error(self, text: str) -> None:
        self.first_error = self.first_error or text


class Connection:
    """One connection, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self.reader = reader
        self.writer = writer
        self.client_id = client_id
        self.correlation_id = 0

    async def call(self, msg: object, version: int) -> object:
        return await self.exchange(encode_request(msg, version, self.client_id), type(msg), version)

    async def exchange(self, payload: bytearray, request_type: type, version: int) -> object:
        """Send an encoded request (its correlation id is set here) and decode the response."""
        self.correlation_id += 1
        payload[4:8] = self.correlation_id.to_bytes(4, "big")  # after api_key and api_version
        self.writer.write(len(payload).to_bytes(4, "big") + payload)
        await self.writer.drain()
        size = int.from_bytes(await self.reader.readexactly(4), "big")
        r = Reader(bytearray(await self.reader.readexactly(size)))
        cls = RESPONSES[SCHEMAS[request_type].api_key]
        got = read_response_header(r, response_header_version(SCHEMAS[cls], version))
        if got != self.correlation_id:
            raise BenchError(f"response to correlation id {got}, expected {self.correlation_id}")
        response: object = decode_from(cls, version, r)
        return response

    def close(self) -> None:
        self.writer.close()


def encode_request(msg: object, version: int, client_id: str) -> bytearray:
    schema = SCHEMAS[type(msg)]
    header = RequestHeader(
        request_api_key=schema.api_key, request_api_version=version, correlation_id=0, client_id=client_id
    )
    w = Writer()
    encode_request_header(w, header, request_header_version(schema, version))
    encode_into(w, msg, version)
    return bytearray(w.out)


class ProduceTemplate:
    """A producer's Produce request, encoded once: each send only stamps the batch with the current time (its
    records' create time, for the end-to-end latency) and recomputes the batch's CRC, so that the clients' own CPU
    stays small."""

    def __init__(self, cfg: WorkerConfig, partition: int, client_id: str) -> None:
        value = bytes(cfg.value_size)
        batch = bytes(build_batch([Record(i, 0, None, value) for i in range(cfg.batch_records)]))
        request = ProduceRequest(
            acks=cfg.acks,
            timeout_ms=30_000,
            topic_data=[
                TopicProduceData(
                    name=cfg.topic, partition_data=[PartitionProduceData(index=partition, records=batch)]
                )
            ],
        )
        self.payload = encode_request(request, PRODUCE_VERSION, client_id)
        self.at = self.payload.rfind(batch)
        self.end = self.at + len(batch)

    def stamped(self) -> bytearray:
        out = bytearray(self.payload)
        now = int(time.time() * 1000).to_bytes(8, "big")
        out[self.at + 27 : self.at + 35] = now  # first timestamp
        out[self.at + 35 : self.at + 43] = now  # max timestamp (every record's delta is 0)
        out[self.at + 17 : self.at + 21] = crc32c(out[self.at + 21 : self.end]).to_bytes(4, "big")
        return out


def walk_batches(records: bytes | memoryview, now_ms: float, e2e: list[float]) -> tuple[int, int | None]:
    """(records in the whole batches of a fetched records section, the offset after the last one); each batch's
    end-to-end latency from its first create time goes to `e2e`. Only the batch headers are read."""
    data = memoryview(records)
    pos = 0
    count = 0
    next_offset = None
    while pos + 61 <= len(data):
        base_offset = int.from_bytes(data[pos : pos + 8], "big")
        end = pos + 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        if end > len(data):
            break  # a partial batch at the end of the section
        last_delta = int.from_bytes(data[pos + 23 : pos + 27], "big")
        first_timestamp = int.from_bytes(data[pos + 27 : pos + 35], "big")
        count += int.from_bytes(data[pos + 57 : pos + 61], "big")
        e2e.append(now_ms - first_timestamp)
        next_offset = base_offset + last_delta + 1
        pos = end
    return count, next_offset


async def warm_up(conn: Connection, template: ProduceTemplate, partition: int) -> int:
    """One Produce before the clock, until the partition takes it (a broker may answer NOT_LEADER_OR_FOLLOWER for
    a moment after it created the topic); the offset after it, where the partition's consumer starts."""
    deadline = time.monotonic() + 60
    while True:
        response = await conn.exchange(template.stamped(), ProduceRequest, PRODUCE_VERSION)
        assert isinstance(response, ProduceResponse)
        answer = response.responses[0].partition_responses[0]
        if not answer.error_code:
            return int(answer.base_offset) + BATCH_RECORDS
        if time.monotonic() > deadline:
            raise BenchError(f"warm-up Produce to partition {partition}: error code {answer.error_code}")
        await asyncio.sleep(0.2)


async def producer(
    conn: Connection,
    template: ProduceTemplate,
    cfg: WorkerConfig,
    partition: int,
    start: float,
    res: WorkerResult,
    final: dict[int, int],
) -> None:
    """Produce on schedule until the run's end; then `final[partition]` = the log end offset it left (-1 if it
    failed: its consumer then reads until the deadline)."""
    log_end = final.pop(partition)  # the warm-up's
    try:
        interval = 1.0 / cfg.requests_per_s
        due = start + interval * (partition % 97) / 97  # spread the producers over the interval
        end = start + cfg.seconds
        while True:
            now = time.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            if time.monotonic() >= end:
                return
            t0 = time.perf_counter()
            response = await conn.exchange(template.stamped(), ProduceRequest, PRODUCE_VERSION)
            res.produce_ms.append(1000 * (time.perf_counter() - t0))
            res.requests += 1
            assert isinstance(response, ProduceResponse)
            answer = response.responses[0].partition_responses[0]
            if answer.error_code:
                res.error_codes += 1
                res.error(f"Produce {cfg.topic}-{partition}: error code {answer.error_code}")
            else:
                res.produced += cfg.batch_records
                log_end = max(log_end, int(answer.base_offset) + cfg.batch_records)
            due += interval
    except BaseException:
        log_end = -1
        raise
    finally:
        final[partition] = log_end


async def consumer(
    conn: Connection,
    cfg: WorkerConfig,
    partition: int,
    offset: int,
    start: float,
    res: WorkerResult,
    final: dict[int, int],
) -> None:
    """Long-poll the partition until it has read what its producer wrote, or until the deadline."""
    end = start + cfg.seconds + CONSUMER_TAIL_S
    while time.monotonic() < end:
        if offset >= final.get(partition, -1) >= 0:
            return
        request = FetchRequest(
            replica_id=-1,
            max_wait_ms=500,
            min_bytes=1,
            max_bytes=50 * 2**20,
            topics=[
                FetchTopic(
                    topic=cfg.topic,
                    partitions=[
                        FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=2**20)
                    ],
                )
            ],
        )
        response = await conn.call(request, FETCH_VERSION)
        res.fetches += 1
        assert isinstance(response, FetchResponse)
        data = response.responses[0].partitions[0] if response.responses else None
        code = response.error_code or (data.error_code if data is not None else -1)
        if code:
            res.error_codes += 1
            res.error(f"Fetch {cfg.topic}-{partition} at {offset}: error code {code}")
            await asyncio.sleep(0.1)
            continue
        assert data is not None
        if data.records:
            count, next_offset = walk_batches(data.records, time.time() * 1000, res.e2e_ms)
            res.consumed += count
            if next_offset is not None:
                offset = next_offset


async def connect(cfg: WorkerConfig, name: str, res: WorkerResult) -> Connection | None:
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(cfg.host, cfg.port), CONNECT_TIMEOUT_S
        )
    except (OSError, TimeoutError) as e:
        res.connect_errors += 1
        res.error(f"connect: {e!r}")
        return None
    res.connected += 1
    return Connection(reader, writer, name)


async def guarded(job: Any, res: WorkerResult) -> None:
    try:
        await job
    except (OSError, EOFError, asyncio.IncompleteReadError, BenchError, AssertionError) as e:
        res.dropped += 1
        res.error(repr(e))


async def worker_main(cfg: WorkerConfig, commands: IO[str]) -> WorkerResult:
    res = WorkerResult()
    producers = await asyncio.gather(*(connect(cfg, f"producer-{p}", res) for p in cfg.producers))
    consumers = await asyncio.gather(*(connect(cfg, f"consumer-{p}", res) for p in cfg.consumers))
    templates = {p: ProduceTemplate(cfg, p, f"producer-{p}") for p in cfg.producers}
    live = [(c, p) for c, p in zip(producers, cfg.producers, strict=True) if c is not None]
    offsets = await asyncio.gather(*(warm_up(c, templates[p], p) for c, p in live))
    starts = {p: offset for (_, p), offset in zip(live, offsets, strict=True)}
    final = dict(starts)  # each producer takes its warm-up's end from here and leaves its last one
    print(f"READY {res.connected} {res.connect_errors}", flush=True)
    loop = asyncio.get_running_loop()
    word = await loop.run_in_executor(None, commands.readline)
    if word.strip() != "GO":
        return res
    start = time.monotonic()
    jobs = [guarded(producer(c, templates[p], cfg, p, start, res, final), res) for c, p in live]
    jobs += [
        guarded(consumer(c, cfg, p, starts.get(p, 0), start, res, final), res)
        for c, p in zip(consumers, cfg.consumers, strict=True)
        if c is not None
    ]
    await asyncio.gather(*jobs)
    for c in [*producers, *consumers]:
        if c is not None:
            c.close()
    return res


def worker(config: str) -> int:
    cfg = WorkerConfig(**json.loads(config))
    res = asyncio.run(worker_main(cfg, sys.stdin))
    print("RESULT " + json.dumps(asdict(res)), flush=True)
    return 0


# --------------------------------------------------------------------------------------------------------------
# the scenario, in bench/run.py's process


def raise_open_files_limit() -> None:
    """Soft limit up to the hard one: the brokers and the workers started after this inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class ManyConnections:
    """bench/run.py's RoundScenario: one run of `connections` connections on every target but the mock."""

    after_rounds = False

    def __init__(self, connections: int, seconds: float) -> None:
        if connections < 2 or connections % 2:
            raise BenchError(
                f"--connections {connections}: an even number, half producers and half consumers"
            )
        raise_open_files_limit()
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < connections + 1000:
            raise BenchError(f"open files limited to {soft}: too few for {connections} connections")
        self.connections = connections
        self.seconds = seconds
        self.run_id = uuid.uuid4().hex[:8]
        self.rounds = 0

    @property
    def scenario(self) -> str:
        return SCENARIO.format(n=self.connections)

    def run_round(self, order: list[Target], attempt: Attempt) -> None:
        rnd = self.rounds
        self.rounds += 1
        for target in order:
            if target.auto_creates:
                continue  # the mock: its auto-created topics have 4 partitions
            topic = f"conns-{self.run_id}-r{rnd}"
            attempt(self.scenario, VALUE_SIZE, target, functools.partial(self.measure, target, topic))

    def finish(self, targets: list[Target]) -> None:
        pass  # every measurement deletes its topic

    def measure(self, target: Target, topic: str) -> dict[str, Any]:
        from bench.run import measured_cpu  # bench/run.py imports this module

        partitions = self.connections // 2
        target.create_topic(topic, partitions)
        host, _, port = target.bootstrap.split(",")[0].rpartition(":")
        procs: list[subprocess.Popen[str]] = []
        logs = Path(tempfile.mkdtemp(prefix="conns-bench-"))
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            for w in range(WORKERS):
                mine = list(range(w, partitions, WORKERS))
                cfg = WorkerConfig(host, int(port), topic, mine, mine, self.seconds)
                with open(logs / f"worker-{w}.log", "w") as log:
                    procs.append(
                        subprocess.Popen(
                            [PYTHON, str(BENCH / "connections.py"), "--worker", json.dumps(asdict(cfg))],
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=log,
                            text=True,
                        )
                    )
            for proc in procs:
                assert proc.stdout is not None
                line = proc.stdout.readline()
                if not line.startswith("READY"):
                    raise BenchError(f"a worker did not connect: {line!r}; {logs}")
            results: list[str | None] = [None] * len(procs)

            def read_result(i: int, out: IO[str]) -> None:
                for text in out:
                    if text.startswith("RESULT "):
                        results[i] = text[len("RESULT ") :]

            readers = []
            for i, proc in enumerate(procs):
                assert proc.stdout is not None
                readers.append(threading.Thread(target=read_result, args=(i, proc.stdout), daemon=True))
                readers[-1].start()
            cpu0 = measured_cpu(target)
            rss_max = target.rss_bytes() or 0
            t0 = time.perf_counter()
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write("GO\n")
                proc.stdin.flush()
            deadline = time.monotonic() + self.seconds + CONSUMER_TAIL_S + 120
            while any(r.is_alive() for r in readers):
                if time.monotonic() > deadline:
                    raise BenchError(f"the workers did not finish within {self.seconds + 120:.0f} s; {logs}")
                time.sleep(0.5)
                rss_max = max(rss_max, target.rss_bytes() or 0)
            wall = time.perf_counter() - t0
            cpu = cpu_delta(cpu0, measured_cpu(target))
            if any(r is None for r in results):
                raise BenchError(f"a worker printed no result; see {logs}")
        finally:
            for proc in procs:
                if proc.stdin is not None and not proc.stdin.closed:
                    proc.stdin.close()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            target.delete_topic(topic)
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, reaped above
        clients_cpu = (children1.ru_utime + children1.ru_stime) - (children0.ru_utime + children0.ru_stime)
        shutil.rmtree(logs, ignore_errors=True)  # kept when the run failed
        parts = [WorkerResult(**json.loads(r)) for r in results if r is not None]
        produced = sum(p.produced for p in parts)
        if not produced:
            raise BenchError(f"nothing produced: {[p.first_error for p in parts]}; {logs}")
        produce_ms = [x for p in parts for x in p.produce_ms]
        e2e_ms = [x for p in parts for x in p.e2e_ms]
        errors = sum(p.connect_errors + p.error_codes + p.dropped for p in parts)
        return {
            "records": produced,
            "seconds": self.seconds,
            "cpu": cpu,
            "wall": wall,
            "offered": partitions * REQUESTS_PER_S * BATCH_RECORDS,
            "connected": sum(p.connected for p in parts),
            "consumed": sum(p.consumed for p in parts),
            "lag": produced - sum(p.consumed for p in parts),
            "errors": errors,
            "first_error": next((p.first_error for p in parts if p.first_error), None),
            "produce_requests": sum(p.requests for p in parts),
            "fetches": sum(p.fetches for p in parts),
            "produce_p50_ms": percentile(produce_ms, 0.5),
            "produce_p99_ms": percentile(produce_ms, 0.99),
            "e2e_p50_ms": percentile(e2e_ms, 0.5),
            "e2e_p99_ms": percentile(e2e_ms, 0.99),
            "rss_max": rss_max,
            "clients_cpu": clients_cpu,  # the workers' CPU seconds, connecting and warming up included
        }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--worker", metavar="CONFIG", required=True, help="run one worker (JSON WorkerConfig)"
    )
    args = parser.parse_args()
    return worker(args.worker)


if __name__ == "__main__":
    sys.exit(main())
