"""PowerFS: a FUSE file system of our own, in memory, that knows what was fsynced, for power-loss and disk-error tests.

Every file keeps two contents: what was written (what reads see) and what was last fsynced; every directory keeps two
entry tables: the current one and the one at its last fsync. `power_cut` throws away everything that was not made
durable, the strict POSIX way: a file's unsynced writes (and truncations), and every creation, rename and unlink in a
directory not fsynced since. A kill -9 alone loses nothing (the kernel's page cache survives a process), which is why
the tests need this: kill the broker, cut the power, start it again on what a real disk would have kept.

`power_cut(torn=True)` keeps, of each file whose only unsynced change is an append, a random prefix of that append
(0 bytes up to all of it): a write torn at an arbitrary byte, as a disk may leave it.

Disk errors are injected by rule: `fail(op, errno, path, count)` makes the next `count` calls of `op` (`write`,
`fsync`, `read`, `create`, or `any`) on paths containing `path` fail with that errno (EIO, ENOSPC, ...); `heal`
removes the rules.

It runs as its own process, in the foreground, mounted with the kernel's caches off (`direct_io`, attribute and
entry timeouts 0), so that after a power cut nobody reads what the kernel remembered:

    python -m tests.faults.powerfs MOUNTPOINT CONTROL_SOCKET

and is driven over a Unix socket, one JSON command per line (`{"cmd": "power_cut"}`, answered `{"ok": ...}`), by
`PowerFS` below, which starts it, waits for the mount, and on `close` unmounts it (`fusermount3 -u`, lazily if
busy) and stops the process by its pid.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ---- the file system (runs in the FUSE process) ----------------------------------------------------------------


@dataclass(eq=False)
class Node:
    mode: int
    data: bytearray = field(default_factory=bytearray)
    synced: bytes = b""
    entries: dict[str, Node] = field(default_factory=dict)
    synced_entries: dict[str, Node] = field(default_factory=dict)
    mtime_ns: int = field(default_factory=time.time_ns)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


@dataclass
class Rule:
    op: str
    errno: int
    path: str
    remaining: int  # -1: forever


class PowerLossFS:
    """The mfusepy Operations (kept free of mfusepy types so that the tests can import this module without it)."""

    use_ns = True

    def __init__(self) -> None:
        self.root = Node(stat.S_IFDIR | 0o755)
        self.handles: dict[int, Node] = {}
        self.next_handle = 1
        self.rules: list[Rule] = []
        self.lock = threading.Lock()
        self.stats = {"fsyncs": 0, "fsyncdirs": 0, "writes": 0, "injected": 0, "power_cuts": 0}

    # ---- helpers

    def _lookup(self, path: str) -> Node:
        node = self.root
        for part in _parts(path):
            if not node.is_dir or part not in node.entries:
                raise OSError(errno.ENOENT, path)
            node = node.entries[part]
        return node

    def _parent(self, path: str) -> tuple[Node, str]:
        parts = _parts(path)
        if not parts:
            raise OSError(errno.EINVAL, path)
        parent = self._lookup("/" + "/".join(parts[:-1]))
        if not parent.is_dir:
            raise OSError(errno.ENOTDIR, path)
        return parent, parts[-1]

    def _inject(self, op: str, path: str) -> None:
        for rule in self.rules:
            if rule.remaining != 0 and rule.op in (op, "any") and rule.path in path:
                if rule.remaining > 0:
                    rule.remaining -= 1
                self.stats["injected"] += 1
                raise OSError(rule.errno, os.strerror(rule.errno))

    def _handle(self, node: Node) -> int:
        fh = self.next_handle
        self.next_handle += 1
        self.handles[fh] = node
        return fh

    # ---- control

    def power_cut(self, torn: bool = False, seed: int = 0) -> dict[str, int]:
        """Revert to what was durable. Returns how many files and bytes were lost."""
        rng = random.Random(seed)
        lost_files = lost_bytes = 0
        seen: set[int] = set()

        def revert(node: Node) -> None:
            nonlocal lost_files, lost_bytes
            if id(node) in seen:
                return
            seen.add(id(node))
            if node.is_dir:
                node.entries = dict(node.synced_entries)
                for child in node.entries.values():
                    revert(child)
                return
            if bytes(node.data) != node.synced:
                lost_files += 1
                keep = node.synced
                if torn and len(node.data) > len(node.synced) and node.data.startswith(node.synced):
                    keep = bytes(
                        node.data[: len(node.synced) + rng.randint(0, len(node.data) - len(node.synced))]
                    )
                lost_bytes += abs(len(node.data) - len(keep))
                node.data = bytearray(keep)

        with self.lock:
            revert(self.root)
            self.handles.clear()
            self.stats["power_cuts"] += 1
        return {"lost_files": lost_files, "lost_bytes": lost_bytes}

    def fail(self, op: str, error: str, path: str = "", count: int = -1) -> None:
        with self.lock:
            self.rules.append(Rule(op, getattr(errno, error), path, count))

    def heal(self) -> None:
        with self.lock:
            self.rules.clear()

    def corrupt(self, path: str, offset: int, xor: int = 0x01) -> None:
        """Flip bits of one byte, in what was written and in what is durable (a bad sector: it is on the disk)."""
        with self.lock:
            node = self._lookup(path)
            node.data[offset] ^= xor
            if offset < len(node.synced):
                synced = bytearray(node.synced)
                synced[offset] ^= xor
                node.synced = bytes(synced)

    def unsynced_bytes(self) -> int:
        total = 0
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.is_dir:
                stack.extend(node.entries.values())
            elif bytes(node.data) != node.synced:
                total += abs(len(node.data) - len(node.synced)) or len(node.data)
        return total

    # ---- FUSE operations

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        with self.lock:
            node = self.handles[fh] if fh and fh in self.handles else self._lookup(path)
            size = len(node.data) if not node.is_dir else 4096
            return {
                "st_mode": node.mode,
                "st_nlink": 2 if node.is_dir else 1,
                "st_size": size,
                "st_blocks": (size + 511) // 512,
                "st_mtime": node.mtime_ns,
                "st_ctime": node.mtime_ns,
                "st_atime": node.mtime_ns,
                "st_uid": os.getuid(),
                "st_gid": os.getgid(),
            }

    def readdir(self, path: str, fh: int) -> list[str]:
        with self.lock:
            return [".", "..", *self._lookup(path).entries]

    def opendir(self, path: str) -> int:
        with self.lock:
            self._lookup(path)
            return 0

    def releasedir(self, path: str, fh: int) -> int:
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        with self.lock:
            self._inject("create", path)
            parent, name = self._parent(path)
            if name in parent.entries:
                raise OSError(errno.EEXIST, path)
            parent.entries[name] = Node(stat.S_IFDIR | (mode & 0o7777))
            return 0

    def rmdir(self, path: str) -> int:
        with self.lock:
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                raise OSError(errno.ENOENT, path)
            if node.entries:
                raise OSError(errno.ENOTEMPTY, path)
            del parent.entries[name]
            return 0

    def create(self, path: str, mode: int, fi: object = None) -> int:
        with self.lock:
            self._inject("create", path)
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                node = parent.entries[name] = Node(stat.S_IFREG | (mode & 0o7777))
            return self._handle(node)

    def open(self, path: str, flags: int) -> int:
        with self.lock:
            node = self._lookup(path)
            if flags & os.O_TRUNC:
                node.data = bytearray()
            return self._handle(node)

    def release(self, path: str, fh: int) -> int:
        with self.lock:
            self.handles.pop(fh, None)
            return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        with self.lock:
            self._inject("read", path)
            node = self.handles.get(fh) or self._lookup(path)
            return bytes(node.data[offset : offset + size])

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        with self.lock:
            self._inject("write", path)
            node = self.handles.get(fh) or self._lookup(path)
            if offset > len(node.data):
                node.data.extend(bytes(offset - len(node.data)))
            node.data[offset : offset + len(data)] = data
            node.mtime_ns = time.time_ns()
            self.stats["writes"] += 1
            return len(data)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        with self.lock:
            self._inject("write", path)
            node = self.handles[fh] if fh and fh in self.handles else self._lookup(path)
            if length < len(node.data):
                del node.data[length:]
            else:
                node.data.extend(bytes(length - len(node.data)))
            return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        with self.lock:
            self._inject("fsync", path)
            node = self.handles.get(fh) or self._lookup(path)
            node.synced = bytes(node.data)
            self.stats["fsyncs"] += 1
            return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        with self.lock:
            self._inject("fsync", path)
            node = self._lookup(path)
            node.synced_entries = dict(node.entries)
            self.stats["fsyncdirs"] += 1
            return 0

    def unlink(self, path: str) -> int:
        with self.lock:
            parent, name = self._parent(path)
            if name not in parent.entries:
                raise OSError(errno.ENOENT, path)
            del parent.entries[name]
            return 0

    def rename(self, old: str, new: str) -> int:
        with self.lock:
            old_parent, old_name = self._parent(old)
            new_parent, new_name = self._parent(new)
            node = old_parent.entries.get(old_name)
            if node is None:
                raise OSError(errno.ENOENT, old)
            del old_parent.entries[old_name]
            new_parent.entries[new_name] = node
            return 0

    def chmod(self, path: str, mode: int) -> int:
        with self.lock:
            node = self._lookup(path)
            node.mode = (node.mode & ~0o7777) | (mode & 0o7777)
            return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        with self.lock:
            self._lookup(path).mtime_ns = times[1] if times else time.time_ns()
            return 0

    def statfs(self, path: str) -> dict[str, int]:
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": 1 << 20, "f_bfree": 1 << 19,
                "f_bavail": 1 << 19, "f_files": 1 << 16, "f_ffree": 1 << 15, "f_namemax": 255}  # fmt: skip


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def _serve_control(fs: PowerLossFS, control: str) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(control)
    server.listen(4)
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rw") as stream:
            for line in stream:
                command = json.loads(line)
                name = command.pop("cmd")
                try:
                    if name == "power_cut":
                        result: Any = fs.power_cut(**command)
                    elif name == "fail":
                        fs.fail(**command)
                        result = None
                    elif name == "heal":
                        fs.heal()
                        result = None
                    elif name == "corrupt":
                        fs.corrupt(**command)
                        result = None
                    elif name == "stats":
                        with fs.lock:
                            result = {**fs.stats, "unsynced_bytes": fs.unsynced_bytes()}
                    else:
                        raise ValueError(f"unknown command {name}")
                    stream.write(json.dumps({"ok": result}) + "\n")
                except Exception as exc:
                    stream.write(json.dumps({"error": repr(exc)}) + "\n")
                stream.flush()


def main(argv: list[str]) -> None:
    import mfusepy  # type: ignore[import-untyped]  # the FUSE process only; it ships no types

    mountpoint, control = argv
    fs = PowerLossFS()

    class Operations(mfusepy.Operations):  # type: ignore[misc]  # untyped base
        use_ns = True

        def __getattribute__(self, name: str) -> Any:
            target = getattr(fs, name, None)
            if target is not None and callable(target) and not name.startswith("_"):
                return target
            return super().__getattribute__(name)

    threading.Thread(target=_serve_control, args=(fs, control), daemon=True).start()
    mfusepy.FUSE(
        Operations(),
        mountpoint,
        foreground=True,
        nothreads=True,
        direct_io=True,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
        fsname="kbroker-powerfs",
    )


# ---- the tests' side -------------------------------------------------------------------------------------------


class PowerFS:
    """Mount a PowerLossFS at `mountpoint` (a process of its own) and drive it."""

    def __init__(self, mountpoint: Path, control: Path, log_path: Path) -> None:
        self.mountpoint = mountpoint
        self.control = control
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def unavailable() -> str | None:
        if shutil.which("fusermount3") is None or not os.path.exists("/dev/fuse"):
            return "FUSE is not available (apt package fuse3, /dev/fuse)"
        try:
            import mfusepy  # noqa: F401
        except (ImportError, OSError) as exc:
            return f"mfusepy cannot load libfuse: {exc}"
        return None

    def start(self, timeout: float = 20.0) -> PowerFS:
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.control.unlink(missing_ok=True)
        root = Path(__file__).resolve().parent.parent.parent
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.faults.powerfs", str(self.mountpoint), str(self.control)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=root, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not (os.path.ismount(self.mountpoint) and self.control.exists()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(
                    f"PowerFS did not mount: {self.log_path.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.05)
        return self

    def command(self, cmd: str, **args: Any) -> Any:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(str(self.control))
            with sock.makefile("rw") as stream:
                stream.write(json.dumps({"cmd": cmd, **args}) + "\n")
                stream.flush()
                answer = json.loads(stream.readline())
        if "error" in answer:
            raise RuntimeError(f"PowerFS {cmd}: {answer['error']}")
        return answer["ok"]

    def power_cut(self, *, torn: bool = False, seed: int = 0) -> dict[str, int]:
        result: dict[str, int] = self.command("power_cut", torn=torn, seed=seed)
        return result

    def fail(self, op: str, error: str, path: str = "", count: int = -1) -> None:
        self.command("fail", op=op, error=error, path=path, count=count)

    def heal(self) -> None:
        self.command("heal")

    def corrupt(self, path: str, offset: int, xor: int = 0x01) -> None:
        self.command("corrupt", path=path, offset=offset, xor=xor)

    def stats(self) -> dict[str, int]:
        result: dict[str, int] = self.command("stats")
        return result

    def close(self) -> None:
        """Unmount (lazily if a process still has it open) and stop the FUSE process by its pid."""
        if os.path.ismount(self.mountpoint):
            done = subprocess.run(
                ["fusermount3", "-u", str(self.mountpoint)], capture_output=True, timeout=30
            )
            if done.returncode != 0:
                subprocess.run(["fusermount3", "-uz", str(self.mountpoint)], capture_output=True, timeout=30)
        process = self.process
        if process is not None and process.poll() is None:
            # Unmounted, it would still serve its control socket: stop it rather than wait for it.
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    def __enter__(self) -> PowerFS:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if __name__ == "__main__":
    main(sys.argv[1:])
