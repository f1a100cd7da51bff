"""The streaming job as a child process: started, watched through its progress lines, stopped or killed by pid.

PySpark's driver is two processes: the Python interpreter running the job and the JVM it starts (its child, which
itself may start Python workers). `StreamingJobProcess.kill()` sends SIGKILL to every one of them by its pid, as a
crash would leave them; `stop()` asks the job to stop (SIGTERM: it stops its queries and its JVM), then kills by pid
whatever of its process tree is still there after a timeout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pipelines.events import format_time
from pipelines.streaming import AGGREGATES_QUERY, RESULTS_QUERY, StreamingSettings

REPO = Path(__file__).resolve().parent.parent
# the job stops its queries and its JVM, which may write a class-sharing archive first (pipelines/spark.py)
STOP_TIMEOUT_S = 180.0
GONE_TIMEOUT_S = 30.0

Line = dict[str, Any]


@dataclass(frozen=True)
class Proc:
    """A process named by its pid and its start time (so that a pid reused later is not mistaken for it)."""

    pid: int
    start_time: int

    def alive(self) -> bool:
        stat = _stat(self.pid)
        return stat is not None and stat[1] == self.start_time and stat[2] != "Z"


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time in clock ticks, state) of a process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # the command name is in parentheses and may hold spaces or parentheses itself
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[19]), fields[0]


def process_tree(root: int) -> list[Proc]:
    """The process `root` and all its descendants alive now, parents first."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        if stat is None:
            continue
        children.setdefault(stat[0], []).append(int(entry.name))
        starts[int(entry.name)] = stat[1]
    if root not in starts:
        return []
    out = []
    todo = [root]
    while todo:
        pid = todo.pop(0)
        out.append(Proc(pid, starts[pid]))
        todo += sorted(children.get(pid, []))
    return out


