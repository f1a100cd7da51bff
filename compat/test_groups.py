"""Consumer groups through every stock client, the same assertions against kbroker and Apache Kafka.

One scenario per client (compat/clients/members.py), on a topic of 4 partitions:
1. member A joins alone, reads the 200 records already there (all four partitions) and commits them;
2. member B joins: the group rebalances, A and B end up with disjoint shares covering the four partitions;
3. 200 more records: each is read exactly once, by the member that owns its partition, and committed;
4. the group through the client's own admin API (kcat has none): listed, Stable, two members with their client ids,
   host and partitions, the assignor, the committed offsets;
5. A and B leave (a clean close); 40 more records; member C (a restart of the application) resumes from the committed
   offsets: it reads exactly those 40, nothing older;
6. after C leaves, the admin sees the group Empty with its offsets committed to the end.

The scenario waits for each event (records read, offsets committed, a rebalance settled), through confluent-kafka's
AdminClient where it waits on the broker, so the client under test is only asked once for its own view. kcat commits
with librdkafka's auto commit (on revocation and exit), the others synchronously after each batch they processed.
Every client keeps its default assignor: range, except franz-go's cooperative-sticky (its members give up only the
partitions that move, and commit before they do).
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from compat.clients.confluent import create_topic
from compat.clients.members import (
    KafkaPythonMember,
    KcatMember,
    Member,
    confluent_member,
    franz_member,
    java_member,
    kp202_member,
)
from compat.clients.ops import UNSUPPORTED
from compat.scenarios import CLIENTS, HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, make_ops, produce, wait_for
from compat.target import Target
from tests.test_groups_support import committed

pytestmark = pytest.mark.timeout(240)

PARTITIONS = 4
ALL = frozenset(range(PARTITIONS))
NO_ADMIN = {"kcat"}
# kcat commits with librdkafka's auto commit: every 5 s (kcat's -X sets the topic-level auto.commit.interval.ms, not
# the consumer's), on a revocation and when it exits; the scenario waits for the last two only.
AUTO_COMMIT = {"kcat"}
# kafka-python 2.0.2 lists groups with ListGroups v0-v2, which carry no state.
NO_LISTED_STATE = {"kafka-python-2.0.2"}
# Each client's default assignor, as DescribeGroups names the group's protocol.
ASSIGNOR = {"franz-go": "cooperative-sticky"}
DEFAULT_ASSIGNOR = "range"


def start_member(client: str, name: str, target: Target, group: str, topic: str, request: Any) -> Member:
    bootstrap = target.bootstrap
    client_id = f"{client}-{name}"
    if client == "kafka-python":
        return KafkaPythonMember(
            bootstrap,
            group,
            topic,
            {
                "client_id": client_id,
                "session_timeout_ms": int(SESSION_TIMEOUT_MS),
                "heartbeat_interval_ms": int(HEARTBEAT_INTERVAL_MS),
            },
        )
    if client == "kafka-python-2.0.2":
        return kp202_member(
            request.getfixturevalue("kp202_python"),
            bootstrap,
            group,
            topic,
            {
                "client_id": client_id,
                "session_timeout_ms": SESSION_TIMEOUT_MS,
                "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
            },
        )
    librdkafka = {
        "client.id": client_id,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
    }
    if client == "confluent-kafka":
        return confluent_member(bootstrap, group, topic, librdkafka)
    if client == "kcat":
        return KcatMember(request.getfixturevalue("kcat_path"), bootstrap, group, topic, librdkafka)
    if client == "java":
        return java_member(request.getfixturevalue("java_harness"), bootstrap, group, topic, librdkafka)
    if client == "franz-go":  # main.go takes these names too
        return franz_member(request.getfixturevalue("franz_program"), bootstrap, group, topic, librdkafka)
    raise ValueError(client)


def shares(admin: AdminClient, group: str) -> dict[str, frozenset[int]] | None:
    """client id -> partitions, once the group is Stable."""
    described = admin.describe_consumer_groups([group])[group].result(30)
    if described.state.name != "STABLE":
        return None
    return {
        m.client_id: frozenset(tp.partition for tp in m.assignment.topic_partitions)
        for m in described.members
    }


def split(found: dict[str, frozenset[int]] | None, names: set[str]) -> dict[str, frozenset[int]] | None:
    """`found` if exactly `names` share all partitions, each some, none twice."""
    if found is None or set(found) != names:
        return None
    every = [p for share in found.values() for p in share]
    if not all(found.values()) or len(every) != len(set(every)) or set(every) != ALL:
        return None
    return found


def values(members: list[Member]) -> list[bytes]:
    return [value for member in members for _, _, value in member.records]


def state(name: str | None) -> str | None:
    """Group states as every client spells them (Stable, STABLE, ...)."""
    return None if name is None else name.replace("_", "").lower()


@pytest.mark.parametrize("client", CLIENTS)
def test_group_shares_commits_rebalances_and_resumes(
    target: Target, client: str, request: pytest.FixtureRequest
) -> None:
    bootstrap = target.bootstrap
    topic = target.topic(f"group-{client}")
    group = target.topic(f"group-{client}")
    create_topic(bootstrap, topic, PARTITIONS)
    target.wait_topic_ready(topic, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    rounds = [[b"%d-%d" % (n, i) for i in range(count)] for n, count in enumerate((200, 200, 40))]

    def produce_round(n: int) -> None:
        produce(bootstrap, topic, [(i % PARTITIONS, value, None) for i, value in enumerate(rounds[n])])

    produce_round(0)
    a = start_member(client, "a", target, group, topic, request)
    members = [a]
    try:
        wait_for("A reads the first 200 records", lambda: len(a.records) >= 200)
        assert sorted(values([a])) == sorted(rounds[0])
        assert a.assignment == ALL
        if client not in AUTO_COMMIT:
            # Its last synchronous commit done: a rebalance cannot make it fail.
            wait_for(
                "A commits them", lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 50)
            )

        b = start_member(client, "b", target, group, topic, request)
        members.append(b)
        names = {f"{client}-a", f"{client}-b"}
        settled = wait_for("A and B share the partitions", lambda: split(shares(admin, group), names))
        if (
            client != "kcat"
        ):  # kcat's stderr lines may lag the broker's view; the broker's is the one compared
            wait_for(
                "each member sees its share",
                lambda: (a.assignment, b.assignment) == tuple(settled[n] for n in sorted(names)),
            )
        # kcat commits on the revocation at the latest.
        wait_for(
            "the first round committed",
            lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 50),
        )
        produce_round(1)
        wait_for(
            "every record of the two rounds read",
            lambda: set(values(members)) >= set(rounds[0] + rounds[1]),
        )
        if client not in AUTO_COMMIT:
            wait_for(
                "the second round committed",
                lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 100),
            )
        assert sorted(values(members)) == sorted(rounds[0] + rounds[1]), "a record read twice"
        for member, name in ((a, f"{client}-a"), (b, f"{client}-b")):
            second = {p for p, _, value in member.records if value in set(rounds[1])}
            assert second <= settled[name], (name, second, settled[name])

        ops = make_ops(client, request.getfixturevalue)
        listed, described, offsets = ops.run(
            bootstrap, [("groups",), ("describe-group", group), ("group-offsets", group)]
        )
        if client in NO_ADMIN:
            assert listed["error"] == described["error"] == offsets["error"] == UNSUPPORTED
        else:
            assert group in listed["groups"], listed
            if client not in NO_LISTED_STATE:
                assert state(listed["groups"][group]) == "stable", listed
            assert (state(described["state"]), described["assignor"]) == (
                "stable",
                ASSIGNOR.get(client, DEFAULT_ASSIGNOR),
            ), described
            assert {m["client_id"]: frozenset(m["partitions"]) for m in described["members"]} == settled
            assert {m["host"] for m in described["members"]} == {"/127.0.0.1"}
            assert offsets["offsets"] == {f"{topic}:{p}": 100 for p in ALL}, offsets
    finally:
        for member in members:
            member.stop()
    assert not [error for member in members for error in member.errors]
    wait_for(
        "the second round committed",
        lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 100),
    )

    produce_round(2)
    c = start_member(client, "c", target, group, topic, request)
    try:
        wait_for("C reads the third round", lambda: len(c.records) >= len(rounds[2]))
        if client not in AUTO_COMMIT:
            wait_for(
                "C commits it", lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 110)
            )
        # C started from the committed offsets: the third round comes first in each partition, so anything older
        # would have been read before it.
        assert sorted(values([c])) == sorted(rounds[2])
    finally:
        c.stop()
    assert not c.errors
    wait_for(
        "the third round committed",
        lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(ALL, 110),
    )

    if client not in NO_ADMIN:
        ops = make_ops(client, request.getfixturevalue)
        described, offsets = ops.run(bootstrap, [("describe-group", group), ("group-offsets", group)])
        assert (state(described["state"]), described["members"]) == ("empty", []), described
        assert offsets["offsets"] == {f"{topic}:{p}": 110 for p in ALL}, offsets
