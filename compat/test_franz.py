"""franz-go beyond produce/consume (which test_roundtrip covers): group consuming with kgo's cooperative-sticky
balancer while members join and leave, and kadm's admin calls. Same assertions against every target.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compat.clients.franz import FranzProgram, GroupMember, Line
from compat.records import BASE_TIMESTAMP_MS, Record, check_round_trip, make_records, to_line
from compat.scenarios import wait_for
from compat.target import Target

pytestmark = pytest.mark.timeout(300)

PARTITIONS = 6
BATCH = 1_200


def produce(franz: FranzProgram, target: Target, topic: str, records: Sequence[Record]) -> None:
    lines = franz.run(
        target.bootstrap, "produce", topic, "lz4", stdin="".join(to_line(r) + "\n" for r in records)
    )
    assert lines[-1] == {"sent": len(records), "acknowledged": len(records), "failed": 0}, lines[-1]


def create(franz: FranzProgram, target: Target, topic: str, partitions: int, *configs: str) -> Line:
    [created] = franz.run(target.bootstrap, "create", topic, str(partitions), *configs)
    assert created["error"] is None, created
    target.wait_topic_ready(topic, partitions)
    return created


def end_offsets(franz: FranzProgram, target: Target, topic: str) -> dict[int, int]:
    return {line["partition"]: line["latest"] for line in franz.run(target.bootstrap, "list-offsets", topic)}


def committed(franz: FranzProgram, target: Target, group: str) -> dict[int, int]:
    lines = franz.run(target.bootstrap, "fetch-offsets", group)
    assert all(line["error"] is None for line in lines), lines
    return {line["partition"]: line["offset"] for line in lines}


def describe_group(franz: FranzProgram, target: Target, group: str) -> Line:
    [described] = franz.run(target.bootstrap, "describe-groups", group)
    return described


def consumed_count(members: Sequence[GroupMember]) -> int:
    return sum(len(member.records()) for member in members)


def wait_consumed(members: Sequence[GroupMember], count: int) -> None:
    """Wait until the members together have `count` records (each member's own wait sees only itself, so poll
    the first member's condition with a predicate over all)."""
    members[0].wait_for(f"{count} records across the group", lambda _: consumed_count(members) >= count)


def wait_balanced(members: Sequence[GroupMember], partitions: int) -> None:
    """Wait until every member owns at least one partition and together they own each partition exactly once."""

    def balanced(_: GroupMember) -> bool:
        owned = [member.assignment() for member in members]
        return all(owned) and sorted(p for o in owned for p in o) == list(range(partitions))

    members[0].wait_for(f"a balanced assignment over {len(members)} members", balanced)


def test_group_members_join_and_leave_and_each_record_is_consumed_once(
    target: Target, franz_program: FranzProgram, members: list[GroupMember]
) -> None:
    franz = franz_program
    topic, group = target.topic("franz-group"), target.topic("franz-group")
    create(franz, target, topic, PARTITIONS)
    records = make_records(4 * BATCH, PARTITIONS)

    def join() -> GroupMember:
        member = franz.member(target.bootstrap, topic, group)
        members.append(member)
        return member

    a, b = join(), join()
    wait_balanced([a, b], PARTITIONS)
    described = describe_group(franz, target, group)
    assert (described["state"], described["protocol_type"], described["protocol"]) == (
        "Stable",
        "consumer",
        "cooperative-sticky",
    ), described
    assignments = [member["assigned"].get(topic, []) for member in described["members"]]
    assert sorted(p for partitions in assignments for p in partitions) == list(range(PARTITIONS)), described
    assert sorted(map(sorted, assignments)) == sorted(sorted(m.assignment()) for m in (a, b)), described
    listed = [line for line in franz.run(target.bootstrap, "list-groups") if line["group"] == group]
    assert listed == [{"group": group, "state": "Stable", "protocol_type": "consumer"}]

    produce(franz, target, topic, records[:BATCH])
    wait_consumed([a, b], BATCH)

    # A third member joins while the next batch is produced: some partitions move to it, cooperatively.
    c = join()
    produce(franz, target, topic, records[BATCH : 2 * BATCH])
    wait_balanced([a, b, c], PARTITIONS)
    wait_consumed([a, b, c], 2 * BATCH)
    assert len(describe_group(franz, target, group)["members"]) == 3

    # One leaves: its partitions go to the other two, from its last commit.
    b.stop()
    produce(franz, target, topic, records[2 * BATCH : 3 * BATCH])
    wait_balanced([a, c], PARTITIONS)
    wait_consumed([a, b, c], 3 * BATCH)
    a.stop()
    c.stop()

    check_round_trip(records[: 3 * BATCH], [r for m in (a, b, c) for r in m.records()])
    for member in (a, b, c):
        problems = [line for line in member.lines if "commit_failed" in line or "lost" in line]
        assert not problems, problems
    assert committed(franz, target, group) == end_offsets(franz, target, topic)
    described = describe_group(franz, target, group)
    assert (described["state"], described["members"]) == ("Empty", []), described

    # A member of the restarted group resumes from the committed offsets: only the new batch.
    produce(franz, target, topic, records[3 * BATCH :])
    d = join()
    wait_consumed([d], BATCH)
    d.stop()
    resumed = d.records()
    assert sorted(int(dict(r.headers)["index"]) for r in resumed) == list(range(3 * BATCH, 4 * BATCH))
    assert (
        committed(franz, target, group)
        == end_offsets(franz, target, topic)
        == {p: 4 * BATCH // PARTITIONS for p in range(PARTITIONS)}
    )


def test_kadm_topics_configs_and_offsets(target: Target, franz_program: FranzProgram) -> None:
    franz = franz_program
    topic = target.topic("franz-admin")
    # Two weeks: the records' timestamps are from the start of today, and Kafka deletes whatever is past
    # retention.ms, the active segment included, at its next retention check.
    created = create(franz, target, topic, 3, "retention.ms=1209600000", "max.message.bytes=500000")
    assert (created["partitions"], created["replication_factor"]) == (3, 1), created
    [again] = franz.run(target.bootstrap, "create", topic, "3")
    assert again["error"].startswith("TOPIC_ALREADY_EXISTS"), again

    [described] = franz.run(target.bootstrap, "list-topics", topic)
    assert (described["topic"], described["id"], described["internal"], described["error"]) == (
        topic,
        created["id"],
        False,
        None,
    )
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    for partition in described["partitions"]:
        assert partition["replicas"] == partition["isr"] == [partition["leader"]], partition
    everything = {line["topic"] for line in franz.run(target.bootstrap, "list-topics")}
    assert topic in everything
    assert "__consumer_offsets" not in everything

    configs = {line["name"]: line for line in franz.run(target.bootstrap, "describe-configs", topic)}
    for name, value, source in [
        ("retention.ms", "1209600000", "DYNAMIC_TOPIC_CONFIG"),
        ("max.message.bytes", "500000", "DYNAMIC_TOPIC_CONFIG"),
        ("cleanup.policy", "delete", "DEFAULT_CONFIG"),
        ("segment.bytes", "1073741824", "DEFAULT_CONFIG"),
    ]:
        assert (configs[name]["value"], configs[name]["source"], configs[name]["sensitive"]) == (
            value,
            source,
            False,
        ), configs[name]

    count = 300
    produce(franz, target, topic, make_records(count, 3))
    # Record i is in partition i % 3 at offset i // 3 with timestamp BASE + i.
    middle, after_all = BASE_TIMESTAMP_MS + 150, BASE_TIMESTAMP_MS + 10 * count
    lines = franz.run(target.bootstrap, "list-offsets", topic, "0", str(middle), str(after_all))
    assert [line["partition"] for line in lines] == [0, 1, 2]
    for line in lines:
        p = line["partition"]
        assert (line["earliest"], line["latest"]) == (0, count // 3), line
        by_timestamp = line["for_timestamp"]
        assert by_timestamp["0"] == {"offset": 0, "timestamp": BASE_TIMESTAMP_MS + p}
        first = next(i for i in range(150, 153) if i % 3 == p)
        assert by_timestamp[str(middle)] == {"offset": first // 3, "timestamp": BASE_TIMESTAMP_MS + first}
        # Nothing that late: kadm answers the end offset (Kafka's -1, replaced by kadm).
        assert by_timestamp[str(after_all)]["offset"] == count // 3, line

    [deleted] = franz.run(target.bootstrap, "delete", topic)
    assert deleted == {"deleted": topic, "error": None}
    # Apache Kafka (KRaft) deletes through its controller: a Metadata right after DeleteTopics may still list the
    # topic until the broker has the new metadata, so wait for the answer rather than take the first one.

    def gone() -> Line | None:
        [line] = franz.run(target.bootstrap, "list-topics", topic)
        return line if (line["error"] or "").startswith("UNKNOWN_TOPIC_OR_PARTITION") else None

    wait_for(f"{topic} to be gone from Metadata", gone)
    [again] = franz.run(target.bootstrap, "delete", topic)
    assert again["error"].startswith("UNKNOWN_TOPIC_OR_PARTITION"), again


def test_kadm_group_offsets_commit_fetch_list_delete(
    target: Target, franz_program: FranzProgram, members: list[GroupMember]
) -> None:
    """What an operator does to a group without members: commit offsets as an admin (a seek), read them back,
    list and describe it, delete it."""
    franz = franz_program
    topic, group = target.topic("franz-offsets"), target.topic("franz-offsets")
    create(franz, target, topic, 3)
    produce(franz, target, topic, make_records(90, 3))
    assert franz.run(target.bootstrap, "fetch-offsets", group) == []

    answers = franz.run(target.bootstrap, "commit-offsets", group, topic, "0=10", "1=20", "2=30")
    assert sorted((line["partition"], line["offset"], line["error"]) for line in answers) == [
        (0, 10, None),
        (1, 20, None),
        (2, 30, None),
    ]
    assert committed(franz, target, group) == {0: 10, 1: 20, 2: 30}
    listed = [line for line in franz.run(target.bootstrap, "list-groups") if line["group"] == group]
    assert listed == [{"group": group, "state": "Empty", "protocol_type": ""}]
    described = describe_group(franz, target, group)
    assert (described["state"], described["protocol_type"], described["members"], described["error"]) == (
        "Empty",
        "",
        [],
        None,
    )

    # A group member starts where the admin committed: 20 + 10 + 0 records left.
    member = franz.member(target.bootstrap, topic, group)
    members.append(member)
    member.wait_for("the records after the committed offsets", lambda m: len(m.records()) >= 30)
    member.stop()
    assert sorted((r.partition, r.offset) for r in member.records()) == [
        (p, o) for p, start in ((0, 10), (1, 20), (2, 30)) for o in range(start, 30)
    ]
    assert committed(franz, target, group) == {0: 30, 1: 30, 2: 30}

    assert franz.run(target.bootstrap, "delete-groups", group) == [{"group": group, "error": None}]
    assert group not in {line["group"] for line in franz.run(target.bootstrap, "list-groups")}
    assert describe_group(franz, target, group)["state"] == "Dead"
    assert franz.run(target.bootstrap, "fetch-offsets", group) == []
