"""Fetch sessions (KIP-227) through a real socket: the same scenario against a kbroker and Apache Kafka 3.9.2, each
started here with `max.incremental.fetch.session.cache.slots=8` (Kafka 3.9 splits the cache into 8 shards of
slots/8 sessions, so one session per shard), and their traces compared: for every fetch the top-level error, whether
a session id came back, and which partitions the response carries.

The scenario: a full fetch creates a session; incremental fetches add, update and forget partitions and carry only
the partitions with something new (records, a high-watermark change, a newly added partition); a wrong epoch,
an unknown session id and a request version that does not fit the session's use of topic ids are top-level errors;
a session outlives its connection; a full fetch naming it (or forgetting its last partition) ends it; a follower's
(privileged) session evicts a consumer's from a full shard, and a consumer's does not.

Kafka-only rules it cannot show (its eviction time is fixed at 120 s) are checked against kbroker alone in
tests/test_fetch_sessions.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from compat.clients.franz import FranzProgram
from compat.kafka import KAFKA_3
from compat.kafka.process import KafkaProcess
from protocol.messages.fetch_request import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ForgottenTopic,
    ReplicaState,
)
from protocol.messages.metadata_request import MetadataRequest
from tests.broker_process import BrokerProcess, free_port
from tests.test_groups_support import Wire, create_topic, produce, wait_for
from tests.test_metrics import Samples, scrape, value

pytestmark = pytest.mark.timeout(240)

Step = tuple[str, int, bool, list[int], dict[int, int]]
"""What one fetch's answer said: the step, the top-level error, whether it carried a session id, its partitions,
and their error codes where not 0."""

SLOTS = {"max.incremental.fetch.session.cache.slots": "8"}
VERSION = 16  # topic ids; Kafka 3.9's newest but one (17 only adds a replica directory id)
NAMES_VERSION = 12  # the last version naming topics


@dataclass
class Fetcher:
    """Raw Fetch requests of one client to one broker, and the trace of what each answer said."""

    bootstrap: str
    topic: str
    topic_id: uuid.UUID
    wire: Wire
    trace: list[Step] = field(default_factory=list)

    def fetch(
        self,
        step: str,
        session_id: int,
        epoch: int,
        offsets: dict[int, int] | None = None,
        forget: tuple[int, ...] = (),
        version: int = VERSION,
        replica_id: int = -1,
        wire: Wire | None = None,
    ) -> Any:
        by_id = version >= 13
        topics = []
        if offsets:
            topics = [
                FetchTopic(
                    topic="" if by_id else self.topic,
                    topic_id=self.topic_id if by_id else uuid.UUID(int=0),
                    partitions=[
                        FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                        for p, o in sorted(offsets.items())
                    ],
                )
            ]
        forgotten = (
            [
                ForgottenTopic(
                    topic="" if by_id else self.topic,
                    topic_id=self.topic_id if by_id else uuid.UUID(int=0),
                    partitions=list(forget),
                )
            ]
            if forget
            else []
        )
        request = FetchRequest(
            replica_id=replica_id,
            replica_state=ReplicaState(replica_id=replica_id),
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            session_id=session_id,
            session_epoch=epoch,
            topics=topics,
            forgotten_topics_data=forgotten,
        )
        response = (wire or self.wire).call(request, version)
        partitions = sorted(p.partition_index for t in response.responses for p in t.partitions)
        errors = {
            p.partition_index: p.error_code for t in response.responses for p in t.partitions if p.error_code
        }
        self.trace.append((step, response.error_code, response.session_id != 0, partitions, errors))
        return response


def produce_to(bootstrap: str, topic: str, partition: int, count: int = 1) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=partition)
    assert producer.flush(30) == 0


def topic_id(wire: Wire, topic: str) -> uuid.UUID:
    response = wire.call(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)  # type: ignore[arg-type]
    found: uuid.UUID = next(t.topic_id for t in response.topics if t.name == topic)
    return found


def scenario(bootstrap: str) -> list[Step]:
    topic = create_topic(bootstrap, 3, prefix="sessions")
    produce_to(bootstrap, topic, 0)
    wire = Wire(bootstrap)
    f = Fetcher(bootstrap, topic, topic_id(wire, topic), wire)
    try:
        all_at_0 = {0: 0, 1: 0, 2: 0}
        # A partition answered with an error at the session's creation comes back in every incremental answer until
        # the error goes: first wait until a new topic's partitions all answer (Kafka's leaders take a moment).
        wait_for(
            "every partition of the new topic to answer a fetch",
            lambda: (
                all(
                    p.error_code == 0
                    for t in f.fetch("ready?", 0, -1, all_at_0).responses
                    for p in t.partitions
                )
                or None
            ),
        )
        f.trace.clear()
        created = f.fetch("full fetch creates a session", 0, 0, all_at_0)
        s = created.session_id
        # The broker does not advance a session's fetch offset itself: p0's record comes again until the client
        # says it has moved on.
        f.fetch("incremental, nothing listed", s, 1)
        f.fetch("p0 moved past its record", s, 2, {0: 1})
        produce_to(bootstrap, topic, 1)
        f.fetch("p1 got a record", s, 3)
        f.fetch("p1 moved on, p2 forgotten", s, 4, {1: 1}, forget=(2,))
        f.fetch("p2 added back", s, 5, {2: 0})
        f.fetch("wrong epoch", s, 99)
        f.wire = Wire(bootstrap)  # the session outlives its connection
        wire.close()
        f.fetch("same session, new connection", s, 6)
        f.fetch("topic names on a topic-id session", s, 7, version=NAMES_VERSION)
        f.fetch("unknown session id", 12345, 1)
        f.fetch("epoch -1 closes the session, sessionless", s, -1, {0: 1})
        f.fetch("the closed session", s, 7)
        s2 = f.fetch("a new session of one partition", 0, 0, {0: 1}).session_id
        f.fetch("its last partition forgotten: sessionless", s2, 1, forget=(0,))
        f.fetch("that session is gone", s2, 2)

        # Eviction: a consumer session in each of the 8 one-slot shards; a 9th consumer session finds its shard
        # full and evicts nobody (the others are younger than the eviction time); a follower's session evicts one.
        consumers = [f.fetch(f"consumer session {i}", 0, 0, {0: 1}).session_id for i in range(8)]
        f.fetch("no room for a bigger consumer session", 0, 0, all_at_0)
        f.fetch("a follower's session evicts a consumer's", 0, 0, {0: 1}, replica_id=2)
        # Which one depends on the shards' round robin: the trace keeps only how many.
        codes = sorted(f.fetch("again", s, 1).error_code for s in consumers)
        del f.trace[-len(consumers) :]
        f.trace.append(("consumer sessions after the follower's", 0, False, codes, {}))
        return f.trace
    finally:
        f.wire.close()


def _trace_kbroker(base: Path) -> list[Step]:
    broker = BrokerProcess(base / "kbroker", overrides=SLOTS, log_path=base / "kbroker.log")
    broker.start()
    try:
        return scenario(broker.bootstrap)
    finally:
        broker.stop()


def _trace_kafka(base: Path) -> list[Step]:
    kafka = KafkaProcess(KAFKA_3, base / "kafka", overrides=SLOTS)
    kafka.start()
    try:
        return scenario(kafka.bootstrap)
    finally:
        kafka.stop()


EXPECTED = [
    ("full fetch creates a session", 0, True, [0, 1, 2]),
    ("incremental, nothing listed", 0, True, [0]),
    ("p0 moved past its record", 0, True, []),
    ("p1 got a record", 0, True, [1]),
    ("p1 moved on, p2 forgotten", 0, True, []),
    ("p2 added back", 0, True, [2]),
    ("wrong epoch", 71, False, []),
    ("same session, new connection", 0, True, []),
    ("topic names on a topic-id session", 106, False, []),
    ("unknown session id", 70, False, []),
    ("epoch -1 closes the session, sessionless", 0, False, [0]),
    ("the closed session", 70, False, []),
    ("a new session of one partition", 0, True, [0]),
    ("its last partition forgotten: sessionless", 0, False, []),
    ("that session is gone", 70, False, []),
    *[(f"consumer session {i}", 0, True, [0]) for i in range(8)],
    ("no room for a bigger consumer session", 0, False, [0, 1, 2]),
    ("a follower's session evicts a consumer's", 0, True, [0]),
]


@pytest.fixture(scope="module")
def base(request: pytest.FixtureRequest) -> Iterator[Path]:
    failed_before = request.session.testsfailed
    path = Path(tempfile.mkdtemp(prefix="kbroker-fetch-sessions-"))
    yield path
    if request.session.testsfailed == failed_before:
        shutil.rmtree(path, ignore_errors=True)


TRACES: dict[str, list[Step]] = {}


@pytest.mark.parametrize(
    ("name", "run"),
    [("kbroker", _trace_kbroker), (f"kafka-{KAFKA_3}", _trace_kafka)],
    ids=["kbroker", "kafka"],
)
def test_fetch_session_scenario(
    name: str,
    run: Callable[[Path], list[Step]],
    base: Path,
    kafka_release: Callable[[str], Path],
    request: pytest.FixtureRequest,
) -> None:
    _check_options(request.config, with_kafka=name.startswith("kafka"))
    if name.startswith("kafka"):
        kafka_release(KAFKA_3)
    trace = run(base)
    TRACES[name] = trace
    steps = {step: (error, has_session, partitions) for step, error, has_session, partitions, _ in trace}
    for step, error, has_session, partitions in EXPECTED:
        assert steps[step] == (error, has_session, partitions), f"{name}: {step}"
    # Exactly one consumer session was evicted by the follower's.
    assert steps["consumer sessions after the follower's"] == (0, False, [0] * 7 + [70]), name


def test_kbroker_traces_as_kafka(request: pytest.FixtureRequest) -> None:
    """Step by step, the same answers (run after both scenarios above)."""
    _check_options(request.config, with_kafka=True)
    if len(TRACES) < 2:
        pytest.fail(f"a scenario above did not finish: traces of {sorted(TRACES)} only")
    assert TRACES["kbroker"] == TRACES[f"kafka-{KAFKA_3}"]


# ---- a stock client that uses sessions: franz-go consuming 1,000 partitions from kbroker ---------------------------

MANY = 1_000
ACTIVE = (7, 500, 999)
ROUNDS = 3


def _check_options(config: pytest.Config, *, with_kafka: bool) -> None:
    if config.getoption("--bootstrap"):
        pytest.skip(
            "these tests start their own brokers (settings of their own); --bootstrap names one broker only"
        )
    releases = [v.strip() for v in config.getoption("--kafka").split(",")]
    if with_kafka and KAFKA_3 not in releases:
        pytest.skip(
            f"--kafka does not name Apache Kafka {KAFKA_3}, the release this scenario is compared with"
        )


def test_franz_go_consumes_many_partitions_incrementally(
    franz_program: FranzProgram, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """franz-go (kgo) reading a topic of 1,000 partitions, most idle: after its first, full fetch its fetches are
    incremental and list a handful of partitions (the ones whose position moved), and it reads every record exactly
    once. What it sent is read from the broker's FetchSessionCache metrics."""
    _check_options(request.config, with_kafka=False)
    admin_port = free_port()
    broker = BrokerProcess(
        tmp_path / "data",
        overrides={"admin.listener": f"http://127.0.0.1:{admin_port}"},
        log_path=tmp_path / "broker.log",
    )
    broker.start()
    metrics = f"http://127.0.0.1:{admin_port}"
    consumer: subprocess.Popen[str] | None = None
    try:
        topic = create_topic(broker.bootstrap, MANY, prefix="many")
        produce(broker.bootstrap, topic, MANY, MANY)  # one record in every partition
        later = ROUNDS * len(ACTIVE) * 10
        # Its output goes to a file: a pipe left unread until the end would stop it once full.
        output = (tmp_path / "franz.out").open("w+")
        consumer = subprocess.Popen(
            franz_program.command(broker.bootstrap, "consume", topic, str(MANY), str(MANY + later), "90"),
            stdout=output,
            stderr=subprocess.PIPE,
            text=True,
        )
        # kgo adds partitions to its session as it learns where each starts: wait until all 1,000 are in it.
        cached = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached"
        wait_for("all partitions in the session", lambda: value(scrape(metrics), cached) >= MANY or None, 60)
        before = scrape(metrics)
        seen = _fetches(before)
        for round_ in range(ROUNDS):
            # Each round once the consumer waits in its next fetch (parked: nothing new in its 1,000 partitions).
            wait_for(f"round {round_}: the consumer's next fetch parked", partial(_parked, metrics, seen), 60)
            seen = _fetches(scrape(metrics))
            for partition in ACTIVE:
                produce_to(broker.bootstrap, topic, partition, count=10)
        _, err = consumer.communicate(timeout=120)
        assert consumer.returncode == 0, err[-3000:]
        output.seek(0)
        lines = [json.loads(line) for line in output.read().splitlines()]
        records = [(line["partition"], line["offset"]) for line in lines if "offset" in line]
        assert len(records) == len(set(records)) == MANY + later, "every record exactly once"
        assert {p for p, _ in records} == set(range(MANY))

        after = scrape(metrics)
        requests = {k: value(after, REQUESTS, context=k) for k in ("full", "incremental", "sessionless")}
        assert requests["sessionless"] <= 1, requests  # kgo closes its session (epoch -1) as it stops
        assert requests["full"] <= 2, requests  # its first fetch (and one more if a session had to be remade)
        # Once the session holds every partition, each fetch is incremental and lists only the partitions whose
        # position moved (the three active ones at most), never the 1,000.
        incremental = value(after, REQUESTS, context="incremental") - value(
            before, REQUESTS, context="incremental"
        )
        listed = value(after, LISTED, context="incremental") - value(before, LISTED, context="incremental")
        assert value(after, REQUESTS, context="full") == value(before, REQUESTS, context="full")
        assert incremental >= ROUNDS
        assert listed / incremental <= len(ACTIVE), (listed, incremental)
    finally:
        if consumer is not None and consumer.poll() is None:
            consumer.kill()
            consumer.communicate()
        broker.stop()


REQUESTS = "kafka_server_fetchsessioncache_fetchrequests_total"
LISTED = "kafka_server_fetchsessioncache_fetchrequestpartitions_total"


def _fetches(samples: Samples) -> float:
    return sum(value(samples, REQUESTS, context=k) for k in ("full", "incremental", "sessionless"))


def _parked(metrics: str, fetches_before: float) -> bool | None:
    samples = scrape(metrics)
    parked = value(samples, "kafka_server_delayedoperationpurgatory_purgatorysize", delayedOperation="Fetch")
    return (_fetches(samples) > fetches_before and parked >= 1) or None
