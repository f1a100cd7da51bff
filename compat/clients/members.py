"""A consumer-group member of each stock client, all with one small interface, so group scenarios are written once.

A member subscribes to one topic in one group, starts from the committed offsets (earliest where there are none) and
runs until `stop()`, which closes it cleanly (LeaveGroup). As it goes it appends every record it processes to
`records` as (partition, offset, value) and keeps `assignment`, its current partitions as its client reports them.
Members that commit themselves do so synchronously after each batch they processed; kcat commits with librdkafka's
auto commit (every 5 s, on a revocation and when it exits).

- kafka-python 3 and confluent-kafka: a thread in this process (confluent-kafka's is tests/test_groups_support.py's
  ConfluentMember);
- kafka-python 2.0.2, the Java client and franz-go: a subprocess (kp202_script.py / Harness `group-member` /
  compat/go/franz `group-member`, with kgo's default cooperative-sticky balancer) printing JSON lines, asked to
  leave by closing its stdin;
- kcat: `kcat -G`, whose assignments are read from the lines it prints on stderr; asked to leave by SIGTERM.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener

from compat.clients.franz import FranzProgram, config_args
from compat.clients.java import JVM_OPTIONS, JavaHarness
from tests.test_groups_support import ConfluentMember, wait_for

STOP_TIMEOUT_S = 30.0


class Member(Protocol):
    records: list[tuple[int, int, bytes]]
    assignment: frozenset[int]
    errors: list[str]

    def stop(self) -> None: ...


class KafkaPythonMember(ConsumerRebalanceListener):
    """kafka-python 3's KafkaConsumer on a thread: poll, process, commit synchronously."""

    def __init__(self, bootstrap: str, group: str, topic: str, config: Mapping[str, Any]) -> None:
        self.records: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.errors: list[str] = []
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **config,
        )
        self.consumer.subscribe([topic], listener=self)
        # The topic's partitions before the first JoinGroup: a kafka-python 3.0.12 leader that rejoins because they
        # arrived later can be left in REBALANCING for good (docs/groups.md, "A kafka-python 3.0.12 bug").
        wait_for(
            f"kafka-python to know the partitions of {topic}",
            lambda: self.consumer.partitions_for_topic(topic),
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kafka-python-{group}", daemon=True)
        self._thread.start()

    def on_partitions_revoked(self, revoked: object) -> None:
        self.assignment = frozenset()

    def on_partitions_assigned(self, assigned: Sequence[TopicPartition]) -> None:
        self.assignment = frozenset(tp.partition for tp in assigned)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                batches = self.consumer.poll(timeout_ms=200)
                for batch in batches.values():
                    self.records.extend((r.partition, r.offset, r.value) for r in batch)
                if batches:
                    self.consumer.commit()
        except Exception as error:
            self.errors.append(repr(error))
        finally:
            self.consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(STOP_TIMEOUT_S)
        assert not self._thread.is_alive(), "kafka-python member did not stop"


class JsonLinesMember:
    """A member in a subprocess that prints {"assigned": [...]}, {"revoked": [...]}, records {"partition", "offset",
    "value" (base64)}, {"committed": n} / {"commit_failed": ...}, {"error": ...} for anything else that went wrong,
    and {"closed": true}; it leaves when its stdin closes."""

    def __init__(self, command: Sequence[str], name: str) -> None:
        self.name = name
        self.records: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.errors: list[str] = []
        self.closed = False
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True)
        self._err_reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            event = json.loads(line)
            if "assigned" in event:
                self.assignment = frozenset(event["assigned"])
            elif "revoked" in event:
                self.assignment = frozenset()
            elif "offset" in event:
                self.records.append((event["partition"], event["offset"], base64.b64decode(event["value"])))
            elif "commit_failed" in event:
                self.errors.append(event["commit_failed"])
            elif "error" in event:
                self.errors.append(event["error"])
            elif "closed" in event:
                self.closed = True

    def _drain(self, stream: IO[str]) -> None:
        self._stderr.extend(stream)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reader.join(10)
        self._err_reader.join(10)
        _close_pipes(self.process)
        assert self.closed, f"{self.name} did not close cleanly:\n{''.join(self._stderr)[-3000:]}"


