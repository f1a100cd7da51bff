"""Apache Kafka's command-line tools, run from a release's jars (no distribution, no bin/ scripts).

    .venv/bin/python -m compat.kafka.tools kafka-topics --bootstrap-server 127.0.0.1:9092 --list
    .venv/bin/python -m compat.kafka.tools --version 4.3.1 kafka-consumer-groups --bootstrap-server HOST:PORT --list
    .venv/bin/python -m compat.kafka.tools --list-tools

Each tool is a main class of kafka_2.13 or kafka-tools, named here as the distribution's script is (kafka-topics for
kafka-topics.sh). Some classes moved between releases (kafka-console-producer and kafka-dump-log left `kafka.tools`
for `org.apache.kafka.tools` in 4.0), so a tool lists its classes, newest first, and the first one the release's
jars hold is run. `KafkaTools.run` is what the tests use: a timeout, stdout and stderr captured, and a failure message
carrying the command and both outputs.

A JVM start costs about a second of CPU here, and the tests start a few hundred. So the JVM starts as quickly as it
can (compat/kafka/process.py's TOOL_JVM_OPTIONS), logs warnings only, to stderr, and shares the classes a first run
loaded (class data sharing: that run writes an archive next to the release's libs directory, keyed by the java
binary and the jars; later runs map it, which halves their start). A missing, stale or unreadable archive only makes
a run slower: the JVM then loads the classes from the jars, silently.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import uuid
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from compat.kafka import KAFKA_3
from compat.kafka.install import InstallFailed, install
from compat.kafka.process import TOOL_JVM_OPTIONS, log_config_options

# script name -> main classes, newest first
TOOLS: dict[str, tuple[str, ...]] = {
    "kafka-topics": ("org.apache.kafka.tools.TopicCommand",),
    "kafka-configs": ("kafka.admin.ConfigCommand",),
    "kafka-acls": ("org.apache.kafka.tools.AclCommand", "kafka.admin.AclCommand"),
    "kafka-console-producer": ("org.apache.kafka.tools.ConsoleProducer", "kafka.tools.ConsoleProducer"),
    "kafka-console-consumer": ("org.apache.kafka.tools.consumer.ConsoleConsumer",),
    "kafka-consumer-groups": ("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",),
    "kafka-get-offsets": ("org.apache.kafka.tools.GetOffsetShell",),
    "kafka-verifiable-producer": ("org.apache.kafka.tools.VerifiableProducer",),
    "kafka-verifiable-consumer": ("org.apache.kafka.tools.VerifiableConsumer",),
    "kafka-producer-perf-test": ("org.apache.kafka.tools.ProducerPerformance",),
    "kafka-consumer-perf-test": ("org.apache.kafka.tools.ConsumerPerformance",),
    "kafka-e2e-latency": ("org.apache.kafka.tools.EndToEndLatency", "kafka.tools.EndToEndLatency"),
    "kafka-dump-log": ("org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments"),
    "kafka-broker-api-versions": (
        "org.apache.kafka.tools.BrokerApiVersionsCommand",
        "kafka.admin.BrokerApiVersionsCommand",
    ),
    "kafka-delete-records": ("org.apache.kafka.tools.DeleteRecordsCommand",),
    "kafka-log-dirs": ("org.apache.kafka.tools.LogDirsCommand",),
    "kafka-leader-election": ("org.apache.kafka.tools.LeaderElectionCommand",),
    "kafka-reassign-partitions": ("org.apache.kafka.tools.reassign.ReassignPartitionsCommand",),
    "kafka-transactions": ("org.apache.kafka.tools.TransactionsCommand",),
    "kafka-features": ("org.apache.kafka.tools.FeatureCommand",),
    "kafka-metadata-quorum": ("org.apache.kafka.tools.MetadataQuorumCommand",),
    "kafka-storage": ("kafka.tools.StorageTool",),
}

# Class data sharing's own messages (e.g. classes it skips while writing the archive) would go to stdout.
_QUIET_CDS = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
# A tool talks to a broker on this machine: seconds, or a minute when the 2 cores are busy.
DEFAULT_TIMEOUT_S = 120.0
# How much of each output a failure message carries.
OUTPUT_TAIL_CHARS = 6000


class ToolFailed(AssertionError):
    """A tool exited with an unexpected status or ran past its timeout; the message carries the command and its
    output."""


class UnknownTool(LookupError):
    """No such tool, or the release's jars hold none of its classes."""


@dataclass(frozen=True)
class ToolResult:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def report(self) -> str:
        """The command and what it printed, for failure messages."""
        return _report(self.command, f"exit status {self.returncode}", self.stdout, self.stderr)


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_TAIL_CHARS else "…" + text[-OUTPUT_TAIL_CHARS:]


def _report(command: list[str], outcome: str, stdout: str, stderr: str) -> str:
    return (
        f"$ {shlex.join(command)}\n{outcome}\n"
        f"--- stdout ---\n{_tail(stdout)}\n--- stderr ---\n{_tail(stderr)}"
    )


@cache
def _classes_in(jar: Path) -> frozenset[str]:
    with zipfile.ZipFile(jar) as archive:
        return frozenset(name for name in archive.namelist() if name.endswith(".class"))


def find_main_class(libs: Path, tool: str) -> str:
    """The class `tool` runs in the release whose jars are in `libs`."""
    if tool not in TOOLS:
        raise UnknownTool(f"unknown tool {tool!r}; known: {', '.join(sorted(TOOLS))}")
    jars = sorted(libs.glob("kafka*.jar"))
    for main in TOOLS[tool]:
        entry = main.replace(".", "/") + ".class"
        if any(entry in _classes_in(jar) for jar in jars):
            return main
    raise UnknownTool(f"none of {', '.join(TOOLS[tool])} is in the jars of {libs}")


