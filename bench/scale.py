"""Many partitions on one node: start time with data, idle CPU, a full Metadata, resident memory.

    .venv/bin/python bench/scale.py --kbroker-rev HEAD --json /tmp/scale.json    # 100, 1,000, 10,000 partitions
    .venv/bin/python bench/scale.py --partitions 10000 --targets kbroker,kafka
    .venv/bin/python bench/scale.py --cluster --partitions 1000,10000 --json /tmp/scale-x3.json   # 3 nodes, RF=3

For each partition count, a fresh broker gets topics of 1,000 partitions (fewer for smaller counts) and one batch of
10 records of 100 B in every partition (so every partition has a segment with data to open at start). Then:
- idle CPU: the broker's CPU over 10 s while no client is connected (after 3 s of settling);
- full Metadata: a Metadata v12 request for all topics over one raw connection, median of 5, from sending it to the
  last byte of the answer (the client side only reads the bytes; decoding is not timed);
- resident memory (VmRSS) after that, and the bytes stored (the data directory's size);
- clean stop: SIGTERM until the process is gone (it must write every partition's index files and producer-state
  snapshot; a stop over STOP_TIMEOUT_S is cut short by SIGKILL and reported as null);
- start with data: started again after that stop, until a Metadata lists every partition with a leader;
- resident memory with more data: --more-records records of --more-bytes B more in every partition, then VmRSS
  and the bytes stored again (resident memory must not grow with the bytes stored);
- then kill -9 and the unclean start, which recovers the active segments.
With --cluster the target is instead a 3-node kbroker cluster (private etcd, the brokers' default settings) holding
the partitions with replication factor 3 (so each node holds every partition: a third as leader, the rest as a
follower fetching from the two other nodes). After the fill it waits until every partition's ISR has 3 replicas, then
measures each node's idle CPU over 10 s twice: 3 s after that (the fill's last work may still run) and 30 s after it,
at rest (the followers' long polls, replica.fetch.wait.max.ms, are the work); no restart is timed.
bench/performance.py --scale-json puts the table and a plot into docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import cpu_delta, kbroker_sources, load_average, sample_cpu  # noqa: E402
from protocol.messages.metadata_request import MetadataRequest  # noqa: E402
from tests.broker_process import BrokerProcess  # noqa: E402
from tests.test_groups_support import Wire  # noqa: E402

TOPIC_PARTITIONS = 1000
START_TIMEOUT_S = 900.0
STOP_TIMEOUT_S = 600.0
METADATA_VERSION = 12
MORE_RECORDS = 100
MORE_BYTES = 1000


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def full_metadata_ms(bootstrap: str, rounds: int = 5) -> float:
    """Median time of a Metadata request for all topics, from sending it to the last byte of its answer."""
    request = MetadataRequest(topics=None, allow_auto_topic_creation=False)  # type: ignore[arg-type]  # null: all
    times = []
    with Wire(bootstrap, client_id="scale") as wire:
        for _ in range(rounds):
            t0 = time.perf_counter()
            wire.send(request, METADATA_VERSION)
            (size,) = struct.unpack(">i", wire._recv(4))
            wire._recv(size)
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def topics_for(partitions: int) -> dict[str, int]:
    per = min(partitions, TOPIC_PARTITIONS)
    return {f"scale-{i}": per for i in range(partitions // per)}


def fill(bootstrap: str, topics: dict[str, int], replication_factor: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name, count in topics.items():
        for attempt in range(10):
            try:
                admin.create_topics(
                    [NewTopic(name, count, replication_factor)], operation_timeout=300, request_timeout=300
                )[name].result(310)
                break
            except KafkaException as e:
                code = e.args[0].code()
                if code == KafkaError.TOPIC_ALREADY_EXISTS and attempt:
                    break  # an earlier attempt created it after all
                # A cluster node busy creating the previous topic's logs may be missing from the answering node's
                # view for a moment (it says INVALID_REPLICATION_FACTOR): try again.
                if code != KafkaError.INVALID_REPLICATION_FACTOR or attempt == 9:
                    raise
                print(f"CreateTopics {name}: {e}; trying again", flush=True)
                time.sleep(3)
    produce(bootstrap, topics, 10, 100)


def produce(bootstrap: str, topics: dict[str, int], records: int, size: int) -> None:
    """`records` records of `size` B into every partition."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 50, "queue.buffering.max.messages": 1_000_000}
    )
    value = b"v" * size
    for name, count in topics.items():
        for p in range(count):
            for _ in range(records):
                while True:
                    try:
                        producer.produce(name, value, partition=p)
                        break
                    except BufferError:  # the local queue is full: let it drain
                        producer.poll(0.1)
            producer.poll(0)
    if producer.flush(600):
        raise RuntimeError("records still queued after 600 s")


