"""Build a thin kafka-clients 3.9 jar for the Java compatibility harness.

Maven Central is out of reach, but PyPI's atoti-server-kafka wheel carries a fat jar that holds the official
kafka-clients 3.9 classes next to unrelated libraries. We keep only `org/apache/kafka/**` and `kafka/**` (the
version file): the other libraries in that jar would clash with the slf4j/snappy/zstd/lz4 jars we take from Debian.

Usage: python scripts/build_kafka_clients_jar.py CACHE_DIR   (prints the jar's path; does nothing if it exists)
"""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

# Pinned: this release bundles kafka-clients 3.9.2, the line Spark 4.0 ships (3.9.x).
ATOTI_WHEEL = "atoti-server-kafka==0.9.16"
KAFKA_VERSION = "3.9.2"
FAT_JAR_IN_WHEEL = "_atoti_server_kafka/__resources__/plugin.jar"
KEPT_PREFIXES = ("org/apache/kafka/", "kafka/")


def build(cache_dir: Path) -> Path:
    jar = cache_dir / f"kafka-clients-{KAFKA_VERSION}.jar"
    if jar.exists():
        return jar
    download_dir = cache_dir / "download"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
            str(download_dir),
            ATOTI_WHEEL,
        ],
        check=True,
    )
    (wheel,) = download_dir.glob("atoti_server_kafka-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        fat_jar = zipfile.ZipFile(io.BytesIO(whl.read(FAT_JAR_IN_WHEEL)))
    version_file = fat_jar.read("kafka/kafka-version.properties").decode()
    if f"version={KAFKA_VERSION}" not in version_file:
        raise SystemExit(f"{wheel.name} does not hold kafka-clients {KAFKA_VERSION}:\n{version_file}")

    # Write next to the target and rename, so an interrupted build never leaves a half jar behind.
    partial = jar.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as thin:
        thin.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for entry in fat_jar.infolist():
            if entry.filename.startswith(KEPT_PREFIXES):
                thin.writestr(entry, fat_jar.read(entry))
    partial.rename(jar)
    return jar


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    print(build(target))
