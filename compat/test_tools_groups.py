"""kafka-consumer-groups against each target: --reset-offsets (--to-earliest, --shift-by, --to-datetime, with
--execute) of a group with no members, --describe with its current-offset, log-end-offset and lag columns, a console
consumer of the group resuming where the reset put it, --list, --describe --state, and --delete.

The records carry timestamps of our choosing (one minute apart, in the past hour), so --to-datetime has exact
answers.
"""

from __future__ import annotations

import datetime
import time

import pytest

from compat.kafka import major
from compat.kafka.tools import KafkaTools, ToolResult
from compat.target import Target
from compat.tools_support import exceptions, produce, table
from protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(300)

MINUTE_MS = 60_000
# Records per partition: p0 gets 6, p1 gets 4, the i-th of each stamped BASE + i minutes.
COUNTS = (6, 4)
OFFSETS_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG")
DESCRIBE_COLUMNS = (*OFFSETS_COLUMNS, "CONSUMER-ID", "HOST", "CLIENT-ID")
RESET_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")


def base_timestamp() -> int:
    """An hour ago, on a whole minute: in the past, and recent enough for the default retention."""
    return int(time.time() * 1000) // MINUTE_MS * MINUTE_MS - 60 * MINUTE_MS


def iso(timestamp_ms: int) -> str:
    """--to-datetime's format, in UTC."""
    moment = datetime.datetime.fromtimestamp(timestamp_ms / 1000, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000+00:00")


class Groups:
    def __init__(self, tools: KafkaTools, target: Target, group: str, topic: str) -> None:
        self.tools, self.target, self.group, self.topic = tools, target, group, topic

    def run(self, *args: str) -> ToolResult:
        """The tool exits with 0 whether or not the group exists; tables go to stdout, notes to stderr."""
        return self.tools.run("kafka-consumer-groups", "--bootstrap-server", self.target.bootstrap, *args)

    def listed(self) -> set[str]:
        return set(self.run("--list").stdout.split())

    def reset(self, *how: str) -> list[tuple[int, int]]:
        out = self.run(
            "--reset-offsets", "--group", self.group, "--topic", self.topic, *how, "--execute"
        ).stdout
        return sorted((int(row["PARTITION"]), int(row["NEW-OFFSET"])) for row in table(out, RESET_COLUMNS))

    def lag(self) -> list[tuple[int, int, int, int]]:
        """(partition, current offset, log-end offset, lag) of every partition of the group."""
        described = self.run("--describe", "--group", self.group)
        assert f"Consumer group '{self.group}' has no active members." in described.output, described.report()
        out = described.stdout
        rows = table(out, DESCRIBE_COLUMNS)
        assert {(row["GROUP"], row["TOPIC"]) for row in rows} == {(self.group, self.topic)}, out
        assert {(row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"]) for row in rows} == {("-", "-", "-")}, out
        return sorted(
            (int(row["PARTITION"]), int(row["CURRENT-OFFSET"]), int(row["LOG-END-OFFSET"]), int(row["LAG"]))
            for row in rows
        )


def test_list_describe_reset_delete(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-groups")
    group = target.topic("tools-groups-g")
    target.create_topic(topic, 2)
    base = base_timestamp()
    for partition, count in enumerate(COUNTS):
        records = [
            Record(offset=i, timestamp=base + i * MINUTE_MS, key=None, value=b"v%d" % i) for i in range(count)
        ]
        produce(target, topic, partition, [bytes(build_batch(records))])
    groups = Groups(kafka_tools, target, group, topic)

    # A reset of a group that does not exist yet creates it, with no members.
    assert groups.reset("--to-earliest") == [(0, 0), (1, 0)]
    assert groups.lag() == [(0, 0, 6, 6), (1, 0, 4, 4)]
    assert group in groups.listed()
    assert groups.reset("--shift-by", "2") == [(0, 2), (1, 2)]
    # The first record at or after the time: offset 3 in both partitions.
    assert groups.reset("--to-datetime", iso(base + 3 * MINUTE_MS)) == [(0, 3), (1, 3)]
    # After every record: the log end (the tool warns "Falling back to latest known offset").
    assert groups.reset("--to-datetime", iso(base + 10 * MINUTE_MS)) == [(0, 6), (1, 4)]
    assert groups.reset("--shift-by", "-3") == [(0, 3), (1, 1)]
    assert groups.lag() == [(0, 3, 6, 3), (1, 1, 4, 3)]

    state = groups.run("--describe", "--group", group, "--state").stdout
    # GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS: one row, Empty with 0 members
    assert [line.split()[-2:] for line in state.splitlines() if line.startswith(group)] == [["Empty", "0"]], (
        state
    )

    # A consumer of the group reads from where the reset put it: 3 + 3 records, then the group has no lag.
    consumed = kafka_tools.run(
        "kafka-console-consumer", "--bootstrap-server", target.bootstrap, "--topic", topic, "--group", group,
        "--max-messages", "6", "--timeout-ms", "60000",
        "--formatter-property" if major(kafka_tools.version) >= 4 else "--property", "print.partition=true",
    )  # fmt: skip
    values = sorted(
        line.split()[-1] for line in consumed.stdout.splitlines() if line.startswith("Partition:")
    )
    assert values == ["v1", "v2", "v3", "v3", "v4", "v5"], consumed.report()
    assert groups.lag() == [(0, 6, 6, 0), (1, 4, 4, 0)]

    deleted = groups.run("--delete", "--group", group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted.stdout, (
        deleted.report()
    )
    assert group not in groups.listed()
    gone = groups.run("--describe", "--group", group)
    if target.name.startswith("kafka") and major(kafka_tools.version) >= 4:
        # Kafka 4's tools describe through KIP-848's ConsumerGroupDescribe, which Kafka 4 answers with
        # GROUP_ID_NOT_FOUND; kbroker has no such API (docs/kafka-differences.md), so the tools fall back to
        # DescribeGroups, whose answer for an unknown group is the Dead state, as Kafka 3.9 gives.
        assert "GroupIdNotFoundException" in exceptions(gone), gone.report()
    else:
        assert f"Consumer group '{group}' does not exist." in gone.output, gone.report()
    missing = groups.run("--delete", "--group", group)
    assert "GroupIdNotFoundException" in exceptions(missing), missing.report()