def stored_mib(directory: Path) -> float:
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue
    return total / 2**20


def stop_cleanly(broker: BrokerProcess) -> float | None:
    """Seconds from SIGTERM until the process is gone; None if it took over STOP_TIMEOUT_S (then SIGKILLed)."""
    t0 = time.perf_counter()
    os.kill(broker.pid, signal.SIGTERM)
    while broker.is_running():
        if time.perf_counter() - t0 > STOP_TIMEOUT_S:
            broker.kill()
            return None
        time.sleep(0.05)
    return time.perf_counter() - t0


def wait_for_partitions(
    bootstrap: str, partitions: int, ready: Callable[[Any], bool], what: str, timeout: float, poll_s: float
) -> None:
    """Until `partitions` scale- partitions are `ready` (a confluent-kafka PartitionMetadata) in the Metadata."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            md = admin.list_topics(timeout=30)
        except Exception:
            time.sleep(poll_s)
            continue
        done = sum(
            1
            for name, t in md.topics.items()
            if name.startswith("scale-")
            for p in t.partitions.values()
            if ready(p)
        )
        if done >= partitions:
            return
        time.sleep(poll_s)
    raise RuntimeError(f"not every partition has {what} after {timeout} s")


def wait_full_isr(bootstrap: str, partitions: int, replicas: int, timeout: float = START_TIMEOUT_S) -> None:
    """Until every scale- partition has `replicas` in-sync replicas (the followers have caught up)."""
    wait_for_partitions(
        bootstrap, partitions, lambda p: len(p.isrs) >= replicas, f"{replicas} in-sync replicas", timeout, 0.5
    )


def measure_kbroker_cluster(source: Any, partitions: int) -> dict[str, Any]:
    """A 3-node cluster holding `partitions` partitions with replication factor 3: each node's idle CPU."""
    from bench.run import KBrokerCluster

    cluster = KBrokerCluster(source)
    cluster.start()
    try:
        t0 = time.perf_counter()
        fill(cluster.bootstrap, topics_for(partitions), replication_factor=3)
        wait_full_isr(cluster.bootstrap, partitions, 3)
        created = time.perf_counter() - t0
        pids = cluster.pids()

        def idle_window(start_after_s: float) -> list[float | None]:
            """Each node's CPU share over 10 s, starting `start_after_s` after every ISR was full."""
            time.sleep(max(0.0, t0 + created + start_after_s - time.perf_counter()))
            before = [sample_cpu(pid) for pid in pids]
            time.sleep(10)
            return [cpu_delta(a, sample_cpu(pid)) for a, pid in zip(before, pids, strict=True)]

        # Right after the fill the nodes still finish its work (the first checkpoints of 10,000 high watermarks and
        # producer states, the cleaner's first pass, the ISR checks' first rounds); 30 s later they are at rest.
        idle = idle_window(3)
        at_rest = idle_window(30)
        row: dict[str, Any] = {
            "target": "kbroker-x3",
            "partitions": partitions,
            "replication_factor": 3,
            "idle_cpu_per_node": [None if x is None else x / 10 for x in idle],
            "idle_cpu_per_node_at_rest": [None if x is None else x / 10 for x in at_rest],
            "rss_mib_per_node": [rss_mib(pid) for pid in pids],
            "create_and_fill_s": created,
            "load": load_average(),
        }
        print(json.dumps(row), flush=True)
        return row
    finally:
        cluster.stop()


def wait_all_leaders(bootstrap: str, partitions: int, timeout: float = 600) -> None:
    """Until every scale- partition has a leader (polled often: this is what a start is timed by)."""
    wait_for_partitions(bootstrap, partitions, lambda p: p.leader >= 0, "a leader", timeout, 0.1)


class PatientBroker(BrokerProcess):
    """A start with thousands of partitions can take longer than the tests' 30 s: that time is what we measure."""

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        super().wait_ready(START_TIMEOUT_S)


def measure_kbroker(
    source_dir: Path | None, partitions: int, tmp: Path, more: tuple[int, int]
) -> dict[str, Any]:
    broker = PatientBroker(tmp / "data", log_path=tmp / "broker.log", source_dir=source_dir)
    broker.start()
    try:
        fill(broker.bootstrap, topics_for(partitions))
        return measure(broker, "kbroker", partitions, tmp / "data", more)
    finally:
        broker.stop()


