"""The one SparkSession of a test session: PySpark in local mode, its JVM a child process stopped by its pid.

Starting Spark costs seconds of JVM start-up and class loading on a busy 2-core machine, so compat/test_spark.py
starts it once and gives every scenario fresh topics and checkpoint directories instead. The JVM (PySpark's
`spark-submit`, which execs java) writes its output to <work_dir>/spark.log; its listeners (the driver's RPC and
block manager, py4j's gateway) are bound to 127.0.0.1; its scratch files stay under work_dir.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STOP_TIMEOUT_S = 30.0

# local[2]: two task threads, the machine's two cores. No UI, and few shuffle partitions: the scenarios move a few
# dozen rows, and 200 shuffle tasks would cost more than the jobs themselves.
SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.app.name": "kbroker-compat",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.memory": "1g",
    # Python workers (createDataFrame from local rows runs one) are this interpreter, with this venv's packages.
    "spark.pyspark.python": sys.executable,
    "spark.pyspark.driver.python": sys.executable,
}

# Spark names its own address after the host's first non-loopback interface unless told: its executor and block
# manager would advertise that address. launch_gateway hands the JVM this process's environment, so it is set here
# while the JVM starts.
LOCAL_ENV = {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOCAL_HOSTNAME": "127.0.0.1"}


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass
class SparkJvm:
    """A started SparkSession (`spark`, a pyspark.sql.SparkSession), its JVM's pid and log."""

    spark: Any
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, chars: int = 8000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""


@contextmanager
def spark_session(jars: Sequence[Path], work_dir: Path) -> Iterator[SparkJvm]:
    """A SparkSession with `jars` on its classpath (spark.jars), stopped with its JVM on exit."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    work_dir.mkdir(parents=True, exist_ok=True)
    conf = SparkConf(loadDefaults=False)
    for key, value in SPARK_CONF.items():
        conf.set(key, value)
    conf.set("spark.jars", ",".join(str(jar) for jar in jars))
    conf.set("spark.local.dir", str(work_dir / "local"))
    conf.set("spark.sql.warehouse.dir", str(work_dir / "warehouse"))
    conf.set("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={work_dir}")
    log_path = work_dir / "spark.log"
    with log_path.open("ab") as log, _environment(LOCAL_ENV):
        # (launch_gateway is one of PySpark's few functions without annotations)
        gateway = launch_gateway(  # type: ignore[no-untyped-call]
            conf, popen_kwargs={"stdout": log, "stderr": subprocess.STDOUT}
        )
    process: subprocess.Popen[bytes] = gateway.proc
    try:
        # PySpark takes the Python of Python data sources (format("kbroker"): their planning and their tasks) from
        # PYSPARK_PYTHON when the context starts; spark.pyspark.python does not reach them.
        with _environment({"PYSPARK_PYTHON": sys.executable}):
            context = SparkContext(conf=conf, gateway=gateway)
        context.setLogLevel("WARN")
        yield SparkJvm(SparkSession(context), process, log_path)
    finally:
        try:
            if SparkContext._active_spark_context is not None:
                SparkContext._active_spark_context.stop()
            gateway.shutdown()
        finally:
            # The JVM would exit once its stdin closes; it is stopped by its pid all the same.
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdin is not None:  # PySpark's pipe to the JVM, which it never closes itself
                process.stdin.close()
            # A later SparkContext in this interpreter launches a new JVM instead of calling the dead one.
            SparkContext._gateway = None
            SparkContext._jvm = None
