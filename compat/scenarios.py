"""What the admin, group, idempotence and error scenarios (compat/test_admin.py, test_groups.py,
test_idempotence.py, test_errors.py) share: the clients by name, a quick producer of test data, waiting for events.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from confluent_kafka import Producer

from compat.clients.ops import FranzOps, JavaOps, KafkaPython202Ops, Ops

T = TypeVar("T")

# The stock clients these scenarios run, by the names test_roundtrip.py uses.
CLIENTS = ("kafka-python", "kafka-python-2.0.2", "confluent-kafka", "kcat", "java", "franz-go")
WAIT_S = 60.0

# A group member's settings wherever the client takes them: a quick heartbeat, so that the existing members learn of
# a rebalance within a fraction of a second, and the smallest session timeout Kafka allows by default.
SESSION_TIMEOUT_MS = "6000"
HEARTBEAT_INTERVAL_MS = "300"


def make_ops(name: str, fixture: Callable[[str], Any]) -> Ops:
    """The ops runner of client `name`; `fixture` is request.getfixturevalue (tools are asked for only when used, so a
    missing tool skips, or fails under CI, only its own client's scenarios)."""
    if name == "kafka-python":
        from compat.clients.kafka_python_ops import KafkaPythonOps

        return KafkaPythonOps()
    if name == "kafka-python-2.0.2":
        return KafkaPython202Ops(fixture("kp202_python"))
    if name == "confluent-kafka":
        from compat.clients.confluent_ops import ConfluentOps

        return ConfluentOps()
    if name == "kcat":
        from compat.clients.kcat_ops import KcatOps

        return KcatOps(fixture("kcat_path"))
    if name == "java":
        return JavaOps(fixture("java_harness"))
    if name == "franz-go":
        return FranzOps(fixture("franz_program"))
    raise ValueError(name)


def produce(bootstrap: str, topic: str, records: Sequence[tuple[int, bytes, int | None]]) -> None:
    """(partition, value, timestamp or None) each, through confluent-kafka with acks=all; every one delivered. The
    value is the key too (so that a compacted topic takes it)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "client.id": "compat-test-data"})
    errors: list[str] = []
    for partition, value, timestamp in records:
        producer.produce(
            topic,
            key=value,
            value=value,
            partition=partition,
            timestamp=timestamp or 0,
            on_delivery=lambda error, _message: errors.append(str(error)) if error else None,
        )
    assert producer.flush(WAIT_S) == 0, "records still undelivered"
    assert not errors, errors[:3]


def wait_for(what: str, check: Callable[[], T | None], timeout: float = WAIT_S) -> T:
    """Poll `check` until it returns something other than None or False; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
