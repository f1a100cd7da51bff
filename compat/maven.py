"""Jars from Maven Central, resolved by mvn once into a cache outside the clone.

compat/kafka/ (Apache Kafka itself) and compat/spark/ (Spark's Kafka connector) each keep a small pom in the clone
and call `resolve`: `mvn dependency:copy-dependencies` on a copy of that pom copies the runtime dependencies into
<home>/libs. A stamp holding a hash of the pom and of the properties and profiles that pick the artifacts marks a
finished copy, so a second call costs one file read and editing the pom resolves again. The copy goes to a scratch
directory first and is renamed into place, under a lock, so an interrupted or concurrent run never leaves a
half-filled libs directory behind. Downloads land in ~/.m2 as usual.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# A first resolve downloads ~60 MB (a Kafka release); a slow registry gets ten minutes.
MVN_TIMEOUT_S = 600.0


class InstallFailed(RuntimeError):
    """mvn could not resolve the artifacts; the message carries the tail of its output."""


def kbroker_cache(name: str) -> Path:
    """~/.cache/kbroker/<name> (under $XDG_CACHE_HOME when set): outside the clone, so CI's fresh clones reuse it."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "kbroker" / name


def _key(pom: Path, properties: Mapping[str, str], profiles: Sequence[str]) -> str:
    # The pom, then each property's value and each profile after a NUL (the stamp format compat/kafka/ has always
    # written, so caches made before this module existed stay valid).
    digest = hashlib.sha256(pom.read_bytes())
    digest.update("".join(f"\0{part}" for part in [*properties.values(), *profiles]).encode())
    return digest.hexdigest()


def is_resolved(home: Path, pom: Path, properties: Mapping[str, str], profiles: Sequence[str] = ()) -> bool:
    try:
        stamp = (home / "installed").read_text().strip()
    except FileNotFoundError:
        return False
    return stamp == _key(pom, properties, profiles) and (home / "libs").is_dir()


def resolve(
    home: Path,
    pom: Path,
    properties: Mapping[str, str],
    *,
    profiles: Sequence[str] = (),
    expected_jar: str,
    what: str,
    mvn: str | None = None,
) -> Path:
    """<home>/libs holding the runtime dependencies of `pom` under `properties` (-Dname=value) and `profiles`
    (-P), resolving them with mvn first unless a finished copy is there. `expected_jar` must be among them (a
    resolve that copied something else failed); `what` names the artifacts in messages."""
    if is_resolved(home, pom, properties, profiles):
        return home / "libs"
    mvn = mvn or shutil.which("mvn")
    if mvn is None:
        raise InstallFailed(f"mvn is not installed (apt package maven), needed to resolve {what}")
    home.mkdir(parents=True, exist_ok=True)
    with (home / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent resolve of the same artifacts finishes first
        if not is_resolved(home, pom, properties, profiles):
            _copy_dependencies(mvn, home, pom, properties, profiles, expected_jar, what)
    return home / "libs"


def _copy_dependencies(
    mvn: str,
    home: Path,
    pom: Path,
    properties: Mapping[str, str],
    profiles: Sequence[str],
    expected_jar: str,
    what: str,
) -> None:
    # mvn runs on a copy of the pom in the cache, so nothing it writes lands in the clone.
    copy = home / "pom.xml"
    shutil.copyfile(pom, copy)
    scratch = home / "libs.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    command = [mvn, "-B", "-q", "-f", str(copy)]
    command += [f"-D{name}={value}" for name, value in properties.items()]
    for profile in profiles:
        command += ["-P", profile]
    command += ["dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={scratch}"]
    print(f"resolving {what} with mvn into {home}", file=sys.stderr)
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=MVN_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as error:
        raise InstallFailed(f"mvn took over {MVN_TIMEOUT_S:.0f} s resolving {what}") from error
    if result.returncode != 0 or not (scratch / expected_jar).exists():
        output = (result.stdout + result.stderr)[-4000:]
        raise InstallFailed(f"mvn could not resolve {what} (exit {result.returncode}):\n{output}")
    libs = home / "libs"
    shutil.rmtree(libs, ignore_errors=True)
    scratch.rename(libs)
    (home / "installed").write_text(_key(pom, properties, profiles) + "\n")
