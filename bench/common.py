"""What the bench programs share: CPU readings from /proc, the machine's description, and kbroker sources (the
working tree, or a `git archive` of one revision) to start brokers from.

Brokers and etcd are started through the test fixtures (tests/broker_process.py, tests/etcd_process.py,
tests/cluster_fixture.py); a bench program puts the repository root on sys.path before importing `bench.common`
or `tests.*`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PYTHON = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------------------------------------------
# CPU of a process


def cpu_times(pid: int) -> tuple[float, float]:
    """utime and stime of a process (all its threads, live and exited), in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state) of proc(5)
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads, live and exited), in seconds."""
    return sum(cpu_times(pid))


def thread_run_seconds(pid: int) -> float:
    """Time on CPU of the live threads of a process, in seconds, with nanosecond resolution (schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


@dataclasses.dataclass(frozen=True, slots=True)
class CpuSample:
    ticks: float  # /proc/PID/stat, 10 ms resolution, counts exited threads too
    fine: float  # sum of /proc/PID/task/*/schedstat, ns resolution, live threads only
    system: float = 0.0  # the kernel's part of `ticks` (stime)


def sample_cpu(pid: int) -> CpuSample:
    user, system = cpu_times(pid)
    return CpuSample(user + system, thread_run_seconds(pid), system)


MIN_TICKS_FOR_SHARE = 20
"""Clock ticks (10 ms each) the runs behind a kernel share must add up to: fewer are too coarse to split."""


def system_seconds(a: CpuSample | None, b: CpuSample | None) -> tuple[float, float] | None:
    """(all, kernel) CPU seconds between two samples from the tick counts: the kernel's part is the system time
    (system calls, page faults, the network stack and the page cache's copies on the process's behalf). Ticks are
    coarse, so a share is only worth giving over runs that add up to MIN_TICKS_FOR_SHARE (`system_share`)."""
    if a is None or b is None:
        return None
    return b.ticks - a.ticks, b.system - a.system


def system_share(runs: list[tuple[float, float]]) -> float | None:
    """The kernel's share of the CPU of several runs' `system_seconds`, pooled; None when their ticks are too few."""
    ticks = sum(t for t, _ in runs)
    if round(ticks * CLK_TCK) < MIN_TICKS_FOR_SHARE:
        return None
    return sum(k for _, k in runs) / ticks


def cpu_delta(a: CpuSample | None, b: CpuSample | None) -> float | None:
    """CPU seconds between two samples: the fine clock, unless threads exited meanwhile (then the tick count)."""
    if a is None or b is None:
        return None
    ticks, fine = b.ticks - a.ticks, b.fine - a.fine
    tick = 1.0 / CLK_TCK
    if fine >= 0 and abs(ticks - fine) <= 2 * tick + 0.02 * fine:
        return fine
    return ticks


# --------------------------------------------------------------------------------------------------------------
# the machine


def latency_percentiles(latencies_ms: list[float]) -> dict[str, Any]:
    """p50, p99 and the largest of a latency run's samples (ms), and its distribution for docs/performance.md's CDF
    plot: percentiles 1 to 99, then the 99.9th (bench/run.py's latency runs, bench/floor.py's disk alone)."""
    ordered = sorted(latencies_ms)

    def quantile(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]

    return {
        "p50_ms": quantile(0.50),
        "p99_ms": quantile(0.99),
        "cdf_ms": [quantile(q / 100) for q in range(1, 100)] + [quantile(0.999)],
        "max_ms": ordered[-1],
    }


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"nproc {os.cpu_count()}, {model}{mem}, {platform.system()} {platform.release()}"


PAGE_REPORTING = Path("/sys/module/page_reporting/parameters/reported_kib")


def memory_returned_kib() -> int | None:
    """KiB of free memory this virtual machine's kernel has handed back to its host so far (free page reporting),
    or None where the kernel does not say. Memory handed back is taken again on its next use at a high price: on our
    machines the first write of such a page costs ~2 µs per KiB against ~0.16 µs for a page the guest still holds
    (bench/floor.py measures the latter), and it lands on whoever writes the page first: a broker writing its page
    cache. A run that saw memory returned during a measurement says so, since both brokers pay it and the mock,
    which reuses its own heap, does not."""
    try:
        return int(PAGE_REPORTING.read_text())
    except (OSError, ValueError):
        return None


def reuse_page_cache(nbytes: int, directory: str | None = None) -> None:
    """Write `nbytes` to a scratch file and delete it at once (no disk I/O: dirty pages of a deleted file are
    dropped), so that the next `nbytes` of page cache anyone writes land on pages this machine holds.

    Called right before a timed produce run (untimed, in the load generator): our VMs hand free memory back to their
    host within about a second (free page reporting, above), and a page taken back costs its first writer ~2 µs per
    KiB instead of ~0.2. Whether a run's page cache lands on such pages depended on what the run before it had freed
    and when: the same broker's 1 KiB produce measured anywhere from ~0.5 to ~2.4 µs per record. A broker that has
    run for a while writes into pages reclaimed from its own older page cache, never handed back, and on bare metal
    nothing is; the warmed figure is that one. Both brokers get it; the mock, which writes no page cache, is not
    affected."""
    path = Path(directory or tempfile.gettempdir()) / f"bench-page-cache-{os.getpid()}"
    chunk = bytes(1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(-(-nbytes // len(chunk))):
            os.write(fd, chunk)
    finally:
        os.close(fd)
        path.unlink()


def produce_bytes(records: int, size: int) -> int:
    """What a produce run of `records` values of `size` bytes writes to a log, with room to spare: each record's
    framing, the batches' headers and the indexes."""
    return records * (size + 16) + 16 * 1024 * 1024


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except (OSError, IndexError):
        return "?"


# --------------------------------------------------------------------------------------------------------------
# kbroker sources


def git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


@dataclasses.dataclass(frozen=True, slots=True)
class KBrokerSource:
    """A checkout to run brokers from (BrokerProcess's `source_dir`): the working tree, or an exported commit."""

    label: str  # short, for tables: a commit id, or "working tree"
    description: str  # for the report's header
    directory: Path
    commit: str | None


def check_imports_from(directory: Path) -> None:
    """Python run in `directory` the way BrokerProcess(source_dir=directory) runs the broker imports kbroker and
    protocol from there, not from wherever the editable install points."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), env.get("PYTHONPATH")]))
    found = subprocess.run(
        [PYTHON, "-c", "import kbroker, protocol; print(kbroker.__file__); print(protocol.__file__)"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    paths = found.stdout.split()
    if found.returncode != 0 or len(paths) != 2 or not all(Path(p).is_relative_to(directory) for p in paths):
        raise BenchError(
            f"Python run in {directory} does not import kbroker and protocol from there: "
            f"{found.stdout.strip()} {found.stderr.strip()[-500:]}"
        )


def working_tree() -> KBrokerSource:
    """The repository this file is in. Brokers still run from it explicitly (as their working directory), so
    that what runs does not depend on the directory the bench was started in."""
    check_imports_from(REPO)
    return KBrokerSource(
        label="working tree",
        description=f"the working tree at {git('describe', '--always', '--dirty') or '?'}",
        directory=REPO,
        commit=None,
    )


def export_revision(rev: str, into: Path) -> KBrokerSource:
    """`git archive` one commit into a new directory under `into`."""
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    if not commit:
        raise BenchError(f"not a commit: {rev!r}")
    directory = Path(tempfile.mkdtemp(prefix=f"kbroker-src-{commit[:8]}-", dir=into))
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    check_imports_from(directory)
    subject = git("log", "-1", "--format=%cs %s", commit)[:80]
    return KBrokerSource(
        label=commit[:8],
        description=f"{rev} = commit {commit[:12]} ({subject})",
        directory=directory,
        commit=commit,
    )


@contextlib.contextmanager
def kbroker_sources(revs: list[str] | None) -> Iterator[list[KBrokerSource]]:
    """One source per revision (each exported into a temporary directory, removed on exit), or the working tree
    when `revs` is empty or None. The same commit twice (an A/A run, to see the noise) gets labels #1, #2."""
    if not revs:
        yield [working_tree()]
        return
    root = Path(tempfile.mkdtemp(prefix="kbroker-bench-src-"))
    try:
        sources: list[KBrokerSource] = []
        for rev in revs:
            source = export_revision(rev, root)
            if any(s.label == source.label for s in sources):
                source = dataclasses.replace(source, label=f"{source.label}#{len(sources) + 1}")
            sources.append(source)
        yield sources
    finally:
        shutil.rmtree(root, ignore_errors=True)
