"""Kafka Streams at the Java client's version (3.9.2), resolved from Maven Central once, into a cache outside the
clone.

    python -m compat.streams.install      # prints the libs directory

`mvn dependency:copy-dependencies` on compat/streams/pom.xml copies org.apache.kafka:kafka-streams with its runtime
dependencies (kafka-clients at the same version, rocksdbjni, slf4j) into ~/.cache/kbroker/kafka-streams/<version>/
libs, once (compat/maven.py). compat/test_transactions.py compiles compat/java/StreamsWordCount.java against them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from compat.maven import InstallFailed, is_resolved, kbroker_cache, resolve

__all__ = ["KAFKA_STREAMS_VERSION", "InstallFailed", "install", "is_installed"]

POM = Path(__file__).resolve().parent / "pom.xml"
# The Java client's version (scripts/build_kafka_clients_jar.py): Streams must match the client it runs on.
KAFKA_STREAMS_VERSION = "3.9.2"


def _properties(version: str) -> dict[str, str]:
    return {"kafka.version": version}


def is_installed(version: str = KAFKA_STREAMS_VERSION) -> bool:
    return is_resolved(kbroker_cache("kafka-streams") / version, POM, _properties(version))


def install(version: str = KAFKA_STREAMS_VERSION, *, mvn: str | None = None) -> Path:
    """The libs directory of Kafka Streams `version` and its runtime dependencies, resolved first if need be."""
    return resolve(
        kbroker_cache("kafka-streams") / version,
        POM,
        _properties(version),
        expected_jar=f"kafka-streams-{version}.jar",
        what=f"Kafka Streams {version}",
        mvn=mvn,
    )


def main() -> int:
    try:
        print(install())
    except InstallFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
