"""Build the Go programs compat/ drives, once per source, into a cache outside the clone.

    python -m compat.go.build              # both; prints one binary path per program
    python -m compat.go.build franz        # the franz-go harness only (compat/go/franz)
    python -m compat.go.build rpk          # Redpanda's CLI only (compat/go/rpk)

Each program is a Go module here (go.mod and go.sum pin every dependency) built with the machine's `go` into
~/.cache/kbroker/go/<program>-<key>/<program> (KBROKER_GO_CACHE moves the root), where the key hashes the
module's files and the Go version: a second call costs one `go env GOVERSION`, and editing the source builds
again. Modules come from the Go module proxy into Go's own module cache (~/go/pkg/mod), also outside the clone,
and are checked against go.sum. The binary is written beside its final name and renamed into place under a lock,
so an interrupted or concurrent build never leaves half a binary behind.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# program -> (module directory, the package `go build` builds there)
PROGRAMS = {
    "franz": (HERE / "franz", "."),
    "rpk": (HERE / "rpk", "github.com/redpanda-data/redpanda/src/go/rpk/cmd/rpk"),
}
# rpk's first build compiles ~300 packages: about 6 minutes on a busy 2-core machine.
BUILD_TIMEOUT_S = 1800.0


class BuildFailed(RuntimeError):
    """`go` is missing or a build failed; the message says which and carries the tail of go's output."""


def cache_root() -> Path:
    override = os.environ.get("KBROKER_GO_CACHE")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "kbroker" / "go"


def find_go() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildFailed("go is not installed (Go 1.26 or newer; compat/go/*/go.mod say which)")
    return go


def go_version(go: str) -> str:
    result = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise BuildFailed(f"`go env GOVERSION` failed: {result.stderr[-2000:]}")
    return result.stdout.strip()


def source_key(program: str, version: str) -> str:
    module, package = PROGRAMS[program]
    digest = hashlib.sha256(f"{version}\0{package}\0".encode())
    for path in sorted(module.iterdir()):
        if path.is_file() and (path.suffix == ".go" or path.name in ("go.mod", "go.sum")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def binary_path(program: str, go: str | None = None) -> Path:
    """Where `program` built from the current source lives (whether or not it is built yet)."""
    key = source_key(program, go_version(go or find_go()))
    return cache_root() / f"{program}-{key}" / program


def build(program: str, go: str | None = None) -> Path:
    """The binary of `program`, built first unless the cache holds one from the same source and Go."""
    go = go or find_go()
    binary = binary_path(program, go)
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    with (binary.parent / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent build of the same source finishes first
        if binary.exists():
            return binary
        module, package = PROGRAMS[program]
        scratch = binary.with_name(f"{program}.partial")
        # -mod=readonly: go.sum is the list of what may be downloaded; a build never edits it.
        env = {**os.environ, "GOFLAGS": "-mod=readonly -buildvcs=false"}
        try:
            result = subprocess.run(
                [go, "build", "-trimpath", "-o", str(scratch), package],
                cwd=module,
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as error:
            raise BuildFailed(f"go build of {program} took over {BUILD_TIMEOUT_S:.0f} s") from error
        if result.returncode != 0:
            raise BuildFailed(f"go build of {program} failed ({module}):\n{result.stderr[-4000:]}")
        scratch.rename(binary)
    return binary


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "programs", nargs="*", metavar="PROGRAM", help=f"of {', '.join(PROGRAMS)} (default: all)"
    )
    args = parser.parse_args()
    unknown = set(args.programs) - set(PROGRAMS)
    if unknown:
        parser.error(f"unknown programs {sorted(unknown)}; known: {', '.join(PROGRAMS)}")
    try:
        for program in args.programs or list(PROGRAMS):
            print(build(program))
    except BuildFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
