"""The kernel's share: what the system calls every broker must make cost on this machine, per KiB and per request.

    .venv/bin/python bench/floor.py                      # prints the table (~15 s)
    .venv/bin/python bench/floor.py --data-dir /dev/shm  # the file steps on another file system
    .venv/bin/python bench/floor.py --json /tmp/floor.json

A broker in any language receives a produce request's bytes from its socket, checks their CRC-32C, writes them to a
file and (acks=all, or log.flush.interval.ms) fsyncs them; it answers a fetch with sendfile (or send); and each
request costs a loopback round trip. Each step is measured here alone, in this process's thread, with the CPU time
(user + system) of that thread only (RUSAGE_THREAD), the other end of each connection in a child process:

- recv: receiving 1 MiB chunks that a child sends, into one reused buffer (the broker's frame buffers are reused
  by the allocator too);
- send, sendfile: sending 1 MiB chunks to a child that reads them, from memory (send) or from a file in the page
  cache (sendfile, as kbroker and Kafka serve fetches of 32 KiB or more). On loopback the sender's CPU includes the
  TCP receive processing of the other end (softirq work done in the sending thread), so neither is free;
- write: appending 1 MiB chunks to a new file in --data-dir (the page cache, on pages the machine holds: the same
  amount is written and deleted first, see `reuse_page_cache` in bench/common.py);
- fsync: the fsync of 64 MiB just written that way, in this thread (the page writeback; kbroker submits its fsyncs
  as Linux asynchronous I/O, so the kernel's workers pay it, outside the broker's CPU figure, as the kernel's
  flusher threads pay it for Kafka, which does not fsync by default);
- crc32c: the CRC-32C of 1 MiB (the crc32c package, as kbroker checks every batch);
- round trip: a 60-byte request answered with 60 bytes over loopback, the answering side's CPU per exchange (the
  wake-ups of a 2-vCPU virtual machine are most of it);
- fsync round: what an acks=all produce adds per fsync round in the thread that asks for it, kbroker's way (Linux
  asynchronous I/O, kbroker/log/fsyncer.py): after a 16 KiB write, submit the fsync, sleep in epoll until its
  eventfd says it ended, collect it; the CPU of write + round less that of the write alone (the writeback itself is
  the kernel worker's). Without Linux AIO (`caio`), not measured.

With --latency-seconds, also `group_commit_latency`: the latency a broker that costs nothing but its fsyncs would
have at acks=all on this disk (bench/README.md, "The disk alone"); bench/run.py runs it beside its latency runs.

Medians over --rounds. bench/run.py runs this with the broker measurements (its JSON and report carry the table),
so the figures of a run can be set against the floor of the machine they were measured on.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crc32c import crc32c

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import latency_percentiles, reuse_page_cache  # noqa: E402

MIB = 1024 * 1024
CHUNK = MIB
STEP_MIB = 128
FSYNC_MIB = 64
FSYNC_ROUND_WRITE = 16 * 1024
# a v2 record batch's header, before its records (a one-record batch per request at 1,000 rec/s, linger.ms=0)
BATCH_HEADER = 61


def thread_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def _child(run: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            run()
        finally:
            os._exit(0)
    return pid


def _pair() -> tuple[socket.socket, Callable[[], socket.socket]]:
    """A listening socket on loopback and a function that connects to it (TCP_NODELAY, as brokers set)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    address = listener.getsockname()

    def connect() -> socket.socket:
        s = socket.create_connection(address)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    return listener, connect


def _drain(s: socket.socket) -> None:
    buf = bytearray(CHUNK)
    while s.recv_into(buf):
        pass


def recv_per_kib(mib: int) -> float:
    listener, connect = _pair()
    data = os.urandom(CHUNK)

    def sender() -> None:
        s = connect()
        for _ in range(mib):
            s.sendall(data)
        s.close()

    pid = _child(sender)
    conn, _ = listener.accept()
    listener.close()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    received = 0
    started = thread_cpu()
    while True:
        n = conn.recv_into(view)
        if not n:
            break
        received += n
    spent = thread_cpu() - started
    conn.close()
    os.waitpid(pid, 0)
    return spent / (received / 1024) * 1e6