class KafkaTools:
    """The CLI tools of Apache Kafka `version`, from its jars in `libs` (resolved by compat/kafka/install.py when
    not given)."""

    def __init__(self, version: str, libs: Path | None = None, *, java: str | None = None) -> None:
        self.version = version
        self.libs = libs if libs is not None else install(version)
        self.java = java or shutil.which("java") or "java"
        self._archive_tried = False

    def __repr__(self) -> str:
        return f"KafkaTools({self.version!r})"

    def main_class(self, tool: str) -> str:
        return find_main_class(self.libs, tool)

    def command(self, tool: str, *args: str, class_sharing: tuple[str, ...] = ()) -> list[str]:
        return [
            self.java,
            *TOOL_JVM_OPTIONS,
            *class_sharing,
            *log_config_options("WARN"),
            "-cp",
            f"{self.libs}/*",
            self.main_class(tool),
            *args,
        ]

    def _archive(self) -> Path | None:
        """Where the class-sharing archive of this release's tools on this java lives (None: java not found)."""
        try:
            java = Path(shutil.which(self.java) or self.java).resolve(strict=True)
            key = f"{java}\0{java.stat().st_mtime_ns}\0" + "\0".join(
                sorted(p.name for p in self.libs.iterdir())
            )
        except OSError:
            return None
        return self.libs.parent / f"tools-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"

    def _class_sharing(self) -> tuple[tuple[str, ...], Path | None]:
        """The JVM options that use the archive, or that write it at exit into the returned scratch path (once per
        KafkaTools: a run that cannot write it is not repeated)."""
        archive = self._archive()
        if archive is None:
            return (), None
        if archive.exists():
            return (f"-XX:SharedArchiveFile={archive}", *_QUIET_CDS), None
        if self._archive_tried:
            return (), None
        self._archive_tried = True
        scratch = archive.with_name(f"{archive.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
        return (f"-XX:ArchiveClassesAtExit={scratch}", *_QUIET_CDS), scratch

    @staticmethod
    def _keep_archive(scratch: Path | None, returncode: int | None) -> None:
        """Move the archive a run wrote at its exit into place, by a rename (a concurrent run maps all of it or
        none), and drop older ones; a run killed by a signal (returncode < 0, None: not waited for) may have left
        half an archive, which is removed instead."""
        if scratch is None:
            return
        archive = scratch.with_name(scratch.name.split(".jsa.", 1)[0] + ".jsa")
        try:
            if returncode is None or returncode < 0 or not scratch.exists():
                scratch.unlink(missing_ok=True)
                return
            os.replace(scratch, archive)
            for old in archive.parent.glob("tools-*.jsa"):
                if old != archive:
                    old.unlink(missing_ok=True)
        except OSError:
            scratch.unlink(missing_ok=True)

    def popen_command(self, tool: str, *args: str) -> tuple[list[str], Path | None]:
        """The command of one run and the scratch archive to keep after it exits (see _keep_archive)."""
        class_sharing, scratch = self._class_sharing()
        return self.command(tool, *args, class_sharing=class_sharing), scratch

    def run(
        self,
        tool: str,
        *args: str,
        input: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        expect_failure: bool = False,
    ) -> ToolResult:
        """Run `tool` to completion. Raises ToolFailed if it runs past `timeout` (it is killed) or if its exit status
        is not what was expected: 0, or anything else with `expect_failure`."""
        command, scratch = self.popen_command(tool, *args)
        returncode = None
        try:
            done = subprocess.run(
                command,
                input=input if input is not None else "",
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as error:
            raise ToolFailed(
                _report(command, f"killed after {timeout} s", _text(error.stdout), _text(error.stderr))
            ) from None
        else:
            returncode = done.returncode
        finally:
            self._keep_archive(scratch, returncode)
        result = ToolResult(command, done.returncode, done.stdout, done.stderr)
        if (result.returncode != 0) != expect_failure:
            expected = "a failure" if expect_failure else "success"
            raise ToolFailed(f"{tool} (Kafka {self.version}): expected {expected}\n{result.report()}")
        return result


def _text(output: str | bytes | None) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else output.decode(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m compat.kafka.tools",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", default=KAFKA_3, help="Apache Kafka release (default: %(default)s)")
    parser.add_argument("--list-tools", action="store_true", help="list the tools and the class each runs")
    parser.add_argument(
        "--print-command", action="store_true", help="print the java command instead of running it"
    )
    parser.add_argument("tool", nargs="?", help="e.g. kafka-topics")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the tool's own arguments")
    args = parser.parse_args(argv)
    try:
        tools = KafkaTools(args.version)
    except InstallFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.list_tools:
        for name in TOOLS:
            try:
                print(f"{name:28} {tools.main_class(name)}")
            except UnknownTool:
                print(f"{name:28} (not in Kafka {args.version})")
        return 0
    if args.tool is None:
        parser.error("name a tool (--list-tools lists them)")
    try:
        if args.print_command:
            print(shlex.join(tools.command(args.tool, *args.args)))
            return 0
        command, scratch = tools.popen_command(args.tool, *args.args)
    except UnknownTool as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    returncode = None
    try:
        returncode = subprocess.run(command).returncode
    finally:
        tools._keep_archive(scratch, returncode)
    return returncode


if __name__ == "__main__":
    sys.exit(main())