def measure(
    broker: BrokerProcess, name: str, partitions: int, data_dir: Path, more: tuple[int, int]
) -> dict[str, Any]:
    time.sleep(3)
    a = sample_cpu(broker.pid)
    time.sleep(10)
    idle = cpu_delta(a, sample_cpu(broker.pid))
    metadata = full_metadata_ms(broker.bootstrap)
    rss = rss_mib(broker.pid)
    row: dict[str, Any] = {
        "target": name,
        "partitions": partitions,
        "idle_cpu": None if idle is None else idle / 10,
        "metadata_ms": metadata,
        "rss_mib": rss,
        "stored_mib": stored_mib(data_dir),
        "load": load_average(),
    }
    print(json.dumps(row), flush=True)  # so far, in case a restart fails
    row["stop_s"] = stop_cleanly(broker)
    t0 = time.perf_counter()
    broker.start()
    wait_all_leaders(broker.bootstrap, partitions, START_TIMEOUT_S)
    row["start_s"] = time.perf_counter() - t0
    row["rss_after_restart_mib"] = rss_mib(broker.pid)
    print(json.dumps(row), flush=True)
    records, size = more
    if records:
        produce(broker.bootstrap, topics_for(partitions), records, size)
        time.sleep(3)
        row["metadata_more_data_ms"] = full_metadata_ms(broker.bootstrap)
        row["rss_more_data_mib"] = rss_mib(broker.pid)
        row["stored_more_data_mib"] = stored_mib(data_dir)
        print(json.dumps(row), flush=True)
    broker.kill()
    t0 = time.perf_counter()
    broker.start()
    wait_all_leaders(broker.bootstrap, partitions, START_TIMEOUT_S)
    row["start_unclean_s"] = time.perf_counter() - t0
    row["rss_after_unclean_restart_mib"] = rss_mib(broker.pid)
    row["load_end"] = load_average()
    print(json.dumps(row), flush=True)
    return row


def measure_kafka(version: str, partitions: int, tmp: Path, more: tuple[int, int]) -> dict[str, Any]:
    from compat.kafka.process import KafkaProcess

    kafka = KafkaProcess(version, tmp / "kafka")
    kafka.start()
    kafka.wait_ready()
    try:
        fill(kafka.bootstrap, topics_for(partitions))
        row = measure(kafka, f"kafka-{version}", partitions, tmp / "kafka", more)
        return row
    finally:
        kafka.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kbroker-rev", metavar="REV", help="kbroker from this commit (see bench/run.py)")
    parser.add_argument("--partitions", default="100,1000,10000", help="partition counts [100,1000,10000]")
    parser.add_argument(
        "--targets", default="kbroker", help="kbroker and/or kafka (Apache Kafka 3.9.2) [kbroker]"
    )
    parser.add_argument(
        "--more-records",
        type=int,
        default=MORE_RECORDS,
        help=f"records added to every partition for the memory-with-more-data figure; 0: none [{MORE_RECORDS}]",
    )
    parser.add_argument(
        "--more-bytes", type=int, default=MORE_BYTES, help=f"size of each of those records [{MORE_BYTES}]"
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="a 3-node kbroker cluster, replication factor 3: idle CPU per node only (needs etcd)",
    )
    parser.add_argument("--json", type=Path, help="write the rows here (bench/performance.py --scale-json)")
    args = parser.parse_args(argv)
    rows = []
    more = (args.more_records, args.more_bytes)
    with kbroker_sources([args.kbroker_rev] if args.kbroker_rev else None) as (source,):
        for count in (int(x) for x in args.partitions.split(",")):
            if args.cluster:
                rows.append(measure_kbroker_cluster(source, count))
                continue
            for target in args.targets.split(","):
                tmp = Path(tempfile.mkdtemp(prefix="scale-bench-"))
                try:
                    if target == "kbroker":
                        rows.append(measure_kbroker(source.directory, count, tmp, more))
                    else:
                        rows.append(measure_kafka("3.9.2", count, tmp, more))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
    if args.cluster:
        data: dict[str, Any] = {
            "description": "bench/scale.py --cluster: 3 kbroker nodes and a private etcd, topics of up to 1,000 "
            "partitions with replication factor 3, 10 records of 100 B in every partition; each node's idle CPU "
            "over 10 s with no client, 3 s and 30 s after every ISR was full.",
            "rows": rows,
        }
        if args.json is not None:
            args.json.write_text(json.dumps(data, indent=1))
        return 0
    data = {
        "description": "bench/scale.py: topics of up to 1,000 partitions, 10 records of 100 B in every partition; "
        "idle CPU over 10 s with no client; a full Metadata v12 (median of 5); clean stop = SIGTERM until the "
        "process is gone; start = until a Metadata shows every partition led, after that stop (clean) and after "
        f"kill -9; RSS with more data = after {args.more_records} more records of {args.more_bytes} B in every "
        "partition.",
        "rows": rows,
    }
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=1))
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
