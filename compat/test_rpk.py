"""rpk, Redpanda's CLI (a franz-go program), as an admin CLI for kbroker: `rpk cluster info`, `rpk topic create/
describe/produce/consume/delete`, `rpk group describe/seek/list/delete`, each with the same outcome as against
Apache Kafka. rpk is built from compat/go/rpk by compat/go/build.py; every call names the broker with
`-X brokers=HOST:PORT` and runs with a private HOME, so no rpk profile on the machine gets in the way.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka.partitioner.default import murmur2

from compat.clients.franz import FranzProgram, GroupMember
from compat.records import BASE_TIMESTAMP_MS, make_records, to_line
from compat.target import Target

pytestmark = pytest.mark.timeout(300)

COMMAND_TIMEOUT_S = 120.0
PARTITIONS = 3


@dataclass
class Rpk:
    binary: Path
    home: Path
    bootstrap: str

    def run(self, *args: str, stdin: str | None = None, expect_failure: bool = False) -> str:
        """rpk's stdout; asserts its exit status (0, or not 0 when `expect_failure`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RPK_")}
        env["HOME"] = str(self.home)
        command = [str(self.binary), "-X", f"brokers={self.bootstrap}", *args]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, env=env
        )
        failed = result.returncode != 0
        assert failed == expect_failure, (
            f"rpk {' '.join(args)} exited {result.returncode}\n--- stdout ---\n{result.stdout[-3000:]}"
            f"\n--- stderr ---\n{result.stderr[-3000:]}"
        )
        return result.stdout + (result.stderr if failed else "")

    def json(self, *args: str) -> Any:  # JSON: whatever rpk prints
        return json.loads(self.run(*args, "--format", "json"))


def table(text: str, first_column: str) -> list[dict[str, str]]:
    """The rows of the table in rpk's output whose header starts with `first_column`, as dicts. Cells are cut at
    the header's column starts, since rpk leaves empty cells blank."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [first_column])
    header = lines[start]
    names = header.split()
    starts = [header.index(name) for name in names]  # (no name is part of another in rpk's headers)
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def summary(text: str) -> dict[str, str]:
    """The `KEY  VALUE` lines before rpk's first blank line (e.g. `rpk group describe`'s summary)."""
    fields = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(" ")
        fields[key] = value.strip()
    return fields


def default_partition(key: bytes, partitions: int) -> int:
    """Where Kafka's default partitioner (and rpk's, franz-go's) puts a keyed record: murmur2 of the key."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


@pytest.fixture
def rpk(target: Target, rpk_path: Path, tmp_path: Path) -> Rpk:
    home = tmp_path / "rpk-home"
    home.mkdir()
    return Rpk(rpk_path, home, target.bootstrap)


def create_topic(rpk: Rpk, target: Target, topic: str, *options: str) -> None:
    out = rpk.run("topic", "create", topic, "-p", str(PARTITIONS), "-r", "1", *options)
    assert table(out, "TOPIC") == [{"TOPIC": topic, "STATUS": "OK"}]
    target.wait_topic_ready(topic, PARTITIONS)


def test_rpk_cluster_info(target: Target, rpk: Rpk) -> None:
    topic = target.topic("rpk-cluster")
    create_topic(rpk, target, topic)
    info = rpk.json("cluster", "info")
    assert info["cluster_name"], info
    broker_ids = [broker["id"] for broker in info["brokers"]]
    assert info["controller_id"] in broker_ids
    if target.process is not None:
        # A single broker started here (kbroker or Apache Kafka) advertises the address it listens on.
        assert [f"{b['host']}:{b['port']}" for b in info["brokers"]] == [target.bootstrap]
    topics = {t["name"]: t for t in info["topics"]}
    assert (
        topics[topic]["partition_count"],
        topics[topic]["replicas_count"],
        topics[topic]["is_internal"],
    ) == (
        PARTITIONS,
        1,
        False,
    )
    assert {p["partition"] for p in topics[topic]["partitions"]} == set(range(PARTITIONS))
    assert all(p["leader"] in broker_ids for p in topics[topic]["partitions"])
    if "__consumer_offsets" in topics:
        assert topics["__consumer_offsets"]["is_internal"] is True

    text = rpk.run("cluster", "info")
    assert [row["NAME"] for row in table(text, "NAME") if row["NAME"] == topic] == [topic]