def send_per_kib(mib: int, source: Path | None) -> float:
    """send() of a buffer, or with `source` sendfile() from that file."""
    listener, connect = _pair()

    def reader() -> None:
        s = connect()
        _drain(s)

    pid = _child(reader)
    conn, _ = listener.accept()
    listener.close()
    data = os.urandom(CHUNK)
    fd = os.open(source, os.O_RDONLY) if source is not None else -1
    started = thread_cpu()
    try:
        for i in range(mib):
            if fd < 0:
                conn.sendall(data)
                continue
            offset, remaining = i * CHUNK, CHUNK
            while remaining:
                sent = os.sendfile(conn.fileno(), fd, offset, remaining)
                offset += sent
                remaining -= sent
        spent = thread_cpu() - started
    finally:
        if fd >= 0:
            os.close(fd)
        conn.close()
        os.waitpid(pid, 0)
    return spent / (mib * 1024) * 1e6


def write_per_kib(directory: Path, mib: int) -> float:
    """Writing to the page cache: `mib` MiB to a new file."""
    written, _ = _write_file(directory, mib)
    return written / (mib * 1024) * 1e6


def fsync_per_kib(directory: Path, mib: int) -> float:
    """The writeback: one fsync of `mib` MiB just written."""
    _, synced = _write_file(directory, mib)
    return synced / (mib * 1024) * 1e6


def _write_file(directory: Path, mib: int) -> tuple[float, float]:
    """This thread's CPU seconds to write `mib` MiB to a new file, and then to fsync it."""
    path = directory / "floor-write"
    data = os.urandom(CHUNK)
    reuse_page_cache(mib * MIB, str(directory))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        started = thread_cpu()
        for _ in range(mib):
            os.write(fd, data)
        written = thread_cpu()
        os.fsync(fd)
        synced = thread_cpu()
    finally:
        os.close(fd)
        path.unlink()
    return written - started, synced - written


def crc_per_kib(mib: int) -> float:
    data = os.urandom(CHUNK)
    started = thread_cpu()
    for _ in range(mib):
        crc32c(data)
    return (thread_cpu() - started) / (mib * 1024) * 1e6


def round_trip_us(exchanges: int) -> float:
    listener, connect = _pair()
    message = b"q" * 60

    def client() -> None:
        s = connect()
        buf = bytearray(64)
        for _ in range(exchanges):
            s.sendall(message)
            got = 0
            while got < len(message):
                got += s.recv_into(memoryview(buf)[got:])
        s.close()

    pid = _child(client)
    conn, _ = listener.accept()
    listener.close()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(64)
    started = thread_cpu()
    for _ in range(exchanges):
        got = 0
        while got < len(message):
            got += conn.recv_into(memoryview(buf)[got:])
        conn.sendall(message)
    spent = thread_cpu() - started
    conn.close()
    os.waitpid(pid, 0)
    return spent / exchanges * 1e6


def fsync_round_us(directory: Path, rounds: int) -> float | None:
    """This thread's CPU per AIO fsync round (module docstring), µs; None without Linux AIO."""
    try:
        from caio import linux_aio
    except ImportError:
        return None
    try:
        context = linux_aio.Context(8)
    except (OSError, ValueError, SystemError):
        return None
    data = os.urandom(FSYNC_ROUND_WRITE)
    path = directory / "floor-fsync-round"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    poller = select.epoll()
    poller.register(context.fileno, select.EPOLLIN)
    ended: list[int] = []

    def run(with_fsync: bool) -> float:
        started = thread_cpu()
        for i in range(rounds):
            os.write(fd, data)
            if not with_fsync:
                continue
            operation = linux_aio.Operation.fsync(fd)
            operation.set_callback(ended.append)
            context.submit(operation)
            while len(ended) <= i:
                poller.poll(5)
                try:
                    context.poll()  # reset the eventfd's count
                except BlockingIOError:
                    pass
                context.process_events()
        return thread_cpu() - started

    try:
        alone = run(False)
        ended.clear()
        with_rounds = run(True)
    finally:
        poller.close()
        os.close(fd)
        path.unlink()
    return max(with_rounds - alone, 0.0) / rounds * 1e6


