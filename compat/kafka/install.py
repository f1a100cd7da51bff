"""Resolve Apache Kafka's jars from Maven Central, once per release, into a cache outside the clone.

    python -m compat.kafka.install 3.9.2 4.3.1     # prints one libs directory per version

`mvn dependency:copy-dependencies` on compat/kafka/pom.xml copies kafka_2.13, kafka-tools, every dependency and
the logging back end into ~/.cache/kbroker/apache-kafka/<version>/libs (KBROKER_KAFKA_CACHE moves the root). A
stamp holding a hash of the pom and the version marks a finished copy, so a second call costs one file read and
editing the pom resolves again. The copy goes to a scratch directory first and is renamed into place, under a
lock, so an interrupted or concurrent run never leaves a half-filled libs directory behind.
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

from compat.kafka import DEFAULT_VERSIONS, logging_profile

POM = Path(__file__).resolve().parent / "pom.xml"
# A first resolve downloads ~60 MB per release; a slow registry gets ten minutes.
MVN_TIMEOUT_S = 600.0


class InstallFailed(RuntimeError):
    """mvn could not resolve a release; the message carries the tail of its output."""


def cache_root() -> Path:
    override = os.environ.get("KBROKER_KAFKA_CACHE")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "kbroker" / "apache-kafka"


def libs_dir(version: str) -> Path:
    return cache_root() / version / "libs"


def _install_key(version: str) -> str:
    digest = hashlib.sha256(POM.read_bytes())
    digest.update(f"\0{version}\0{logging_profile(version)}".encode())
    return digest.hexdigest()


def is_installed(version: str) -> bool:
    stamp = cache_root() / version / "installed"
    try:
        return stamp.read_text().strip() == _install_key(version) and libs_dir(version).is_dir()
    except FileNotFoundError:
        return False


def install(version: str, *, mvn: str | None = None) -> Path:
    """The libs directory of `version`, resolving it with mvn first unless a finished copy is cached."""
    if is_installed(version):
        return libs_dir(version)
    mvn = mvn or shutil.which("mvn")
    if mvn is None:
        raise InstallFailed("mvn is not installed (apt package maven)")
    home = cache_root() / version
    home.mkdir(parents=True, exist_ok=True)
    with (home / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent resolve of the same release finishes first
        if is_installed(version):
            return libs_dir(version)
        _resolve(mvn, version, home)
    return libs_dir(version)


def _resolve(mvn: str, version: str, home: Path) -> None:
    # mvn runs on a copy of the pom in the cache, so nothing it writes lands in the clone.
    pom = home / "pom.xml"
    shutil.copyfile(POM, pom)
    scratch = home / "libs.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    command = [
        mvn, "-B", "-q", "-f", str(pom),
        f"-Dkafka.version={version}", "-P", logging_profile(version),
        "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={scratch}",
    ]  # fmt: skip
    print(f"resolving Apache Kafka {version} with mvn into {home}", file=sys.stderr)
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=MVN_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as error:
        raise InstallFailed(f"mvn took over {MVN_TIMEOUT_S:.0f} s resolving Kafka {version}") from error
    server_jar = scratch / f"kafka_2.13-{version}.jar"
    if result.returncode != 0 or not server_jar.exists():
        output = (result.stdout + result.stderr)[-4000:]
        raise InstallFailed(
            f"mvn could not resolve Apache Kafka {version} (exit {result.returncode}):\n{output}"
        )
    shutil.rmtree(libs_dir(version), ignore_errors=True)
    scratch.rename(libs_dir(version))
    (home / "installed").write_text(_install_key(version) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS), help="e.g. 3.9.2 4.3.1")
    args = parser.parse_args(argv)
    for version in args.versions:
        try:
            print(install(version))
        except InstallFailed as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