def test_rpk_topic_create_describe_produce_consume_delete(target: Target, rpk: Rpk) -> None:
    topic = target.topic("rpk-topic")
    create_topic(rpk, target, topic, "-c", "retention.ms=1209600000", "-c", "cleanup.policy=delete")
    again = rpk.run("topic", "create", topic, "-p", "1", expect_failure=True)
    assert table(again, "TOPIC")[0]["STATUS"].startswith("TOPIC_ALREADY_EXISTS"), again

    count = 300
    keys = [f"key-{i:03d}" for i in range(count)]
    acks = rpk.run(
        "topic",
        "produce",
        topic,
        "-f",
        "%k %v\n",
        "-H",
        "source:rpk",
        "-z",
        "zstd",
        "-o",
        "%p %o\n",
        stdin="".join(f"{key} value-of-{key}\n" for key in keys),
    )
    acknowledged = sorted(tuple(map(int, line.split())) for line in acks.splitlines())
    assert len(acknowledged) == count

    out = rpk.run("topic", "consume", topic, "-n", str(count), "-o", "start", "--pretty-print=false")
    records = [json.loads(line) for line in out.splitlines()]
    assert sorted((r["partition"], r["offset"]) for r in records) == acknowledged
    by_partition: dict[int, list[dict[str, object]]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["partition"], r["offset"])):
        by_partition[record["partition"]].append(record)
    for partition, in_partition in by_partition.items():
        assert [r["offset"] for r in in_partition] == list(range(len(in_partition)))
        partition_keys = [str(r["key"]) for r in in_partition]
        assert partition_keys == sorted(partition_keys), "send order within a partition"
        for record in in_partition:
            assert record["value"] == f"value-of-{record['key']}"
            assert record["headers"] == [{"key": "source", "value": "rpk"}]
            assert partition == default_partition(str(record["key"]).encode(), PARTITIONS)
    assert sorted(str(r["key"]) for r in records) == keys

    [described] = rpk.json("topic", "describe", topic, "-a")
    assert described["summary"] == {
        "name": topic,
        "internal": False,
        "partitions": PARTITIONS,
        "replicas": 1,
        "error": "",
    }
    configs = {c["key"]: (c["value"], c["source"]) for c in described["configs"]}
    assert configs["retention.ms"] == ("1209600000", "DYNAMIC_TOPIC_CONFIG")
    assert configs["cleanup.policy"] == ("delete", "DYNAMIC_TOPIC_CONFIG")
    assert configs["max.message.bytes"] == ("1048588", "DEFAULT_CONFIG")
    partitions = described["partitions"]
    assert [(p["partition"], p["log_start_offset"], p["high_watermark"]) for p in partitions] == [
        (p, 0, len(by_partition[p])) for p in range(PARTITIONS)
    ]
    assert all(p["replicas"] == [p["leader"]] for p in partitions)

    out = rpk.run("topic", "delete", topic)
    assert table(out, "TOPIC") == [{"TOPIC": topic, "STATUS": "OK"}]
    assert topic not in {row["NAME"] for row in table(rpk.run("topic", "list"), "NAME")}
    gone = rpk.run("topic", "delete", topic)
    assert table(gone, "TOPIC")[0]["STATUS"].startswith("UNKNOWN_TOPIC_OR_PARTITION"), gone


def group_offsets(rpk: Rpk, group: str) -> tuple[dict[str, str], list[tuple[int, int, int, int]]]:
    """`rpk group describe`: its summary and (partition, current offset, log end offset, lag) per partition."""
    out = rpk.run("group", "describe", group)
    rows = table(out, "TOPIC") if "\nTOPIC " in out else []
    return summary(out), [
        (int(r["PARTITION"]), int(r["CURRENT-OFFSET"]), int(r["LOG-END-OFFSET"]), int(r["LAG"])) for r in rows
    ]