def group_commit_latency(directory: Path, rate: float, seconds: float, size: int) -> dict[str, Any]:
    """The produce latency at acks=all of a broker that costs nothing but its fsyncs, on this disk, now.

    Records of `size` bytes (plus a batch's framing) are appended to a file on an open-loop schedule of `rate` per
    second, as bench/run.py's latency runs send them (sleeping between them, not spinning); a second thread
    group-commits as kbroker's committer does: one fdatasync for everything appended since the last began, each
    record done when the fsync that covers it ends. A record's latency runs from its append (a latency run's, from
    its produce()) to then, with no network, protocol or interpreter in it, so an fsync-before-ack broker can do no
    better on this disk; and a stall of the disk (one fsync taking tens of ms) delays every record appended during
    it, as it delays kbroker's. The first 10% are a warm-up, as in the latency runs. Percentiles in ms;
    `longest_fsync_ms` is the slowest single fdatasync, `slow_fsyncs` how many took over 2 ms, and `over_2ms` the
    share of the kept records answered in more than 2 ms.
    """
    path = directory / "floor-group-commit"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    record = os.urandom(BATCH_HEADER + RECORD_OVERHEAD + size)
    n = max(1, int(rate * seconds))
    sent = [0.0] * n
    done = [0.0] * n
    fsyncs: list[float] = []  # each fdatasync's duration, s
    appended = 0
    finished = False
    failed: list[OSError] = []  # the committer's fdatasync error, raised here once it has stopped
    ready = threading.Condition()

    def commit() -> None:
        covered = 0
        while True:
            with ready:
                while covered == appended and not finished:
                    ready.wait()
                upto = appended
                if covered == upto:
                    return
            began = time.perf_counter()
            try:
                os.fdatasync(fd)
            except OSError as exc:
                failed.append(exc)
                return
            ended = time.perf_counter()
            fsyncs.append(ended - began)
            for i in range(covered, upto):
                done[i] = ended
            covered = upto

    committer = threading.Thread(target=commit, name="group-commit")
    committer.start()
    try:
        start = time.perf_counter() + 0.01
        for i in range(n):
            if failed:
                break
            wait = start + i / rate - time.perf_counter()
            if wait > 0:
                time.sleep(wait)  # not spun: a spinning client takes a core the fsyncs' kernel workers need
            sent[i] = time.perf_counter()
            os.write(fd, record)
            with ready:
                appended = i + 1
                ready.notify()
    finally:
        with ready:
            finished = True
            ready.notify()
        committer.join()
        os.close(fd)
        path.unlink()
    if failed:
        raise failed[0]
    latencies = [1000 * (done[i] - sent[i]) for i in range(n // 10, n)]  # the first 10% a warm-up
    return {
        "records": n,
        "seconds": seconds,
        **latency_percentiles(latencies),
        "longest_fsync_ms": 1000 * max(fsyncs),
        "slow_fsyncs": sum(1 for took in fsyncs if took > 0.002),
        "over_2ms": sum(1 for latency in latencies if latency > 2) / len(latencies),
    }


def measure(data_dir: Path, rounds: int = 3) -> dict[str, float]:
    """Median over `rounds` of each step: µs of CPU per KiB (per exchange for the round trip)."""
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kbroker-floor-", dir=data_dir) as tmp:
        directory = Path(tmp)
        cached = directory / "floor-cached"
        with open(cached, "wb") as f:
            for _ in range(STEP_MIB):
                f.write(os.urandom(CHUNK))
        with open(cached, "rb") as f:  # in the page cache, as a recent segment is
            while f.read(CHUNK):
                pass
        steps: list[tuple[str, Callable[[], float | None]]] = [
            ("recv", lambda: recv_per_kib(STEP_MIB)),
            ("send", lambda: send_per_kib(STEP_MIB, None)),
            ("sendfile", lambda: send_per_kib(STEP_MIB, cached)),
            ("write", lambda: write_per_kib(directory, STEP_MIB)),
            ("fsync", lambda: fsync_per_kib(directory, FSYNC_MIB)),
            ("crc32c", lambda: crc_per_kib(STEP_MIB)),
            ("round_trip", lambda: round_trip_us(2000)),
            ("fsync_round", lambda: fsync_round_us(directory, 1000)),
        ]
        for _ in range(rounds):
            for name, step in steps:
                value = step()
                if value is not None:
                    samples.setdefault(name, []).append(value)
    return {name: statistics.median(values) for name, values in samples.items()}


# A record in a v2 batch carries a few bytes besides its value (length, attributes, deltas, key and header counts).
RECORD_OVERHEAD = 9


def per_record(floor: dict[str, float], size: int, scenario: str) -> float:
    """The floor of one record of `size` bytes (value) in a large batch, µs: the per-KiB steps its bytes go through
    in the broker's own threads (produce: recv, CRC, write; consume: sendfile). The fsync's writeback is the
    kernel's workers' (see the module's docstring), not counted."""
    kib = (size + RECORD_OVERHEAD) / 1024
    if scenario == "consume":
        return floor["sendfile"] * kib
    return (floor["recv"] + floor["crc32c"] + floor["write"]) * kib


def table(floor: dict[str, float]) -> str:
    rows = [
        ("recv (produce: a request's bytes in)", "recv"),
        ("send (a fetch answered from memory)", "send"),
        ("sendfile (a fetch answered from the page cache)", "sendfile"),
        ("write (to the page cache)", "write"),
        ("fsync (writeback of what was written; kbroker's runs in kernel workers, uncounted)", "fsync"),
        ("CRC-32C", "crc32c"),
    ]
    lines = ["| step | CPU µs per KiB |", "|---|---|"]
    lines += [f"| {label} | {floor[key]:.3f} |" for label, key in rows]
    exchange = floor["round_trip"]
    lines.append(
        f"| a 60-byte request and answer on loopback (answering side, µs per exchange) | {exchange:.1f} |"
    )
    if "fsync_round" in floor:  # (runs before it was measured, and machines without Linux AIO, lack it)
        lines.append(
            "| an fsync round through Linux AIO after a 16 KiB write: submit, sleep until it ends, collect "
            f"(asking thread, µs per round) | {floor['fsync_round']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path(tempfile.gettempdir()), help="where files go [/tmp]"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds, medians reported [3]")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--latency-seconds",
        type=float,
        default=0.0,
        help="also the disk's own acks=all latency (group_commit_latency) at 1,000 records/s of 100 B and 1 KiB, "
        "for this long each; 0: not [0]",
    )
    args = parser.parse_args(argv)
    floor = measure(args.data_dir, args.rounds)
    print(table(floor))
    for size in (100, 1024):
        print(
            f"{size} B record: produce floor {per_record(floor, size, 'produce'):.3f} µs, "
            f"consume floor {per_record(floor, size, 'consume'):.3f} µs"
        )
    for size in (100, 1024) if args.latency_seconds > 0 else ():
        r = group_commit_latency(args.data_dir, 1000, args.latency_seconds, size)
        print(
            f"{size} B record, 1,000/s, the disk alone at acks=all: p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} "
            f"ms, max {r['max_ms']:.1f} ms; longest fsync {r['longest_fsync_ms']:.1f} ms, {r['slow_fsyncs']} over 2 ms"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(floor, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
