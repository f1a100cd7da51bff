"""The Java kafka-clients 3.9 (what Spark uses), through compat/java/Harness.java run as a subprocess."""

from __future__ import annotations

import fcntl
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record, from_json, to_line

HARNESS_SOURCE = Path(__file__).resolve().parent.parent / "java" / "Harness.java"
# Quiet clients: warnings and errors only, on stderr, which a failing run shows.
JVM_OPTIONS = (
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
)


class HarnessFailed(AssertionError):
    def __init__(self, args: Sequence[str], returncode: int, stdout: str, stderr: str) -> None:
        super().__init__(
            f"Harness {' '.join(args)} exited {returncode}\n--- stdout (tail) ---\n{stdout[-3000:]}"
            f"\n--- stderr (tail) ---\n{stderr[-6000:]}"
        )
        self.stdout = stdout
        self.stderr = stderr


class JavaHarness:
    """A compiled Harness: `run` executes one subcommand and returns its JSON lines. Another program of
    compat/java (TxnHarness.java) compiles and runs the same way, with `source`."""

    def __init__(self, java: str, classpath: Sequence[Path], build_dir: Path, main: str = "Harness") -> None:
        self.java = java
        self.classpath = ":".join(str(p) for p in [build_dir, *classpath])
        self.main = main

    @classmethod
    def compile(
        cls, javac: str, java: str, classpath: Sequence[Path], build_dir: Path, source: Path = HARNESS_SOURCE
    ) -> JavaHarness:
        """Compile `source` into build_dir unless its class file is newer than the source. Two pytest workers
        (scripts/test runs pytest-xdist) may want the same build_dir at once: a lock file makes the second wait for
        the first's class files instead of reading them half written."""
        build_dir.mkdir(parents=True, exist_ok=True)
        with (build_dir / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            cls._compile_unlocked(javac, classpath, build_dir, source)
        return cls(java, classpath, build_dir, source.stem)

    @staticmethod
    def _compile_unlocked(javac: str, classpath: Sequence[Path], build_dir: Path, source: Path) -> None:
        compiled = build_dir / f"{source.stem}.class"
        if not compiled.exists() or compiled.stat().st_mtime < source.stat().st_mtime:
            subprocess.run(
                [
                    javac,
                    "-Xlint:all",
                    "-Werror",
                    "-d",
                    str(build_dir),
                    "-cp",
                    ":".join(map(str, classpath)),
                    str(source),
                ],
                check=True,
                capture_output=True,
                text=True,
            )

    def command(self, bootstrap: str, *args: str, config: Mapping[str, str] | None = None) -> list[str]:
        """The command line of one subcommand (for a caller that runs it itself, e.g. to kill it)."""
        options = ["--bootstrap", bootstrap]
        for key, value in (config or {}).items():
            options += ["--config", f"{key}={value}"]
        return [self.java, *JVM_OPTIONS, "-cp", self.classpath, self.main, *options, *args]

    def run(
        self,
        bootstrap: str,
        *args: str,
        config: dict[str, str] | None = None,
        stdin: str | None = None,
        timeout: float = CONSUME_TIMEOUT_S + 60,
        check: bool = True,
    ) -> list[dict[str, Any]]:  # JSON: whatever the subcommand prints
        command = self.command(bootstrap, *args, config=config)
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise HarnessFailed(args, result.returncode, result.stdout, result.stderr)
        return [json.loads(line) for line in result.stdout.splitlines()]


class Java(Client):
    name = "java-kafka-clients-3.9"

    def __init__(self, harness: JavaHarness) -> None:
        self.harness = harness

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.harness.run(bootstrap, "admin-create", topic, str(partitions))

    def produce(
        self,
        bootstrap: str,
        topic: str,
        records: Sequence[Record],
        codec: str,
        config: Mapping[str, str] | None = None,
    ) -> list[Ack]:
        """`config`: producer settings over the defaults (which are idempotent, acks=all)."""
        lines = self.harness.run(
            bootstrap,
            "produce",
            topic,
            str(len(records)),
            config={"compression.type": codec, **(config or {})},
            stdin="".join(to_line(r) + "\n" for r in records),
        )
        acks = []
        for line in lines:
            if "index" in line:
                acks.append(Ack(line["index"], line["partition"], line["offset"]))
        return acks

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        lines = self.harness.run(bootstrap, "consume", topic, str(count))
        return [from_json(line) for line in lines if "offset" in line]

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        lines = self.harness.run(bootstrap, "list-offsets", topic)
        return {line["partition"]: line["latest"] for line in lines}
