"""kafka-dump-log over the target's own files: kbroker's segments, offset and time indexes and __consumer_offsets
records are Kafka's, byte for byte.

The same record batches (built here, so every byte is known: keys, null keys and values, headers, each codec) go
to each target, one Produce request per batch. The broker assigns offsets and stamps its leader epoch; nothing else
in a batch changes, in Kafka or in kbroker, so the segment file must be exactly the batches sent with those two
fields set. Then Kafka's own dump-log reads each file: every batch valid, every record as sent, the index entries
pointing at the right batches (dump-log checks each against the log and reports mismatches). A segment rolled at
segment.bytes gives a sealed segment with both indexes; a simple offset commit gives a __consumer_offsets record
that dump-log's --offsets-decoder decodes.

kbroker keeps the active segment's indexes in memory and writes both files when the segment is sealed (rolled or
the broker stopped), so the index checks are of a sealed segment. Its producer-state snapshots (`.snapshot`) are
its own format, which dump-log reports as an unknown version (docs/kafka-differences.md).
"""

from __future__ import annotations

import json
import re
import struct
import time
from pathlib import Path

import pytest

from compat.kafka.tools import KafkaTools
from compat.target import Target
from compat.tools_support import commit_offset, is_kbroker, leader_epoch, produce
from kbroker.coordinator.records import partition_for
from protocol import compression as codecs
from protocol.records import Record, RecordBatch, build_batch

pytestmark = pytest.mark.timeout(300)

SEGMENT_BYTES = 1_048_576  # Kafka 4's smallest segment.bytes
BIG_VALUE = 100_000  # three records a batch: three batches fit a segment, the fourth rolls it
INDEX_INTERVAL_BYTES = 4096  # the default index.interval.bytes
CODEC_NAMES = {
    codecs.NONE: "none",
    codecs.GZIP: "gzip",
    codecs.SNAPPY: "snappy",
    codecs.LZ4: "lz4",
    codecs.ZSTD: "zstd",
}


def small_batches(base: int) -> list[bytes]:
    """Three records per codec: a keyed one, a null key with headers (one header value null), a null value."""
    batches = []
    for n, codec in enumerate(CODEC_NAMES):
        records = [
            Record(offset=0, timestamp=base + 10 * n, key=b"key-%d" % n, value=b"value-%d" % n),
            Record(
                offset=1,
                timestamp=base + 10 * n + 1,
                key=None,
                value=b"{}",
                headers=(("h1", b"x"), ("h2", None)),
            ),
            Record(offset=2, timestamp=base + 10 * n + 2, key=b"tombstone-%d" % n, value=None),
        ]
        batches.append(bytes(build_batch(records, compression=codec)))
    return batches


def big_batches(base: int) -> list[bytes]:
    return [
        bytes(build_batch([Record(offset=i, timestamp=base + 1000 * n + i, key=None, value=bytes([65 + n]) * BIG_VALUE)
                           for i in range(3)]))
        for n in range(4)
    ]  # fmt: skip


def as_stored(batches: list[bytes], offsets: list[int], epoch: int) -> list[bytes]:
    """The batches as the broker stores them: base offset assigned, partition leader epoch stamped."""
    stored = []
    for data, offset in zip(batches, offsets, strict=True):
        batch = RecordBatch(bytearray(data))
        batch.base_offset = offset
        batch.partition_leader_epoch = epoch
        stored.append(bytes(batch.buf))
    return stored


def fields(line: str) -> dict[str, str]:
    """`name: value` pairs of one dump-log line (values without spaces)."""
    return dict(re.findall(r"(\w+): (\S+)", line))


def dump(tools: KafkaTools, *files: Path, options: tuple[str, ...] = ()) -> str:
    result = tools.run("kafka-dump-log", "--files", ",".join(str(f) for f in files), *options)
    return result.output