def freeze_tree(root: int) -> list[Proc]:
    """SIGSTOP `root` and its descendants, again until no new one appears (a stopped process cannot start
    another), and return them all: the whole tree, held still for SIGKILL."""
    frozen: dict[int, Proc] = {}
    while True:
        new = [proc for proc in process_tree(root) if proc.pid not in frozen]
        if not new:
            return list(frozen.values())
        for proc in new:
            try:
                os.kill(proc.pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
            frozen[proc.pid] = proc


def kill_all(processes: list[Proc], timeout: float = GONE_TIMEOUT_S) -> None:
    """SIGKILL each process by its pid, then wait until none is alive."""
    for proc in processes:
        if proc.alive():
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    while any(proc.alive() for proc in processes):
        if time.monotonic() > deadline:
            alive = [proc.pid for proc in processes if proc.alive()]
            raise RuntimeError(f"processes {alive} still alive {timeout} s after SIGKILL")
        time.sleep(0.05)


def parse_timestamp(text: str) -> float:
    """A progress timestamp (ISO 8601, "Z") in seconds since the epoch."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class StreamingJobProcess:
    """`python -m pipelines.streaming` with `settings`, its JSON progress lines collected as they come."""

    def __init__(self, settings: StreamingSettings, *, python: str = sys.executable) -> None:
        self.settings = settings
        self.python = python
        self.lines: list[Line] = []
        self.changed = threading.Condition()
        self.process: subprocess.Popen[bytes] | None = None
        self.tree: list[Proc] = []
        self._reader: threading.Thread | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def stderr_path(self) -> Path:
        return self.settings.data_dir / "job.stderr"

    def command(self) -> list[str]:
        s = self.settings
        return [
            self.python,
            "-m",
            "pipelines.streaming",
            f"--bootstrap={s.bootstrap}",
            f"--connector={s.connector}",
            f"--data-dir={s.data_dir}",
            f"--events-topic={s.events_topic}",
            f"--results-topic={s.results_topic}",
            f"--watermark-delay={s.watermark_delay_s}",
            f"--trigger-interval={s.trigger_interval_s}",
            f"--max-offsets-per-trigger={s.max_offsets_per_trigger}",
        ]

    def start(self) -> None:
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        self._stderr = self.stderr_path.open("ab")
        self.process = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()

    @property
    def progress_path(self) -> Path:
        """A copy of every line the job printed."""
        return self.settings.data_dir / "progress.jsonl"

    def _read(self, stream: IO[bytes]) -> None:
        with self.progress_path.open("ab") as copy:
            for raw in stream:
                copy.write(raw)
                copy.flush()
                self._take(raw)
        with self.changed:
            self.lines.append({"event": "exited"})
            self.changed.notify_all()

    def _take(self, raw: bytes) -> None:
        try:
            line = json.loads(raw)
        except ValueError:
            return
        if isinstance(line, dict):
            if line.get("event") == "started":
                # Known from now on, even if the job's Python dies first and its JVM is left an orphan.
                self._remember_tree()
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def wait_for(self, predicate: Callable[[list[Line]], Any], timeout: float, what: str) -> Any:
        """Wait until predicate(lines) is truthy and return it; fail if the job exits or `timeout` passes."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                result = predicate(self.lines)
                if result:
                    return result
                if self.lines and self.lines[-1].get("event") in ("exited", "failed"):
                    raise RuntimeError(
                        f"the streaming job ended while waiting for {what}: {self.lines[-3:]}\n"
                        f"{self.stderr_tail()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no {what} after {timeout:.0f} s; last lines {self.lines[-3:]}")
                self.changed.wait(min(remaining, 1.0))

    def progress(self, query: str) -> list[Line]:
        with self.changed:
            return [
                line for line in self.lines if line.get("event") == "progress" and line.get("query") == query
            ]

    def jvm_pid(self) -> int | None:
        with self.changed:
            for line in self.lines:
                if line.get("event") == "started":
                    return int(line["jvm_pid"])
        return None

    def stderr_tail(self, chars: int = 4000) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    def _freeze(self) -> None:
        assert self.process is not None
        with self.changed:
            seen = {proc.pid for proc in self.tree}
            self.tree += [proc for proc in freeze_tree(self.process.pid) if proc.pid not in seen]

    def _remember_tree(self) -> None:
        """Add the job's processes alive now to those to stop (the reader thread and the caller both do)."""
        if self.process is None:
            return
        with self.changed:
            seen = {proc.pid for proc in self.tree}
            self.tree += [proc for proc in process_tree(self.process.pid) if proc.pid not in seen]

    def kill(self) -> None:
        """SIGKILL the job's Python and its JVM (and any worker), each by its pid, as a crash would."""
        assert self.process is not None
        self._freeze()
        kill_all(self.tree)
        self.process.wait()
        self._close()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, wait for the job to stop its queries and JVM; SIGKILL by pid what is left after `timeout`."""
        if self.process is None:
            return 0
        self._remember_tree()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = -signal.SIGKILL
            self._freeze()
        kill_all(self.tree)
        self.process.wait()
        self._close()
        return code

    def _close(self) -> None:
        if self._reader is not None:
            self._reader.join(10)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # ---- progress ----------------------------------------------------------------------------------------------

    def wait_caught_up(self, ends: dict[int, int], watermark_ms: int, timeout: float) -> None:
        """Wait until the job has read the events topic up to `ends`, closed every window that the watermark
        `watermark_ms` allows, and copied them all to the results topic."""
        topic = self.settings.events_topic
        last = self.wait_for(
            lambda lines: aggregates_caught_up(lines, topic, ends, format_time(watermark_ms)),
            timeout,
            f"aggregation caught up with {ends}",
        )
        self.wait_for(lambda lines: results_caught_up(lines, last), timeout, "results copied")

    def batches(self, query: str) -> int:
        """Micro-batches of `query` that read rows."""
        return len({line["batch"] for line in self.progress(query) if line.get("input_rows")})


def offsets_reached(end_offset: Any, topic: str, ends: dict[int, int]) -> bool:
    """Whether a Kafka source's end offset ({topic: {partition: offset}}) is at `ends` for every partition."""
    if not isinstance(end_offset, dict):
        return False
    got = end_offset.get(topic) or {}
    return all(int(got.get(str(partition), -1)) >= end for partition, end in ends.items() if end > 0)


def aggregates_caught_up(
    lines: list[Line], topic: str, ends: dict[int, int], watermark: str | None
) -> Line | None:
    """The first progress of the aggregates query that read nothing, its source already at `ends` (and its
    watermark at least `watermark`, ISO 8601): the batch that follows the last data, in which Spark closes the
    windows the last data's watermark allows; every committed window is in the sink by then."""
    for line in lines:
        if line.get("event") != "progress" or line.get("query") != AGGREGATES_QUERY or line.get("input_rows"):
            continue
        if not offsets_reached(line.get("end_offset"), topic, ends):
            continue
        if watermark is not None and parse_timestamp(line.get("watermark") or "1970-01-01T00:00:00Z") < (
            parse_timestamp(watermark)
        ):
            continue
        return line
    return None


def results_caught_up(lines: list[Line], after: Line) -> Line | None:
    """The first progress of the results query that read nothing in a trigger that began after the aggregates'
    progress `after` had ended: its file source listed the sink's log after the last commit and found no new file."""
    done = parse_timestamp(after["timestamp"]) + (after.get("duration_ms") or 0) / 1000
    for line in lines:
        if line.get("event") != "progress" or line.get("query") != RESULTS_QUERY or line.get("input_rows"):
            continue
        if parse_timestamp(line["timestamp"]) > done:
            return line
    return None
