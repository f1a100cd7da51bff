"""The clickstream pipeline (pipelines/) end to end on real Spark, checked against a reference in plain Python.

- On a kbroker, with each connector: the streaming job is killed with SIGKILL (its Python and its JVM, each by
  pid) while events are being produced and it is mid-stream, then started again on its checkpoint; once it has
  caught up, the Parquet output holds exactly the windows the reference computes from the events produced, each
  once (the file sink is exactly-once), and the results topic read as upserts (the last value per key: the Kafka
  sink is at-least-once) holds the same.
- On a 3-node kbroker cluster (topics at replication factor 3) and on Apache Kafka 3.9.2: the one command
  (`scripts/pipeline`, pipelines/run.py) runs generator and streaming job and checks both outputs itself; then the
  batch job reports on a time range of the same topic, read by timestamp, and must equal the reference's report,
  having read exactly the records that offsets by timestamp select.

The jobs run as child processes (`python -m pipelines.streaming`, `python -m pipelines.batch`), each with its own
Spark driver, with Spark's own Kafka connector or kbroker's pure-Python one (CONNECTORS below). Small event counts,
short triggers and event time running at fifty times the wall clock's pace keep each scenario within a minute or so
of CI. The first scenarios check, without Spark, the parts the others rely on: the events a seed makes, the
reference's windows, the reading of the sink's log.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat.spark.install import InstallFailed, connector_jars, is_installed, pyspark_version
from compat.target import Target
from pipelines import reference, results
from pipelines import run as pipeline_run
from pipelines.events import Event, GeneratorSettings, format_time, read_events, take
from pipelines.generator import Generator
from pipelines.process import REPO, StreamingJobProcess, process_tree
from pipelines.streaming import AGGREGATES_QUERY, RESULTS_QUERY, StreamingSettings
from tests.conftest import missing_tool

pytestmark = pytest.mark.timeout(420)

# The connectors: Spark's own (its jar) and kbroker's pure-Python data source (kbroker/spark/). The kill -9 scenario
# runs with each (where the two differ most: the source's offsets in Spark's checkpoint); the one command runs with
# kbroker's on the cluster and with Spark's own against Apache Kafka (compat/test_spark.py runs both connectors
# against every target, Apache Kafka included).
CONNECTORS = ["kafka", "kbroker"]
COMMAND_CONNECTOR = {"kbroker-cluster": "kbroker", "kafka-3.9.2": "kafka"}
# 2,000 events at 250 a second, 200 ms of event time apart: almost seven minutes of windows in eight seconds.
COUNT = 2000
RATE = 250.0
INTERVAL_MS = 200
WATERMARK_DELAY_S = 120
MAX_LATENESS_MS = 60_000
TRIGGER_INTERVAL_S = 1.0
MAX_OFFSETS_PER_TRIGGER = 500
JOB_TIMEOUT_S = 240.0
BATCH_TIMEOUT_S = 240.0


@pytest.fixture(scope="module")
def spark_ready() -> None:
    """PySpark and pyarrow installed, Java to run Spark, Spark's own Kafka connector resolved (scripts/test does it
    first)."""
    if importlib.util.find_spec("pyspark") is None:
        missing_tool("pyspark is not installed (it is in the `test` extra)")
    if importlib.util.find_spec("pyarrow") is None:
        missing_tool("pyarrow is not installed (it is in the `test` extra)")
    if shutil.which("java") is None:
        missing_tool("java is not installed (apt package openjdk-17-jdk-headless), needed by Spark")
    if not is_installed(pyspark_version()) and shutil.which("mvn") is None:
        missing_tool("mvn is not installed (apt package maven), needed to resolve Spark's Kafka connector")
    try:
        connector_jars()
    except InstallFailed as error:
        pytest.fail(str(error))


def event_settings(seed: int) -> GeneratorSettings:
    """Events whose times end about now (a broker may refuse timestamps ahead of its clock)."""
    now = time.time_ns() // 1_000_000
    return GeneratorSettings(
        seed=seed,
        start_ms=now - COUNT * INTERVAL_MS,
        interval_ms=INTERVAL_MS,
        users=50,
        late_fraction=0.03,
        max_lateness_ms=MAX_LATENESS_MS,
        duplicate_fraction=0.03,
    )


@pytest.fixture
def job_settings(target: Target, connector: str, tmp_path: Path) -> StreamingSettings:
    events, results_topic = target.topic("pipeline-events"), target.topic("pipeline-results")
    target.create_topic(events, 3)
    target.create_topic(results_topic, 2)
    return StreamingSettings(
        bootstrap=target.bootstrap,
        data_dir=tmp_path / "pipeline",
        connector=connector,
        events_topic=events,
        results_topic=results_topic,
        watermark_delay_s=WATERMARK_DELAY_S,
        trigger_interval_s=TRIGGER_INTERVAL_S,
        max_offsets_per_trigger=MAX_OFFSETS_PER_TRIGGER,
    )


@pytest.fixture
def jobs(request: pytest.FixtureRequest) -> Iterator[list[StreamingJobProcess]]:
    """The streaming jobs a scenario starts: each is stopped by pid at the end; a failure shows their output."""
    started: list[StreamingJobProcess] = []
    failed_before = request.session.testsfailed
    yield started
    for job in started:
        job.stop()
    if request.session.testsfailed != failed_before:
        for job in started:
            print(f"--- streaming job {job.command()} ---\n{job.stderr_tail()}")
            print(f"--- its last progress lines ---\n{job.lines[-10:]}")
            print(f"--- Spark's log ({job.settings.spark_log}) ---")
            print(
                job.settings.spark_log.read_text(errors="replace")[-6000:]
                if job.settings.spark_log.exists()
                else ""
            )


def data_batches(job: StreamingJobProcess, query: str) -> set[int]:
    return {line["batch"] for line in job.progress(query) if line.get("input_rows")}


def check_outputs(settings: StreamingSettings, events: list[Event]) -> None:
    """The Parquet rows are the closed windows of the reference, each once; the results topic's upserts too."""
    watermark = reference.final_watermark_ms(events, WATERMARK_DELAY_S * 1000)
    want = reference.closed(reference.window_aggregates(events), watermark)
    assert len(want) > 20, "too few windows closed to say anything"
    rows = results.parquet_rows(settings.output)
    assert results.as_table(rows) == want
    assert len(rows) == len(want)
    records = results.topic_records(settings.bootstrap, settings.results_topic)
    assert results.upserts(records) == want
    assert len(records) >= len(want)


