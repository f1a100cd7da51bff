"""A backlog read from cold segments, as a scenario of bench/run.py (`--cold-read-gib N`).

Issue 12's target: a 20 GiB backlog read from cold segments at >= 500 MiB/s. On every target with a disk (kbroker
and Apache Kafka; not the mock, which keeps ~5 MiB per partition in memory):

- **Fill** (once, before the target's first read; timed and reported, but not the figure): a topic of 8 partitions
  receives N GiB through the protocol: Produce v9 requests of one ~1 MB batch (60 records of 16 KiB, random,
  uncompressed, under Kafka's message.max.bytes) for each of the 8 partitions, acks=1, 4 requests in flight on one
  connection; the same encoded request is sent again and again (the broker assigns the offsets; the batch CRC does
  not cover them).
- **Cold**: before every read, every file of the topic in the broker's data directory is fsynced and dropped from
  the page cache with posix_fadvise(POSIX_FADV_DONTNEED), which needs no privilege and touches nothing else on a
  shared machine; `fincore` (util-linux) then says how much of the topic is still cached, and if that is over 10%
  the page cache is dropped as a whole (`echo 1 > /proc/sys/vm/drop_caches`, as root). The method and the share
  still cached go into the result.
- **Read**: one confluent-kafka consumer assigns all 8 partitions at the beginning (fetch.max.bytes 64 MiB,
  max.partition.fetch.bytes 8 MiB, queued.max.messages.kbytes 256 MiB) and reads until it holds every record;
  timed from assign() to the last record; reported as MiB/s of record values, with the broker's CPU per MiB.

The fill needs N GiB free per target at once (checked first: N x 1.1 + 5 GiB beyond every other target's fill);
the topics are deleted after the last round and go with the data directories anyway. Every round reads each target
once, interleaved like the other scenarios, but in rounds of their own after all the other scenarios' rounds
(`after_rounds`): the fill and the drops from the page cache free tens of GiB, which this virtual machine hands back
to its host, and every page cache write after that pays to take the memory back (bench/common.py
`memory_returned_kib`). Placed between rounds, that cost landed on the next round's produce runs.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import confluent_kafka
from confluent_kafka import Consumer, TopicPartition

from bench.common import BenchError, cpu_delta
from bench.connections import encode_request
from protocol.codec import decode_from
from protocol.headers import read_response_header, response_header_version
from protocol.messages import SCHEMAS
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.produce_response import ProduceResponse
from protocol.primitives import Reader
from protocol.records import Record, build_batch

if TYPE_CHECKING:
    from bench.run import Attempt, Target

SCENARIO = "cold read"
PARTITIONS = 8
VALUE_SIZE = 16 * 1024
BATCH_RECORDS = 60  # ~983 KB a batch: under Kafka's default message.max.bytes (1,048,588)
IN_FLIGHT = 4
PRODUCE_VERSION = 9
CACHED_LIMIT = 0.10
MiB = 2**20
GiB = 2**30


def data_root(target: Target) -> Path | None:
    root = getattr(target, "tmp", None)
    return root if isinstance(root, Path) else None


def topic_files(target: Target, topic: str) -> list[Path]:
    root = data_root(target)
    if root is None:
        return []
    return [
        p for p in root.rglob("*") if p.is_file() and any(part.startswith(f"{topic}-") for part in p.parts)
    ]


def cached_share(files: list[Path]) -> float | None:
    """Share of the files' bytes in the page cache (fincore), None when fincore is missing."""
    fincore = shutil.which("fincore")
    if fincore is None or not files:
        return None
    resident = total = 0
    for chunk in range(0, len(files), 200):
        done = subprocess.run(
            [
                fincore,
                "--bytes",
                "--noheadings",
                "--raw",
                "--output",
                "RES,SIZE",
                *map(str, files[chunk : chunk + 200]),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in done.stdout.splitlines():
            res, size = line.split()[:2]
            resident += int(res)
            total += int(size)
    return resident / total if total else None


def drop_from_cache(files: list[Path]) -> tuple[str, float | None]:
    """(the method that made the files cold, the share still cached)."""
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # a segment deleted meanwhile
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    share = cached_share(files)
    if share is None or share <= CACHED_LIMIT:
        return "posix_fadvise", share
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
    except OSError as e:
        raise BenchError(f"{100 * share:.0f}% of the topic is still cached after posix_fadvise: {e}") from e
    return "drop_caches", cached_share(files)


class ColdRead:
    """bench/run.py's RoundScenario: fill once per target, then one cold read per round."""

    after_rounds = True

    def __init__(self, gib: float, *, timeout: float) -> None:
        self.gib = gib
        self.timeout = timeout
        self.run_id = uuid.uuid4().hex[:8]
        self.records: dict[str, int] = {}  # target name -> records in its topic, once filled
        self.fill: dict[str, dict[str, float]] = {}
        self.value = os.urandom(VALUE_SIZE)
        self.pending: set[str] | None = None  # targets still to fill (for the disk space check)

    @property
    def topic(self) -> str:
        return f"coldread-{self.run_id}"

    def run_round(self, order: list[Target], attempt: Attempt) -> None:
        eligible = [t for t in order if not t.auto_creates and data_root(t) is not None]
        if self.pending is None:
            self.pending = {t.name for t in eligible}
        for target in eligible:
            attempt(SCENARIO, VALUE_SIZE, target, functools.partial(self.measure, target))

    def finish(self, targets: list[Target]) -> None:
        for target in targets:
            if target.name in self.records:
                target.delete_topic(self.topic)

    # ----------------------------------------------------------------------------------------------------------

    def measure(self, target: Target) -> dict[str, Any]:
        if target.name not in self.records:
            self.fill_topic(target)
        files = topic_files(target, self.topic)
        if not files:
            raise BenchError(f"no files of {self.topic} under {data_root(target)}")
        on_disk = sum(p.stat().st_size for p in files)
        method, cached = drop_from_cache(files)
        result = self.read(target, self.records[target.name])
        return {
            **result,
            "drop_method": method,
            "cached_share": cached,
            "bytes_on_disk": on_disk,
            **self.fill.pop(target.name, {}),  # the fill's figures go with the target's first read only
        }

    def fill_topic(self, target: Target) -> None:
        root = data_root(target)
        assert root is not None
        assert self.pending is not None
        others = len(self.pending - {target.name})
        need = self.gib * GiB * 1.1 * (1 + others) + 5 * GiB
        free = shutil.disk_usage(root).free
        if free < need:
            self.pending.discard(target.name)
            raise BenchError(
                f"{self.gib:g} GiB cold read: {free / GiB:.1f} GiB free under {root}, {need / GiB:.1f} GiB needed "
                f"(this target's fill and {others} more, plus 5 GiB); skipped"
            )
        target.create_topic(self.topic, PARTITIONS)
        self.records[target.name] = 0  # the topic exists: finish() deletes it
        self.pending.discard(target.name)
        batch = bytes(
            build_batch([Record(i, int(time.time() * 1000), None, self.value) for i in range(BATCH_RECORDS)])
        )
        request = ProduceRequest(
            acks=1,
            timeout_ms=60_000,
            topic_data=[
                TopicProduceData(
                    name=self.topic,
                    partition_data=[PartitionProduceData(index=p, records=batch) for p in range(PARTITIONS)],
                )
            ],
        )
        payload = encode_request(request, PRODUCE_VERSION, "cold-read-fill")
        per_request = PARTITIONS * BATCH_RECORDS * VALUE_SIZE
        requests = max(1, round(self.gib * GiB / per_request))
        host, _, port = target.bootstrap.split(",")[0].rpartition(":")
        cpu0 = measured(target)
        t0 = time.perf_counter()
        with socket.create_connection((host, int(port)), timeout=120) as sock:
            pending: deque[int] = deque()
            sent = 0
            while sent < requests or pending:
                if sent < requests and len(pending) < IN_FLIGHT:
                    sent += 1
                    payload[4:8] = sent.to_bytes(4, "big")
                    sock.sendall(len(payload).to_bytes(4, "big") + payload)
                    pending.append(sent)
                    continue
                check_produce(*receive(sock), pending.popleft())
        seconds = time.perf_counter() - t0
        self.records[target.name] = requests * PARTITIONS * BATCH_RECORDS
        self.fill[target.name] = {
            "fill_seconds": seconds,
            "fill_mib_s": requests * per_request / MiB / seconds,
            "fill_cpu": cpu_delta(cpu0, measured(target)) or 0.0,
        }

    def read(self, target: Target, n: int) -> dict[str, Any]:
        consumer = Consumer(
            {
                "bootstrap.servers": target.bootstrap,
                "group.id": f"coldread-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "auto.offset.reset": "error",
                "fetch.max.bytes": 64 * MiB,
                "max.partition.fetch.bytes": 8 * MiB,
                "queued.max.messages.kbytes": 256 * 1024,
                "log.connection.close": False,
            }
        )
        try:
            # connect and find the leader before the clock
            consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=30)
            count = 0
            payload = 0
            cpu0 = measured(target)
            t0 = time.perf_counter()
            deadline = time.monotonic() + self.timeout
            consumer.assign(
                [TopicPartition(self.topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(PARTITIONS)]
            )
            while count < n:
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"cold read from {target.name}: {count}/{n} records after {self.timeout:.0f} s"
                    )
                for msg in consumer.consume(num_messages=min(10_000, n - count), timeout=0.5):
                    if msg.error() is not None:
                        raise BenchError(f"cold read from {target.name}: {msg.error()}")
                    count += 1
                    payload += len(msg)  # the value's length, without copying it
            seconds = time.perf_counter() - t0
            cpu = cpu_delta(cpu0, measured(target))
        finally:
            consumer.close()
        if payload != n * VALUE_SIZE:
            raise BenchError(
                f"cold read from {target.name}: {payload} bytes of values, expected {n * VALUE_SIZE}"
            )
        return {
            "records": n,
            "seconds": seconds,
            "cpu": cpu,
            "mib_s": payload / MiB / seconds,
            "gib": payload / GiB,
        }


def measured(target: Target) -> Any:
    from bench.run import measured_cpu  # bench/run.py imports this module

    return measured_cpu(target)


def receive(sock: socket.socket) -> tuple[int, ProduceResponse]:
    """The next response on the connection: (its correlation id, the ProduceResponse)."""

    def exactly(n: int) -> bytes:
        parts = []
        while n:
            chunk = sock.recv(min(n, 1 << 20))
            if not chunk:
                raise BenchError("the broker closed the connection during the fill")
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)

    frame = exactly(int.from_bytes(exactly(4), "big"))
    r = Reader(bytearray(frame))
    correlation_id = read_response_header(
        r, response_header_version(SCHEMAS[ProduceResponse], PRODUCE_VERSION)
    )
    return correlation_id, decode_from(ProduceResponse, PRODUCE_VERSION, r)


def check_produce(got: int, response: ProduceResponse, expected_id: int) -> None:
    if got != expected_id:
        raise BenchError(f"fill: response to correlation id {got}, expected {expected_id}")
    for topic in response.responses:
        for p in topic.partition_responses:
            if p.error_code:
                raise BenchError(f"fill: Produce {topic.name}-{p.index}: error code {p.error_code}")