def seek(rpk: Rpk, group: str, *args: str) -> list[tuple[int, int, int]]:
    rows = table(rpk.run("group", "seek", group, *args), "TOPIC")
    assert all(not row.get("ERROR") for row in rows), rows
    return sorted((int(r["PARTITION"]), int(r["PRIOR-OFFSET"]), int(r["CURRENT-OFFSET"])) for r in rows)


def test_rpk_group_describe_seek_list_delete(
    target: Target, rpk: Rpk, franz_program: FranzProgram, members: list[GroupMember]
) -> None:
    topic, group = target.topic("rpk-group"), target.topic("rpk-group")
    create_topic(rpk, target, topic)
    # Record i: partition i % 3, offset i // 3, timestamp BASE + i (franz-go sends them as given).
    records = make_records(300, PARTITIONS)
    lines = franz_program.run(
        target.bootstrap, "produce", topic, "none", stdin="".join(to_line(r) + "\n" for r in records)
    )
    assert lines[-1]["acknowledged"] == 300

    # rpk's own group consumer reads everything and commits when it stops.
    out = rpk.run("topic", "consume", topic, "-g", group, "-n", "300", "-f", "%p %o\n")
    assert len(out.splitlines()) == 300
    state, offsets = group_offsets(rpk, group)
    assert (state["STATE"], state["MEMBERS"], state["TOTAL-LAG"]) == ("Empty", "0", "0"), state
    assert offsets == [(p, 100, 100, 0) for p in range(PARTITIONS)]

    # While a member is in the group, rpk describes it and refuses to seek; Kafka refuses an admin's commit.
    member = franz_program.member(target.bootstrap, topic, group)
    members.append(member)
    member.wait_for("the whole assignment", lambda m: m.assignment() == set(range(PARTITIONS)))
    out = rpk.run("group", "describe", group)
    state = summary(out)
    assert (state["STATE"], state["BALANCER"], state["MEMBERS"]) == ("Stable", "cooperative-sticky", "1"), (
        state
    )
    rows = table(out, "TOPIC")
    assert {(r["MEMBER-ID"] != "", r["CLIENT-ID"]) for r in rows} == {(True, "kbroker-compat-franz")}, rows
    refused = table(rpk.run("group", "seek", group, "--to", "start"), "TOPIC")
    assert {r["ERROR"] for r in refused} == {"INVALID_OPERATION: seeking a non-empty group is not allowed."}
    [answer] = franz_program.run(target.bootstrap, "commit-offsets", group, topic, "0=5")
    assert answer["error"].startswith("UNKNOWN_MEMBER_ID"), answer
    member.stop()

    assert seek(rpk, group, "--to", "start") == [(p, 100, 0) for p in range(PARTITIONS)]
    # The first record at or after BASE + 151: record 153 (offset 51) in partition 0, 151 and 152 (offset 50).
    assert seek(rpk, group, "--to", str(BASE_TIMESTAMP_MS + 151)) == [(0, 0, 51), (1, 0, 50), (2, 0, 50)]
    state, offsets = group_offsets(rpk, group)
    assert state["TOTAL-LAG"] == "149"
    assert offsets == [(0, 51, 100, 49), (1, 50, 100, 50), (2, 50, 100, 50)]
    out = rpk.run("topic", "consume", topic, "-g", group, "-n", "149", "-f", "%p %o\n")
    assert sorted(tuple(map(int, line.split())) for line in out.splitlines()) == [
        (p, o) for p, start in ((0, 51), (1, 50), (2, 50)) for o in range(start, 100)
    ]
    assert group_offsets(rpk, group)[1] == [(p, 100, 100, 0) for p in range(PARTITIONS)]
    assert seek(rpk, group, "--to", "start", "--topics", topic) == [(p, 100, 0) for p in range(PARTITIONS)]
    assert seek(rpk, group, "--to", "end") == [(p, 0, 100) for p in range(PARTITIONS)]

    listed = [row for row in table(rpk.run("group", "list"), "BROKER") if row["GROUP"] == group]
    assert [row["STATE"] for row in listed] == ["Empty"]
    assert table(rpk.run("group", "delete", group), "GROUP") == [{"GROUP": group, "STATUS": "OK"}]
    assert summary(rpk.run("group", "describe", group))["STATE"] == "Dead"
    assert group not in {row["GROUP"] for row in table(rpk.run("group", "list"), "BROKER")}