# ---- the parts, without Spark ----------------------------------------------------------------------------------


def test_events_are_reproducible_from_the_seed() -> None:
    """The same settings give the same records, late and duplicate ones where they were; they round-trip JSON."""
    settings = GeneratorSettings(
        seed=3,
        start_ms=1_700_000_000_000,
        interval_ms=1000,
        late_fraction=0.1,
        duplicate_fraction=0.1,
        max_lateness_ms=120_000,
    )
    events = take(settings, 500)
    assert events == take(settings, 500)
    assert take(replace(settings, seed=4), 500) != events
    assert [Event.from_json(event.to_json()) for event in events] == events
    ids = [event.event_id for event in events]
    assert 20 < len(ids) - len(set(ids)) < 80  # re-sent copies
    late = [
        e
        for n, e in enumerate(events)
        if e.event_time_ms < max(x.event_time_ms for x in events[: n + 1]) - 30_000
    ]
    assert 20 < len(late) < 80
    assert all(
        e.event_time_ms >= max(x.event_time_ms for x in events[: n + 1]) - 120_000
        for n, e in enumerate(events)
    )


def test_reference_windows_are_sparks() -> None:
    """Windows start at multiples of the slide since the epoch, start inclusive, end exclusive (Spark's window())."""
    assert reference.TUMBLING.starts(120_000) == [120_000]
    assert reference.TUMBLING.starts(179_999) == [120_000]
    assert reference.SLIDING.starts(120_000) == [60_000, 120_000]
    assert reference.SLIDING.starts(179_999) == [60_000, 120_000]
    first = Event("a", "u1", "purchase", "/p", 250, 125_000)
    copy = replace(first, amount_cents=999)  # a re-sent copy counts once, as first sent
    other = Event("b", "u2", "click", "/p", 0, 61_000)
    aggregates = reference.window_aggregates([first, copy, other])
    assert aggregates == {
        reference.WindowKey("sliding_2m_every_1m", 0, 120_000, "click"): reference.WindowTotals(1, 0),
        reference.WindowKey("sliding_2m_every_1m", 60_000, 180_000, "click"): reference.WindowTotals(1, 0),
        reference.WindowKey("sliding_2m_every_1m", 60_000, 180_000, "purchase"): reference.WindowTotals(
            1, 250
        ),
        reference.WindowKey("sliding_2m_every_1m", 120_000, 240_000, "purchase"): reference.WindowTotals(
            1, 250
        ),
        reference.WindowKey("tumbling_1m", 60_000, 120_000, "click"): reference.WindowTotals(1, 0),
        reference.WindowKey("tumbling_1m", 120_000, 180_000, "purchase"): reference.WindowTotals(1, 250),
    }
    assert set(reference.closed(aggregates, 180_000)) == {
        key for key in aggregates if key.window_end_ms <= 180_000
    }


