"""Admin and single-record operations in one small language for every client, so the admin, group and error
scenarios are tables written once.

An operation is a tuple of strings (on a subprocess's stdin: one per line, tab-separated):

    create TOPIC PARTITIONS REPLICATION_FACTOR [NAME=VALUE]...   CreateTopics, with topic configs
    describe TOPIC              -> partitions: [ids], replicas: [replica count of each partition]
    delete TOPIC
    wait-gone TOPIC MS          -> gone: true once describing the topic says it does not exist (Kafka deletes a
                                   topic asynchronously), false after MS
    topics                      -> topics: every topic name, sorted
    configs TOPIC               -> configs: {name: value}, sources: {name: Kafka's ConfigSource name}
    offsets TOPIC PARTITION SPEC
                                -> offset, timestamp (SPEC: earliest, latest, max or a timestamp in ms)
    produce TOPIC PARTITION SIZE
                                -> partition, offset: one record, value SIZE bytes of "x", no key (PARTITION -1:
                                   the client's partitioner)
    groups                      -> groups: {group id: state}
    describe-group GROUP        -> state, assignor, members: [{client_id, host, partitions}]
    group-offsets GROUP         -> offsets: {"TOPIC:PARTITION": committed offset}
    producers TOPIC PARTITION   -> producers: [{producer_id, epoch, last_sequence}] (DescribeProducers)

The admin APIs of issue 14 (Java's Admin and confluent-kafka's AdminClient; the others answer unsupported):

    create-partitions TOPIC COUNT [REPLICAS]...
                                CreatePartitions; REPLICAS ("1,2,3") of each new partition if given
    alter-configs TOPIC OP:NAME[=VALUE]...
                                IncrementalAlterConfigs of a topic; OP set, delete, append or subtract
    alter-broker-configs BROKER OP:NAME[=VALUE]...
                                the same for a broker (its id, or - for the cluster-wide defaults)
    broker-configs BROKER       -> configs, sources (as `configs`), writable: [the names not read-only]
    delete-records TOPIC PARTITION OFFSET
                                -> low_watermark (DeleteRecords)
    log-dirs TOPIC              -> dirs: how many log directories the brokers have, sizes: {"BROKER:PARTITION":
                                   bytes} of TOPIC's replicas (DescribeLogDirs; Java only)
    elect-leaders TYPE TOPIC PARTITION
                                ElectLeaders (TYPE PREFERRED or UNCLEAN)
    reassign TOPIC PARTITION REPLICAS|cancel
                                AlterPartitionReassignments (Java only)
    reassignments               -> reassignments: {"TOPIC-PARTITION": {replicas, adding, removing}} (Java only)
    replicas TOPIC              -> partitions: {"PARTITION": {leader, replicas, isr}}

A result is {"op": name, ...the fields above}, or {"op": name, "error": NAME, "message": text} where NAME is what the
client shows: the Java exception's class, librdkafka's error name (KafkaError.name()), kafka-python's exception
class, the text after kcat's "ERROR: ", franz-go's Kafka error name (kerr) or its own error's text (compat/go/franz
main.go, errorName). An operation a client has no API for answers {"error": "unsupported"}.
"""

from __future__ import annotations

import json
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compat.clients import CONSUME_TIMEOUT_S
from compat.clients.franz import FranzProgram, config_args
from compat.clients.java import JavaHarness

Op = tuple[str, ...]
Result = dict[str, Any]

UNSUPPORTED = "unsupported"
KP202_SCRIPT = Path(__file__).with_name("kp202_script.py")


def unsupported(op: Op, why: str) -> Result:
    return {"op": op[0], "error": UNSUPPORTED, "message": why}


def to_stdin(ops: Sequence[Op]) -> str:
    for op in ops:
        assert all("\t" not in part and "\n" not in part for part in op), op
    return "".join("\t".join(op) + "\n" for op in ops)


class Ops(ABC):
    """One client's runner of operations. `config` goes to every client object it creates (its own names)."""

    name: str

    @abstractmethod
    def run(
        self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None
    ) -> list[Result]: ...

    def one(self, bootstrap: str, op: Op, config: Mapping[str, str] | None = None) -> Result:
        (result,) = self.run(bootstrap, [op], config)
        return result


class JavaOps(Ops):
    """Harness `ops`: one JVM, one Admin and one KafkaProducer for the whole list."""

    name = "java"

    def __init__(self, harness: JavaHarness) -> None:
        self.harness = harness

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        results: list[Result] = self.harness.run(
            bootstrap, "ops", config=dict(config or {}), stdin=to_stdin(ops)
        )
        return results


class KafkaPython202Ops(Ops):
    """kp202_script.py `ops` in the kafka-python 2.0.2 venv."""

    name = "kafka-python-2.0.2"

    def __init__(self, python: Path) -> None:
        self.python = str(python)

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        result = subprocess.run(
            [self.python, str(KP202_SCRIPT), bootstrap, "ops", json.dumps(dict(config or {}))],
            input=to_stdin(ops),
            capture_output=True,
            text=True,
            timeout=CONSUME_TIMEOUT_S + 60,
        )
        if result.returncode != 0:
            raise AssertionError(
                f"kafka-python 2.0.2 ops failed ({result.returncode}):\n{result.stderr[-4000:]}"
            )
        return [json.loads(line) for line in result.stdout.splitlines()]


class FranzOps(Ops):
    """compat/go/franz `ops`: one kadm client and kgo producers for the whole list; `config` as `--config` (main.go's
    names)."""

    name = "franz-go"

    def __init__(self, program: FranzProgram) -> None:
        self.program = program

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        return self.program.run(bootstrap, *config_args(config), "ops", stdin=to_stdin(ops))


def run_in_process(ops: Sequence[Op], handlers: Mapping[str, Any], error_name: Any) -> list[Result]:
    """Run each op through handlers[op[0]](*op[1:]) -> dict of fields; an exception becomes its error_name(exc)."""
    results = []
    for op in ops:
        handler = handlers.get(op[0])
        if handler is None:
            results.append(unsupported(op, f"no {op[0]} operation"))
            continue
        try:
            results.append({"op": op[0], **handler(*op[1:])})
        except Exception as error:
            results.append({"op": op[0], "error": error_name(error), "message": str(error)})
    return results
