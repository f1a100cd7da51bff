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

import hashlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECTORS = ("kafka", "kbroker")
# The JVM says nothing about its class-sharing archive (a mismatch only means a slower start).
QUIET_CDS = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")

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
    # the class-sharing archive this JVM writes at its exit, to keep (see class_sharing)
    archive_scratch: Path | None = None

    @property
    def jvm_pid(self) -> int:
        return self.jvm.pid


def source_format(connector: str) -> str:
    """The name to give format() for `connector`."""
    if connector not in CONNECTORS:
        raise PipelineError(f"unknown connector {connector!r} (one of {', '.join(CONNECTORS)})")
    return connector


def _kbroker_register() -> Callable[[SparkSession], None]:
    """kbroker.spark.register, imported before a JVM starts for nothing."""
    try:
        from kbroker.spark import register
    except ImportError as error:
        raise PipelineError(
            f"--connector kbroker needs kbroker.spark and the `spark` extra ({error})"
        ) from error
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


def _java() -> Path | None:
    """The java PySpark starts: JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    try:
        return Path(candidate).resolve(strict=True) if candidate else None
    except OSError:
        return None


def class_sharing() -> tuple[list[str], Path | None]:
    """The driver JVM's options for a class-sharing archive of the classes Spark loads, and the scratch file to
    keep after a clean exit (None: the archive is there already, or cannot be made).

    Spark's driver loads some ten thousand classes at every start, about a third of its start-up's CPU here. The
    first JVM (per java and PySpark) writes them at its exit (-XX:ArchiveClassesAtExit) into a scratch file that
    `stop` renames into place; later JVMs map it (-XX:SharedArchiveFile). A JVM whose class path does not match
    ignores the archive. The connector's jars (spark.jars) do not count: Spark loads them through a class loader of
    its own, whose classes the JVM does not archive. Archives live under ~/.cache/kbroker/spark-cds, outside any
    clone."""
    java = _java()
    if java is None:
        return [], None
    try:
        import pyspark

        shipped = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").iterdir())
        key = "\0".join([str(java), str(java.stat().st_mtime_ns), *shipped])
    except OSError:
        return [], None
    root = kbroker_cache("spark-cds")
    archive = root / f"spark-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", *QUIET_CDS], None
    try:
        root.mkdir(parents=True, exist_ok=True)
        for partial in root.glob(f"{archive.name}.*.partial"):  # left by a JVM killed before its exit
            pid = partial.name.removeprefix(f"{archive.name}.").split(".")[0]
            if not Path(f"/proc/{pid}").exists():
                partial.unlink(missing_ok=True)
    except OSError:
        return [], None
    scratch = root / f"{archive.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial"
    return [f"-XX:ArchiveClassesAtExit={scratch}", *QUIET_CDS], scratch


def _keep_archive(scratch: Path | None, returncode: int) -> None:
    """Rename the archive a JVM wrote at its exit into place (all of it or nothing for a concurrent reader) and drop
    older ones; a JVM killed by a signal may have left half of one, which is removed."""
    if scratch is None:
        return
    try:
        if returncode < 0 or not scratch.exists():
            scratch.unlink(missing_ok=True)
        else:
            archive = scratch.parent / (scratch.name.split(".jsa.", 1)[0] + ".jsa")
            os.replace(scratch, archive)
            for old in scratch.parent.glob("spark-*.jsa"):  # for another java or PySpark
                if old != archive:
                    old.unlink(missing_ok=True)
    except OSError:
        scratch.unlink(missing_ok=True)


def kbroker_cache(name: str) -> Path:
    """~/.cache/kbroker/<name> (under $XDG_CACHE_HOME when set), as compat/maven.py places its caches."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kbroker" / name


def start(
    app_name: str,
    connector: str,
    log_path: Path,
    *,
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
    local_dir: Path | None = None,
) -> Driver:
    """A SparkSession with `connector` ready to use; Spark's own output goes to `log_path`, its scratch files to
    `local_dir` (default: Spark's, under /tmp)."""
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
    if local_dir is not None:
        spark_conf.set("spark.local.dir", str(local_dir))
    java_options, scratch = class_sharing()
    given = spark_conf.get("spark.driver.extraJavaOptions")
    spark_conf.set("spark.driver.extraJavaOptions", " ".join([*java_options, *([given] if given else [])]))
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
    return Driver(spark, jvm, scratch)


def stop(driver: Driver, timeout: float | None = None) -> None:
    """Stop Spark, then its JVM by its pid (SIGTERM, SIGKILL after `timeout`: by default 30 s, or two minutes for
    a JVM that writes the class-sharing archive at its exit)."""
    if timeout is None:
        timeout = 30.0 if driver.archive_scratch is None else 120.0
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
        _keep_archive(driver.archive_scratch, driver.jvm.returncode)
