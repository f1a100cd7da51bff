"""The Spark fixtures every compat/ module shares (compat/conftest.py registers them once, so that one SparkSession
serves the whole test session: a second session-scoped definition in another module would start a second
SparkContext in this interpreter, which PySpark refuses)."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from compat.spark.install import InstallFailed, connector_jars, is_installed, pyspark_version
from compat.spark.session import SparkJvm, spark_session
from tests.conftest import missing_tool

if TYPE_CHECKING:  # pyspark is imported by the session fixture, which says so when it is missing
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark_connector_jars() -> list[Path]:
    """The jars of Spark's Kafka connector to hand Spark (resolved first if scripts/test has not)."""
    if importlib.util.find_spec("pyspark") is None:
        missing_tool("pyspark is not installed (it is in the `test` extra)")
    if shutil.which("java") is None:
        missing_tool("java is not installed (apt package openjdk-17-jdk-headless), needed by Spark")
    if not is_installed(pyspark_version()) and shutil.which("mvn") is None:
        missing_tool("mvn is not installed (apt package maven), needed to resolve Spark's Kafka connector")
    try:
        return connector_jars()
    except InstallFailed as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def spark_jvm(
    spark_connector_jars: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparkJvm]:
    """The session's SparkSession, with Spark's Kafka connector on its classpath and format("kbroker")
    registered."""
    import kbroker.spark

    with spark_session(spark_connector_jars, tmp_path_factory.mktemp("spark")) as jvm:
        kbroker.spark.register(jvm.spark)
        yield jvm


@pytest.fixture
def spark(spark_jvm: SparkJvm, request: pytest.FixtureRequest) -> Iterator[SparkSession]:
    """The SparkSession; a failing scenario's report shows the tail of Spark's log (its teardown output)."""
    failed_before = request.session.testsfailed
    yield spark_jvm.spark
    if request.session.testsfailed != failed_before:
        print(f"--- Spark's log ({spark_jvm.log_path}), tail ---\n{spark_jvm.log_tail()}")