def java_member(
    harness: JavaHarness, bootstrap: str, group: str, topic: str, config: Mapping[str, str]
) -> JsonLinesMember:
    """Harness `group-member`."""
    options = [arg for key, value in config.items() for arg in ("--config", f"{key}={value}")]
    command = [
        harness.java,
        *JVM_OPTIONS,
        "-cp",
        harness.classpath,
        "Harness",
        "--bootstrap",
        bootstrap,
        *options,
        "group-member",
        topic,
        group,
    ]
    return JsonLinesMember(command, config.get("client.id", "java"))


def franz_member(
    program: FranzProgram, bootstrap: str, group: str, topic: str, config: Mapping[str, str]
) -> JsonLinesMember:
    """compat/go/franz `group-member`; `config` by main.go's names (client.id, session.timeout.ms, ...)."""
    command = program.command(bootstrap, *config_args(config), "group-member", topic, group)
    return JsonLinesMember(command, config.get("client.id", "franz-go"))


def kp202_member(
    python: Path, bootstrap: str, group: str, topic: str, config: Mapping[str, Any]
) -> JsonLinesMember:
    script = Path(__file__).with_name("kp202_script.py")
    command = [str(python), str(script), bootstrap, "group-member", topic, group, json.dumps(dict(config))]
    return JsonLinesMember(command, str(config.get("client_id", "kafka-python-2.0.2")))


# kcat's own lines on stderr: "% Group G rebalanced (memberid M): assigned: T [0], T [1]" (or "revoked: ...").
REBALANCED = re.compile(r"^% Group .* rebalanced \(memberid .*\): (assigned|revoked): (.*)$")


class KcatMember:
    """`kcat -G GROUP TOPIC`, printing "partition offset base64(value)" per record; librdkafka's auto commit."""

    def __init__(self, kcat: Path, bootstrap: str, group: str, topic: str, config: Mapping[str, str]) -> None:
        self.name = config.get("client.id", "kcat")
        self.records: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.errors: list[str] = []
        settings = {"auto.offset.reset": "earliest", **config}
        self.process = subprocess.Popen(
            [
                str(kcat),
                "-b",
                bootstrap,
                "-u",
                *(arg for key, value in settings.items() for arg in ("-X", f"{key}={value}")),
                # Not `-o beginning`: in -G mode kcat would start every assigned partition there, ignoring commits.
                "-f",
                "%p %o %s\\n",
                "-G",
                group,
                topic,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(
            target=self._read_stderr, args=(self.process.stderr,), daemon=True
        )
        self._err_reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            partition, offset, value = line.rstrip("\n").split(" ", 2)
            self.records.append((int(partition), int(offset), value.encode()))

    def _read_stderr(self, stream: IO[str]) -> None:
        for line in stream:
            self._stderr.append(line)
            found = REBALANCED.match(line.strip())
            if found is None:
                if "ERROR" in line:
                    self.errors.append(line.strip())
                continue
            kind, partitions = found.groups()
            if kind == "assigned":
                self.assignment = frozenset(int(p) for p in re.findall(r"\[(\d+)\]", partitions))
            else:
                self.assignment = frozenset()

    def stop(self) -> None:
        """SIGTERM: kcat commits what it consumed and leaves the group."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            raise AssertionError(f"kcat did not stop on SIGTERM:\n{''.join(self._stderr)[-3000:]}") from None
        self._reader.join(10)
        self._err_reader.join(10)
        _close_pipes(self.process)


def _close_pipes(process: subprocess.Popen[str]) -> None:
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def confluent_member(bootstrap: str, group: str, topic: str, config: Mapping[str, str]) -> ConfluentMember:
    return ConfluentMember(bootstrap, group, topic, config=dict(config))
