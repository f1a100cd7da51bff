"""The pipeline's SparkSession: local mode, the chosen Kafka connector, Spark's own output in a log file.

Two connectors give the same `format()` API with Kafka's option names:

- `kafka`: Spark's own `spark-sql-kafka-0-10`, whose jars (at the installed PySpark's version, minus those PySpark
  ships) are resolved by mvn once into ~/.cache/kbroker/spark-kafka (compat/spark/install.py) and handed to Spark
  as `spark.jars`;
- `kbroker`: kbroker's pure-Python data source (`kbroker.spark`, the `spark` extra), registered in the session by
  `kbroker.spark.register(spark)`: no jar at all.

The driver's JVM is PySpark's child process (`spark-submit`, which becomes java); `Driver.jvm_pid` names it so that
whoever stops the pipeline can stop it by its pid. Its listeners are bound to 127.0.0.1 unless SPARK_LOCAL_IP says
otherwise.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECTORS = ("kafka", "kbroker")

# Two task threads (local[2]) and two shuffle partitions: the aggregates are a few rows per minute of events, and
# Spark's default of 200 shuffle tasks per micro-batch would cost more than the work itself. A stateful query keeps
# its number of shuffle partitions in its checkpoint, so changing it means a new checkpoint.
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "1g",
    # a query with nothing new reports so (an idle progress) each second instead of each ten
    "spark.sql.streaming.noDataProgressEventInterval": "1000",
    # Python workers (the kbroker connector runs in them) are this interpreter, with this venv's packages
    "spark.pyspark.python": sys.executable,
    "spark.pyspark.driver.python": sys.executable,
}


class PipelineError(RuntimeError):
    """A pipeline cannot start or run; the message says why."""


@dataclass
class Driver:
    spark: SparkSession
    jvm: subprocess.Popen[bytes]

    @property
    def jvm_pid(self) -> int:
        return self.jvm.pid


def source_format(connector: str) -> str:
    """The name to give format() for `connector`."""
    if connector not in CONNECTORS:
        raise PipelineError(f"unknown connector {connector!r} (one of {', '.join(CONNECTORS)})")
    return connector


def _kbroker_register() -> Callable[[SparkSession], None]:
    """kbroker.spark.register, checked before a JVM starts for nothing."""
    try:
        module = importlib.import_module("kbroker.spark")
    except ImportError as error:
        raise PipelineError(
            f"--connector kbroker needs kbroker.spark, the pure-Python data source ({error})"
        ) from error
    register: Callable[[SparkSession], None] = module.register
    return register


def connector_jars(connector: str) -> list[Path]:
    """The jars Spark needs for `connector`: the stock connector's, resolved first if need be; none for kbroker's."""
    if connector != "kafka":
        return []
    from compat.spark.install import InstallFailed
    from compat.spark.install import connector_jars as stock_connector_jars

    try:
        return stock_connector_jars()
    except InstallFailed as error:
        raise PipelineError(f"Spark's Kafka connector could not be resolved: {error}") from error


def start(
    app_name: str,
    connector: str,
    log_path: Path,
    *,
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
) -> Driver:
    """A SparkSession with `connector` ready to use; Spark's own output goes to `log_path`."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    source_format(connector)
    register = _kbroker_register() if connector == "kbroker" else None
    spark_conf = SparkConf(loadDefaults=False)
    spark_conf.setMaster(master).setAppName(app_name)
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        spark_conf.set(key, value)
    jars = connector_jars(connector)
    if jars:
        spark_conf.set("spark.jars", ",".join(str(jar) for jar in jars))
    # PySpark reads PYSPARK_PYTHON (not spark.pyspark.python) for the Python processes that plan a Python data
    # source's reads and writes.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    local_ip = os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_LOCAL_HOSTNAME", local_ip)
    spark_conf.set("spark.driver.host", local_ip)
    spark_conf.set("spark.driver.bindAddress", local_ip)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        # (launch_gateway is one of PySpark's few functions without annotations)
        gateway = launch_gateway(  # type: ignore[no-untyped-call]
            spark_conf, popen_kwargs={"stdout": log, "stderr": subprocess.STDOUT}
        )
    jvm: subprocess.Popen[bytes] = gateway.proc
    context = SparkContext(conf=spark_conf, gateway=gateway)
    context.setLogLevel("WARN")
    spark = SparkSession(context)
    if register is not None:
        register(spark)
    return Driver(spark, jvm)


def stop(driver: Driver, timeout: float = 30.0) -> None:
    """Stop Spark, then its JVM by its pid (SIGTERM, SIGKILL after `timeout`)."""
    try:
        driver.spark.stop()
    finally:
        if driver.jvm.poll() is None:
            driver.jvm.terminate()
            try:
                driver.jvm.wait(timeout)
            except subprocess.TimeoutExpired:
                driver.jvm.kill()
                driver.jvm.wait()
        if driver.jvm.stdin is not None:  # PySpark's pipe to the JVM, which it never closes itself
            driver.jvm.stdin.close()
