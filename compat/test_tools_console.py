"""kafka-console-producer and kafka-console-consumer against each target: keys (parse.key with a key.separator of
our choosing), headers (parse.headers), --from-beginning, and a --group whose committed offsets a second consumer
of the group resumes from.
"""

from __future__ import annotations

import pytest

from compat.kafka import major
from compat.kafka.tools import KafkaTools
from compat.target import Target

pytestmark = pytest.mark.timeout(300)

# What the consumer prints for each record (Kafka's DefaultMessageFormatter): partition, offset, headers, key, value.
PRINT = (
    "print.partition=true",
    "print.offset=true",
    "print.headers=true",
    "print.key=true",
    "key.separator= | ",
)


def properties(option: str, tools: KafkaTools, *settings: str) -> list[str]:
    """`--property` each setting; Kafka 4 renamed the option (`--reader-property` of the producer,
    `--formatter-property` of the consumer) and warns about the old name on stdout."""
    name = option if major(tools.version) >= 4 else "--property"
    return [arg for setting in settings for arg in (name, setting)]


def produce_lines(tools: KafkaTools, target: Target, topic: str, lines: list[str]) -> None:
    # headers, then the key, then the value; `::` splits the key from the value, tabs the headers from the key
    tools.run(
        "kafka-console-producer", "--bootstrap-server", target.bootstrap, "--topic", topic,
        *properties("--reader-property", tools, "parse.key=true", "key.separator=::", "parse.headers=true"),
        input="".join(line + "\n" for line in lines),
    )  # fmt: skip


def consume(tools: KafkaTools, target: Target, topic: str, count: int, *options: str) -> list[str]:
    result = tools.run(
        "kafka-console-consumer", "--bootstrap-server", target.bootstrap, "--topic", topic,
        "--max-messages", str(count), "--timeout-ms", "60000",
        *properties("--formatter-property", tools, *PRINT), *options,
    )  # fmt: skip
    assert f"Processed a total of {count} messages" in result.stderr, result.report()
    # Kafka 4 also prints a notice about KIP-848's consumer protocol on stdout.
    return [line for line in result.stdout.splitlines() if line.startswith("Partition:")]


def test_keys_headers_from_beginning_and_group(target: Target, kafka_tools: KafkaTools) -> None:
    topic = target.topic("tools-console")
    group = target.topic("tools-console-group")
    target.create_topic(topic, 1)

    produce_lines(
        kafka_tools,
        target,
        topic,
        ["trace:abc,tenant:t1\tuser-1::signed up", 'n:1\tuser-2::{"a": 1}', "empty:\tuser-1::logged in"],
    )
    first = [
        "Partition:0 | Offset:0 | trace:abc,tenant:t1 | user-1 | signed up",
        'Partition:0 | Offset:1 | n:1 | user-2 | {"a": 1}',
        "Partition:0 | Offset:2 | empty: | user-1 | logged in",
    ]
    # --from-beginning without a group: each run reads from the start.
    assert consume(kafka_tools, target, topic, 3, "--from-beginning") == first
    # In a group: reads from the start (no committed offsets yet), commits on close.
    assert consume(kafka_tools, target, topic, 3, "--from-beginning", "--group", group) == first

    produce_lines(kafka_tools, target, topic, ["n:3\tuser-3::bought"])
    # The same group resumes after its committed offset, --from-beginning or not.
    assert consume(kafka_tools, target, topic, 1, "--group", group, "--from-beginning") == [
        "Partition:0 | Offset:3 | n:3 | user-3 | bought"
    ]