def test_committed_files_follow_the_sink_log(tmp_path: Path) -> None:
    """The latest compacted log plus the batches after it, deletions applied; files no entry names are ignored."""
    log = tmp_path / "_spark_metadata"
    log.mkdir()

    def entry(name: str, action: str = "add") -> str:
        return json.dumps({"path": f"file://{tmp_path}/{name}", "size": 1, "action": action})

    (log / "8").write_text("v1\n" + entry("old-8") + "\n")  # older than the compaction: ignored
    (log / "9.compact").write_text("v1\n" + "\n".join([entry("a"), entry("b"), entry("c")]) + "\n")
    (log / "10").write_text("v1\n" + entry("d") + "\n" + entry("b", "delete") + "\n")
    (log / "11").write_text("v1\n" + entry("with%20space") + "\n")
    (log / ".11.tmp").write_text("v1\n" + entry("uncommitted") + "\n")
    assert results.committed_files(tmp_path) == [tmp_path / name for name in ("a", "c", "d", "with space")]


# ---- the pipeline on Spark ----------------------------------------------------------------------------------------


@pytest.mark.only_targets("kbroker")
@pytest.mark.parametrize("connector", CONNECTORS)
def test_killed_driver_restarts_without_loss_or_double_counting(
    spark_ready: None, target: Target, job_settings: StreamingSettings, jobs: list[StreamingJobProcess]
) -> None:
    """kill -9 of the streaming job (its Python and its JVM) mid-stream, a restart on the same checkpoint, and the
    outputs equal the reference: nothing lost, nothing counted twice."""
    generator = Generator(
        target.bootstrap, job_settings.events_topic, event_settings(seed=9), rate=RATE, count=COUNT
    )
    first = StreamingJobProcess(job_settings)
    jobs.append(first)
    first.start()
    first.wait_for(
        lambda lines: first.progress(AGGREGATES_QUERY), JOB_TIMEOUT_S, "the aggregation's first progress"
    )

    # Half the events, then wait until the job has aggregated some in several batches and sent some windows on.
    generator.run(until=COUNT // 2)
    first.wait_for(
        lambda lines: len(data_batches(first, AGGREGATES_QUERY)) >= 2 and data_batches(first, RESULTS_QUERY),
        JOB_TIMEOUT_S,
        "two aggregation batches and one results batch",
    )
    # The rest of the events go on while the job is killed and restarted.
    producing = threading.Thread(target=generator.run, daemon=True)
    producing.start()
    while generator.stats.produced < COUNT // 2 + RATE and producing.is_alive():
        time.sleep(0.05)
    jvm = first.jvm_pid()
    assert first.process is not None
    tree = process_tree(first.process.pid)
    assert jvm in {proc.pid for proc in tree}, (jvm, tree)
    batches_before = data_batches(first, AGGREGATES_QUERY)
    first.kill()
    assert [proc for proc in tree if proc.alive()] == []
    assert producing.is_alive(), "the generator had finished before the kill: not mid-stream"

    second = StreamingJobProcess(job_settings)
    jobs.append(second)
    second.start()
    producing.join(JOB_TIMEOUT_S)
    assert not producing.is_alive()
    assert generator.stats.failed == 0, generator.stats.errors
    ends = results.end_offsets(target.bootstrap, job_settings.events_topic)
    assert sum(ends.values()) == COUNT
    watermark = reference.final_watermark_ms(generator.produced, WATERMARK_DELAY_S * 1000)
    second.wait_caught_up(ends, watermark, JOB_TIMEOUT_S)
    assert second.stop() == 0

    # The second run went on from the checkpoint: its first batch follows the last one the first run reported.
    after = sorted(line["batch"] for line in second.progress(AGGREGATES_QUERY))
    assert after[0] > max(batches_before), (batches_before, after[:3])
    check_outputs(job_settings, generator.produced)


@pytest.mark.kbroker_cluster
@pytest.mark.only_targets("kbroker-cluster", "kafka-3.9.2")
def test_pipeline_command_and_batch_report(spark_ready: None, target: Target, tmp_path: Path) -> None:
    """The one command (generator + streaming job + its own check of both outputs), then the batch report of a
    range of event time, read by timestamp."""
    connector = COMMAND_CONNECTOR.get(target.name, "kafka")
    events_topic, results_topic = target.topic("pipeline-events"), target.topic("pipeline-results")
    data_dir = tmp_path / "pipeline"
    out = io.StringIO()
    argv = [
        f"--bootstrap={target.bootstrap}",
        f"--connector={connector}",
        f"--data-dir={data_dir}",
        f"--events-topic={events_topic}",
        f"--results-topic={results_topic}",
        f"--replication-factor={target.replication_factor}",
        f"--count={COUNT}",
        f"--rate={RATE}",
        f"--interval-ms={INTERVAL_MS}",
        f"--max-lateness={MAX_LATENESS_MS // 1000}",
        "--late-fraction=0.03",
        "--duplicate-fraction=0.03",
        "--users=50",
        f"--watermark-delay={WATERMARK_DELAY_S}",
        f"--trigger-interval={TRIGGER_INTERVAL_S}",
        f"--timeout={JOB_TIMEOUT_S}",
    ]
    status = pipeline_run.main(argv, out=out)
    assert status == 0, out.getvalue()
    assert "both outputs equal the reference" in out.getvalue()
    events = read_events(data_dir / "events.jsonl")
    assert len(events) == COUNT

    # The batch report over the middle third of the event time, read by timestamp.
    times = sorted(event.event_time_ms for event in events)
    from_ms, to_ms = times[len(times) // 3], times[2 * len(times) // 3]
    report_path = tmp_path / "report.json"
    command = [
        sys.executable,
        "-m",
        "pipelines.batch",
        f"--bootstrap={target.bootstrap}",
        f"--connector={connector}",
        f"--topic={events_topic}",
        f"--from={from_ms}",
        f"--to={to_ms}",
        "--bucket=60",
        "--top=5",
        f"--max-lateness={MAX_LATENESS_MS // 1000}",
        f"--output={report_path}",
        f"--work-dir={tmp_path / 'batch'}",
    ]
    batch = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=BATCH_TIMEOUT_S, check=False
    )
    assert batch.returncode == 0, batch.stdout + batch.stderr
    got = json.loads(report_path.read_text())
    records_read = got.pop("records_read")
    assert got == reference.daily_report(events, from_ms, to_ms, 60_000, 5)
    assert records_read == records_selected_by_timestamp(
        target.bootstrap, events_topic, from_ms, to_ms + MAX_LATENESS_MS
    ), f"from {format_time(from_ms)} to {format_time(to_ms)}"


def records_selected_by_timestamp(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> int:
    """How many records offsets by timestamp select: in each partition, from the first record stamped at or after
    start_ms (none: the end) to the first stamped at or after end_ms (none: the end)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "pipeline-test", "enable.auto.commit": False}
    )
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in partitions
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions if ends[p] > 0])
        stamps: dict[int, list[int]] = {p: [] for p in partitions}
        deadline = time.monotonic() + 60
        while sum(len(s) for s in stamps.values()) < sum(ends.values()):
            assert time.monotonic() < deadline, "could not read the events topic back"
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            partition = message.partition()
            assert partition is not None
            stamps[partition].append(message.timestamp()[1])
    finally:
        consumer.close()
    total = 0
    for partition_stamps in stamps.values():
        first = next((i for i, ts in enumerate(partition_stamps) if ts >= start_ms), len(partition_stamps))
        last = next((i for i, ts in enumerate(partition_stamps) if ts >= end_ms), len(partition_stamps))
        total += max(0, last - first)
    return total
