"""franz-go (kgo and kadm), through compat/go/franz/main.go built by compat/go/build.py and run as a subprocess."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record, from_json, to_line

# JSON: whatever a subcommand prints.
Line = dict[str, Any]


class FranzFailed(AssertionError):
    def __init__(self, args: Sequence[str], returncode: int, stdout: str, stderr: str) -> None:
        super().__init__(
            f"franz {' '.join(args)} exited {returncode}\n--- stdout (tail) ---\n{stdout[-3000:]}"
            f"\n--- stderr (tail) ---\n{stderr[-6000:]}"
        )


def config_args(config: Mapping[str, str] | None) -> list[str]:
    """`--config KEY=VALUE` for each setting (main.go lists the names it takes)."""
    return [arg for key, value in (config or {}).items() for arg in ("--config", f"{key}={value}")]


class FranzProgram:
    """The built harness: `run` executes one subcommand and returns its JSON lines; `member` starts a group
    member that runs until stopped."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def command(self, bootstrap: str, *args: str) -> list[str]:
        return [str(self.binary), "--brokers", bootstrap, *args]

    def run(
        self,
        bootstrap: str,
        *args: str,
        stdin: str | None = None,
        timeout: float = CONSUME_TIMEOUT_S + 60,
    ) -> list[Line]:
        result = subprocess.run(
            self.command(bootstrap, *args), input=stdin, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise FranzFailed(args, result.returncode, result.stdout, result.stderr)
        return [json.loads(line) for line in result.stdout.splitlines()]

    def member(self, bootstrap: str, topic: str, group: str) -> GroupMember:
        return GroupMember(self.command(bootstrap, "group-consume", topic, group))


class GroupMember:
    """A running `franz group-consume`: its JSON lines collected as they come, stopped by closing its stdin (it
    commits, leaves the group and exits) or, failing that, by killing its pid."""

    def __init__(self, command: list[str]) -> None:
        self.lines: list[Line] = []
        self._changed = threading.Condition()
        self._stderr: list[str] = []
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            with self._changed:
                self.lines.append(json.loads(text))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            self._stderr.append(text)

    def records(self) -> list[Consumed]:
        with self._changed:
            return [from_json(line) for line in self.lines if "offset" in line]

    def assignment(self) -> set[int]:
        """The partitions this member owns now: cooperative callbacks name only what is added or revoked."""
        owned: set[int] = set()
        with self._changed:
            for line in self.lines:
                for topic_partitions in line.get("assigned", {}).values():
                    owned |= set(topic_partitions)
                for key in ("revoked", "lost"):
                    for topic_partitions in line.get(key, {}).values():
                        owned -= set(topic_partitions)
        return owned

    def wait_for(self, what: str, predicate: Callable[[GroupMember], bool], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.process.poll() is not None and not predicate(self)):
                    raise AssertionError(f"group member: no {what} within {timeout} s\n{self.describe()}")
                self._changed.wait(min(remaining, 0.5))

    def describe(self) -> str:
        return (
            f"exit code {self.process.poll()}; last lines: {self.lines[-20:]}\n"
            f"stderr tail: {''.join(self._stderr)[-3000:]}"
        )

    def stop(self, timeout: float = 60.0) -> None:
        """Close stdin: the member commits, leaves the group and exits. Killed (by pid) if it does not."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired as error:
                self.kill()
                raise AssertionError(
                    f"group member did not leave within {timeout} s\n{self.describe()}"
                ) from error
        for reader in self._readers:
            reader.join(10)
        if self.process.returncode != 0:
            raise AssertionError(f"group member failed\n{self.describe()}")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


class Franz(Client):
    name = "franz-go"

    def __init__(self, program: FranzProgram) -> None:
        self.program = program

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        [created] = self.program.run(bootstrap, "create", topic, str(partitions))
        assert created["error"] is None, created

    def produce(
        self,
        bootstrap: str,
        topic: str,
        records: Sequence[Record],
        codec: str,
        config: Mapping[str, str] | None = None,
    ) -> list[Ack]:
        """`config`: kgo settings over the defaults (which are idempotent, acks=all), by main.go's names."""
        lines = self.program.run(
            bootstrap,
            *config_args(config),
            "produce",
            topic,
            codec,
            stdin="".join(to_line(r) + "\n" for r in records),
        )
        assert lines[-1] == {"sent": len(records), "acknowledged": len(records), "failed": 0}, lines[-1]
        return [Ack(line["index"], line["partition"], line["offset"]) for line in lines if "index" in line]

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        lines = self.program.run(
            bootstrap, "consume", topic, str(partitions), str(count), str(int(CONSUME_TIMEOUT_S))
        )
        return [from_json(line) for line in lines if "offset" in line]

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        lines = self.program.run(bootstrap, "list-offsets", topic)
        return {line["partition"]: line["latest"] for line in lines}
