"""compat/kafka/tools.py itself: every tool resolves to a class of each release (the ones that moved, to the right
one), and a run that fails or hangs fails the test with the command and what it printed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compat.kafka import DEFAULT_VERSIONS, KAFKA_3
from compat.kafka.tools import TOOLS, KafkaTools, ToolFailed
from tests.broker_process import free_port

pytestmark = pytest.mark.timeout(120)

MOVED_IN_4 = {
    "kafka-console-producer": ("kafka.tools.ConsoleProducer", "org.apache.kafka.tools.ConsoleProducer"),
    "kafka-dump-log": ("kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments"),
}


@pytest.mark.parametrize("version", DEFAULT_VERSIONS)
def test_every_tool_has_a_class_in_each_release(version: str, kafka_release: Callable[[str], Path]) -> None:
    tools = KafkaTools(version, kafka_release(version))
    classes = {name: tools.main_class(name) for name in TOOLS}
    for name, (in_3, in_4) in MOVED_IN_4.items():
        assert classes[name] == (in_3 if version.startswith("3.") else in_4)


def test_a_failing_run_reports_its_command_and_output(kafka_release: Callable[[str], Path]) -> None:
    tools = KafkaTools(KAFKA_3, kafka_release(KAFKA_3))
    with pytest.raises(ToolFailed) as failed:
        tools.run("kafka-topics", "--no-such-option")
    message = str(failed.value)
    assert "org.apache.kafka.tools.TopicCommand --no-such-option" in message
    assert "expected success" in message
    assert "no-such-option is not a recognized option" in message

    # Nothing listens there: the consumer waits for a broker until it is killed.
    nowhere = f"127.0.0.1:{free_port()}"
    with pytest.raises(ToolFailed) as hung:
        tools.run("kafka-console-consumer", "--bootstrap-server", nowhere, "--topic", "t", timeout=5)
    assert "killed after 5 s" in str(hung.value)
