"""Resolve Apache Kafka's jars from Maven Central, once per release, into a cache outside the clone.

    python -m compat.kafka.install 3.9.2 4.3.1     # prints one libs directory per version

`mvn dependency:copy-dependencies` on compat/kafka/pom.xml copies kafka_2.13, kafka-tools, every dependency and
the logging back end into ~/.cache/kbroker/apache-kafka/<version>/libs (KBROKER_KAFKA_CACHE moves the root), once:
compat/maven.py stamps a finished copy and never leaves a half-filled one behind.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from compat.kafka import DEFAULT_VERSIONS, logging_profile
from compat.maven import InstallFailed, is_resolved, kbroker_cache, resolve

__all__ = ["InstallFailed", "cache_root", "install", "is_installed", "libs_dir"]

POM = Path(__file__).resolve().parent / "pom.xml"


def cache_root() -> Path:
    override = os.environ.get("KBROKER_KAFKA_CACHE")
    return Path(override) if override else kbroker_cache("apache-kafka")


def libs_dir(version: str) -> Path:
    return cache_root() / version / "libs"


def is_installed(version: str) -> bool:
    return is_resolved(cache_root() / version, POM, {"kafka.version": version}, [logging_profile(version)])


def install(version: str, *, mvn: str | None = None) -> Path:
    """The libs directory of `version`, resolving it with mvn first unless a finished copy is cached."""
    return resolve(
        cache_root() / version,
        POM,
        {"kafka.version": version},
        profiles=[logging_profile(version)],
        expected_jar=f"kafka_2.13-{version}.jar",
        what=f"Apache Kafka {version}",
        mvn=mvn,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS), help="e.g. 3.9.2 4.3.1")
    args = parser.parse_args(argv)
    for version in args.versions:
        try:
            print(install(version))
        except InstallFailed as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
