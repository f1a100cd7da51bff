"""Real Apache Kafka from Maven Central, no Docker: the reference compat/ compares kbroker against.

- `install.py`: resolve a release's jars with mvn, once, into a cache outside the clone.
- `process.py`: `KafkaProcess` (one KRaft node, broker and controller in one JVM) and `KafkaCluster` (several).
- `run.py`: start one by hand in the foreground: `.venv/bin/python -m compat.kafka.run --version 3.9.2`.
- `tools.py`: the release's CLI tools (`KafkaTools.run` for tests; `.venv/bin/python -m compat.kafka.tools kafka-topics
  --bootstrap-server HOST:PORT --list` by hand).

The releases compat/ runs against by default: the 3.9 line our codec's message specs come from, and the newest 4.x
whose kafka-tools (the CLI tools) Maven Central serves here too (4.4.0's kafka_2.13 resolves, its kafka-tools does
not), so that the broker and its tools of one release can be compared.
"""

from __future__ import annotations

KAFKA_3 = "3.9.2"
KAFKA_4 = "4.3.1"
DEFAULT_VERSIONS = (KAFKA_3, KAFKA_4)


def major(version: str) -> int:
    return int(version.split(".", 1)[0])


def logging_profile(version: str) -> str:
    """The pom's profile adding the logging back end the release's own distribution ships: log4j 1 (reload4j) up
    to 3.x, log4j 2 from 4.0 (KIP-653)."""
    return "log-reload4j" if major(version) < 4 else "log-log4j2"