def wait_for_file(path: Path, timeout: float = 60.0) -> None:
    """kbroker writes a sealed segment's index files once its data is fsynced, just after the roll."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} not written {timeout} s after its segment rolled"
        time.sleep(0.05)


def test_segments_indexes_and_offsets_records_are_kafkas(target: Target, kafka_tools: KafkaTools) -> None:
    if target.process is None:
        pytest.skip("kafka-dump-log reads the broker's files: only a broker this run started has them here")
    data_dir = target.process.data_dir
    topic = target.topic("tools-dump")
    target.create_topic(topic, 2, {"segment.bytes": str(SEGMENT_BYTES)})
    base = int(time.time() * 1000) // 1000 * 1000 - 60_000
    epoch = leader_epoch(target, topic, 0)

    # ---- a segment of small batches, every codec: the file is the batches, dump-log reads every record ----
    small = small_batches(base)
    stored = as_stored(small, produce(target, topic, 0, small), epoch)
    log0 = data_dir / f"{topic}-0" / "00000000000000000000.log"
    assert log0.read_bytes() == b"".join(stored)

    out = dump(kafka_tools, log0, options=("--deep-iteration", "--print-data-log"))
    batch_lines = [fields(line) for line in out.splitlines() if line.startswith("baseOffset:")]
    record_lines = [line for line in out.splitlines() if line.startswith("| offset:")]
    position = 0
    for n, (line, data) in enumerate(zip(batch_lines, stored, strict=True)):
        batch = RecordBatch(data)
        assert line["baseOffset"] == str(3 * n)
        assert line["lastOffset"] == str(3 * n + 2)
        assert line["count"] == "3"
        assert line["partitionLeaderEpoch"] == str(epoch)
        assert line["position"] == str(position)
        assert line["CreateTime"] == str(batch.max_timestamp)
        assert line["size"] == str(len(data))
        assert line["compresscodec"] == CODEC_NAMES[batch.compression]
        assert (line["crc"], line["isvalid"]) == (str(batch.crc), "true")
        position += len(data)
    assert len(record_lines) == 3 * len(small), out
    for n in range(len(small)):
        first, second, third = (fields(line) for line in record_lines[3 * n : 3 * n + 3])
        assert (first["offset"], first["CreateTime"]) == (str(3 * n), str(base + 10 * n))
        assert (first["key"], first["payload"], first["headerKeys"]) == (f"key-{n}", f"value-{n}", "[]")
        assert (second["keySize"], second["payload"], second["headerKeys"]) == ("-1", "{}", "[h1,h2]")
        assert (third["key"], third["valueSize"]) == (f"tombstone-{n}", "-1")
        assert "payload" not in third

    # ---- a rolled segment: its .log, .index and .timeindex are Kafka's, and dump-log's checks pass ----
    big = big_batches(base)
    offsets = produce(target, topic, 1, big)
    assert offsets == [0, 3, 6, 9]
    rolled = as_stored(big, offsets, epoch)
    directory = data_dir / f"{topic}-1"
    assert (directory / "00000000000000000000.log").read_bytes() == b"".join(rolled[:3])
    assert (directory / "00000000000000000009.log").read_bytes() == rolled[3]
    index = directory / "00000000000000000000.index"
    time_index = directory / "00000000000000000000.timeindex"
    wait_for_file(time_index)
    # An entry every index.interval.bytes: the second and third batches, by their last offset (relative to the
    # segment's base) and position; the time index holds the largest timestamp so far, with the same offsets.
    sizes = [len(batch) for batch in rolled]
    assert all(size > INDEX_INTERVAL_BYTES for size in sizes)
    entries = [(5, sizes[0]), (8, sizes[0] + sizes[1])]
    assert index.read_bytes() == b"".join(struct.pack(">ii", offset, pos) for offset, pos in entries)
    times = [(RecordBatch(rolled[1]).max_timestamp, 5), (RecordBatch(rolled[2]).max_timestamp, 8)]
    assert time_index.read_bytes() == b"".join(struct.pack(">qi", ts, offset) for ts, offset in times)

    out = dump(kafka_tools, index, time_index)
    assert "Mismatches" not in out, out
    assert "not found in the log" not in out, out
    assert [fields(line) for line in out.splitlines() if line.startswith("offset:")] == [
        {"offset": str(offset), "position": str(pos)} for offset, pos in entries
    ]
    assert [fields(line) for line in out.splitlines() if line.startswith("timestamp:")] == [
        {"timestamp": str(ts), "offset": str(offset)} for ts, offset in times
    ]
    checked = dump(kafka_tools, index, time_index, options=("--index-sanity-check",))
    assert checked.count("passed sanity check") == 2, checked

    # The producer-state snapshot written at the roll: Kafka's format in Kafka, kbroker's own in kbroker.
    snapshot = dump(kafka_tools, directory / "00000000000000000009.snapshot")
    if is_kbroker(target):
        assert "Snapshot contained an unknown file version" in snapshot, snapshot
    else:
        assert "unknown file version" not in snapshot, snapshot

    # ---- a committed offset: a __consumer_offsets record Kafka's decoder reads ----
    group = target.topic("tools-dump-group")
    commit_offset(target, group, topic, 0, 3)
    offsets_log = data_dir / f"__consumer_offsets-{partition_for(group, 50)}" / "00000000000000000000.log"
    out = dump(kafka_tools, offsets_log, options=("--offsets-decoder",))
    decoded = [
        (json.loads(key), json.loads(value))
        for key, value in re.findall(r" key: (\{.*?\}) payload: (\{.*\})$", out, re.MULTILINE)
    ]
    commits = [value["data"] for key, value in decoded if key["data"].get("group") == group]
    assert [(c["offset"], c["metadata"]) for c in commits] == [(3, "")], out
