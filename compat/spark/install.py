"""Spark's Kafka connector for the installed PySpark, resolved from Maven Central once, into a cache outside the clone.

    python -m compat.spark.install      # prints the jars to hand Spark (spark.jars), one a line

`mvn dependency:copy-dependencies` on compat/spark/pom.xml copies org.apache.spark:spark-sql-kafka-0-10_2.13 at the
installed PySpark's version, with its runtime dependencies, into ~/.cache/kbroker/spark-kafka/<version>/libs
(KBROKER_SPARK_KAFKA_CACHE moves the root), once (compat/maven.py). Of those jars, most (hadoop-client-api and
-runtime, scala-library, snappy-java, lz4-java, slf4j-api, jsr305, spark-tags, ...) ship with PySpark itself in
pyspark/jars, at the versions that Spark release was built with; `connector_jars` hands Spark only the others
(spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, kafka-clients, commons-pool2 for Spark 4.2), so that no
class is on the classpath twice at two versions.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import sys
from pathlib import Path

from compat.maven import InstallFailed, is_resolved, kbroker_cache, resolve

__all__ = ["InstallFailed", "connector_jars", "install", "is_installed", "pyspark_version"]

POM = Path(__file__).resolve().parent / "pom.xml"
# The Scala binary version of every Spark 4 release (PySpark's jars are built for it).
SCALA = "2.13"
# artifactId-version.jar, the version being the first dash-separated part that starts with digits and a dot
# (spark-sql-kafka-0-10_2.13-4.2.0.jar is spark-sql-kafka-0-10_2.13 at 4.2.0; zstd-jni-1.5.7-7.jar is zstd-jni).
JAR_NAME = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d+\.\d.*)\.jar$")


def pyspark_version() -> str:
    """The installed PySpark's version; PackageNotFoundError when it is not installed."""
    return importlib.metadata.version("pyspark")


def pyspark_jars() -> Path:
    """The jars PySpark runs Spark with (site-packages/pyspark/jars)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise InstallFailed("pyspark is not installed")
    return Path(spec.origin).parent / "jars"


def cache_root() -> Path:
    override = os.environ.get("KBROKER_SPARK_KAFKA_CACHE")
    return Path(override) if override else kbroker_cache("spark-kafka")


def _properties(version: str) -> dict[str, str]:
    return {"spark.version": version}


def is_installed(version: str) -> bool:
    return is_resolved(cache_root() / version, POM, _properties(version))


def install(version: str, *, mvn: str | None = None) -> Path:
    """The libs directory of the connector `version` and all its runtime dependencies, resolved first if need be."""
    return resolve(
        cache_root() / version,
        POM,
        _properties(version),
        expected_jar=f"spark-sql-kafka-0-10_{SCALA}-{version}.jar",
        what=f"Spark's Kafka connector {version} (spark-sql-kafka-0-10_{SCALA})",
        mvn=mvn,
    )


def artifact_name(jar: str) -> str:
    """The artifactId a jar's file name carries (its name without the version, for a name without one)."""
    match = JAR_NAME.match(jar)
    return match["artifact"] if match else jar.removesuffix(".jar")


def connector_jars(*, mvn: str | None = None) -> list[Path]:
    """The jars to hand Spark (spark.jars) for the connector matching the installed PySpark: those of its
    dependencies that pyspark/jars does not ship."""
    libs = install(pyspark_version(), mvn=mvn)
    shipped = {artifact_name(jar.name) for jar in pyspark_jars().glob("*.jar")}
    return sorted(jar for jar in libs.glob("*.jar") if artifact_name(jar.name) not in shipped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args(argv)
    try:
        jars = connector_jars()
    except importlib.metadata.PackageNotFoundError:
        print("error: pyspark is not installed (it is in the project's `test` extra)", file=sys.stderr)
        return 1
    except InstallFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for jar in jars:
        print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
