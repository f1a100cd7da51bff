"""kcat (librdkafka 2.0.2 on Debian bookworm), as a subprocess.

What kcat can express decides the records: `-P -K` gives one key per line (never null), `-H` adds the same
headers to every record, timestamps come from the producer's clock and partitions from the key hash
(librdkafka's consistent_random). It has no admin API, so topics are created with confluent-kafka's AdminClient.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from compat.clients import CONSUME_TIMEOUT_S, Client, confluent
from compat.records import Ack, Consumed, Record

KEY_DELIMITER = "|"
# kcat -H attaches these to every record it produces.
HEADERS = (("origin", b"kcat"), ("empty", b""))
# partition, offset, timestamp, key length (-1: null), key, value length (-1: null), value, headers (n=v CSV)
CONSUME_FORMAT = r"%p\t%o\t%T\t%K\t%k\t%S\t%s\t%h\n"


class Kcat(Client):
    name = "kcat"

    def __init__(self, executable: Path) -> None:
        self.executable = str(executable)

    def record_options(self) -> dict[str, bool]:
        return {
            "headers": False,
            "null_keys": False,
            "null_values": False,
            "timestamps": False,
            "explicit_partitions": False,
        }

    def prepare(self, records: Sequence[Record]) -> list[Record]:
        """The records as kcat will send them: with its fixed headers."""
        return [dataclasses.replace(record, headers=HEADERS) for record in records]

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        confluent.create_topic(bootstrap, topic, partitions)

    def produce(
        self,
        bootstrap: str,
        topic: str,
        records: Sequence[Record],
        codec: str,
        config: Mapping[str, str] | None = None,
    ) -> list[Ack] | None:
        """`config`: librdkafka settings, as -X key=value."""
        lines = []
        for record in records:
            # What make_records gives with record_options(): no nulls, no newline or delimiter in the text.
            assert record.key is not None
            assert record.value is not None
            assert b"\n" not in record.value
            assert KEY_DELIMITER.encode() not in record.key + record.value
            lines.append(record.key + KEY_DELIMITER.encode() + record.value + b"\n")
        header_args = [arg for name, value in HEADERS for arg in ("-H", f"{name}={value.decode()}")]
        settings = [arg for key, value in (config or {}).items() for arg in ("-X", f"{key}={value}")]
        result = subprocess.run(
            [
                self.executable,
                "-P",
                "-b",
                bootstrap,
                "-t",
                topic,
                "-K",
                KEY_DELIMITER,
                "-z",
                codec,
                *header_args,
                *settings,
            ],
            input=b"".join(lines),
            capture_output=True,
            timeout=CONSUME_TIMEOUT_S,
        )
        if result.returncode != 0:
            stderr = result.stderr.decode(errors="replace")
            raise AssertionError(f"kcat -P exited {result.returncode}:\n{stderr[-3000:]}")
        return None  # kcat prints no delivery reports

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        # -e: stop once every partition reached its end; -o beginning: each partition from its first offset.
        result = subprocess.run(
            [
                self.executable,
                "-C",
                "-b",
                bootstrap,
                "-t",
                topic,
                "-o",
                "beginning",
                "-e",
                "-q",
                "-f",
                CONSUME_FORMAT,
            ],
            check=True,
            capture_output=True,
            timeout=CONSUME_TIMEOUT_S,
        )
        return [parse_consumed(line) for line in result.stdout.split(b"\n") if line]

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        # Query mode with timestamp -1 is ListOffsets(latest) for each partition.
        queries = [arg for p in range(partitions) for arg in ("-t", f"{topic}:{p}:-1")]
        result = subprocess.run(
            [self.executable, "-Q", "-b", bootstrap, *queries],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        # One line per partition: "<topic> [<partition>] offset <offset>"
        found = re.findall(r"\[(\d+)\]\s+offset\s+(-?\d+)", result.stdout)
        return {int(partition): int(offset) for partition, offset in found}


def parse_consumed(line: bytes) -> Consumed:
    partition, offset, timestamp, key_length, key, value_length, value, headers = line.split(b"\t")
    return Consumed(
        partition=int(partition),
        offset=int(offset),
        timestamp=int(timestamp),
        key=None if int(key_length) < 0 else key,
        value=None if int(value_length) < 0 else value,
        headers=tuple(
            (name.decode(), data) for name, _, data in (h.partition(b"=") for h in headers.split(b",") if h)
        ),
    )


def clock_range(started: float) -> tuple[int, int]:
    """The window of producer timestamps (ms) for records sent since `started` (time.time())."""
    return int(started * 1000) - 1, int(time.time() * 1000) + 1