def test_rpk_topic_admin(target: Target, rpk: Rpk) -> None:
    """The admin APIs of issue 14 as rpk drives them: add-partitions (CreatePartitions), alter-config
    (IncrementalAlterConfigs), trim-prefix (DeleteRecords), cluster logdirs describe (DescribeLogDirs)."""
    topic = target.topic("rpk-admin")
    create_topic(rpk, target, topic)
    out = rpk.run("topic", "add-partitions", topic, "-n", "2")
    assert table(out, "TOPIC") == [{"TOPIC": topic, "STATUS": "OK"}]
    target.wait_topic_ready(topic, PARTITIONS + 2)
    [described] = rpk.json("topic", "describe", topic, "-a")
    assert described["summary"]["partitions"] == PARTITIONS + 2
    unknown = table(
        rpk.run("topic", "add-partitions", target.topic("rpk-nope"), "-n", "1", expect_failure=True), "TOPIC"
    )
    assert unknown[0]["STATUS"].startswith("UNKNOWN_TOPIC_OR_PARTITION"), unknown

    out = rpk.run(
        "topic", "alter-config", topic, "--set", "retention.ms=7200000", "--set", "segment.bytes=2000000"
    )
    assert table(out, "TOPIC") == [{"TOPIC": topic, "STATUS": "OK"}]
    wait_configs(
        rpk,
        topic,
        {
            "retention.ms": ("7200000", "DYNAMIC_TOPIC_CONFIG"),
            "segment.bytes": ("2000000", "DYNAMIC_TOPIC_CONFIG"),
        },
    )
    rpk.run("topic", "alter-config", topic, "--delete", "segment.bytes")
    wait_configs(rpk, topic, {"segment.bytes": ("1073741824", "DEFAULT_CONFIG")})

    rpk.run("topic", "produce", topic, "-p", "0", stdin="a\nb\nc\nd\n")
    rows = table(rpk.run("topic", "trim-prefix", topic, "-p", "0", "-o", "2", "--no-confirm"), "TOPIC")
    assert [(r["PARTITION"], r["NEW-START-OFFSET"], r["ERROR"]) for r in rows] == [("0", "2", "")]
    [described] = rpk.json("topic", "describe", topic, "-a")
    assert [
        (p["log_start_offset"], p["high_watermark"]) for p in described["partitions"] if p["partition"] == 0
    ] == [(2, 4)]

    rows = [
        r
        for r in table(rpk.run("cluster", "logdirs", "describe", "--topics", topic), "BROKER")
        if r["TOPIC"] == topic
    ]
    assert sorted(int(r["PARTITION"]) for r in rows) == list(range(PARTITIONS + 2))
    assert len({(r["BROKER"], r["DIR"]) for r in rows}) == 1, "one broker, one log directory"
    assert {r["PARTITION"]: int(r["SIZE"]) > 0 for r in rows}["0"] is True


def wait_configs(rpk: Rpk, topic: str, expected: dict[str, tuple[str, str]]) -> None:
    """`rpk topic describe -a` until it shows `expected` (Kafka's broker answers DescribeConfigs from its metadata,
    which has a changed config a moment after the controller accepted it)."""
    deadline = time.monotonic() + 30
    while True:
        [described] = rpk.json("topic", "describe", topic, "-a")
        configs = {c["key"]: (c["value"], c["source"]) for c in described["configs"]}
        seen = {name: configs.get(name) for name in expected}
        if seen == expected:
            return
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)
