"""kafka-python 2.0.2, run as a subprocess in its own venv (.venv-kp202): it hard-codes its request versions
(Metadata v1, Produce v7, Fetch v4, ListOffsets v1, CreateTopics v3) instead of negotiating them."""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

from compat.clients import CONSUME_TIMEOUT_S, Client
from compat.records import Ack, Consumed, Record, from_json, to_line

SCRIPT = Path(__file__).with_name("kp202_script.py")


class KafkaPython202(Client):
    name = "kafka-python-2.0.2"

    def __init__(self, python: Path) -> None:
        self.python = str(python)

    def _run(self, *args: str, stdin: str | None = None) -> list[str]:
        result = subprocess.run(
            [self.python, str(SCRIPT), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=CONSUME_TIMEOUT_S + 60,
        )
        if result.returncode != 0:
            raise AssertionError(
                f"kafka-python 2.0.2 {args[1]} failed ({result.returncode}):\n{result.stderr[-4000:]}"
            )
        return result.stdout.splitlines()

    @functools.cache  # noqa: B019 - one adapter per session; the answer never changes
    def _codec_reasons(self) -> dict[str, str | None]:
        reasons: dict[str, str | None] = json.loads(self._run("-", "codecs")[0])
        return reasons

    def unsupported_codec_reason(self, codec: str) -> str | None:
        return self._codec_reasons()[codec]

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        self._run(bootstrap, "create-topic", topic, str(partitions))

    def produce(self, bootstrap: str, topic: str, records: Sequence[Record], codec: str) -> list[Ack]:
        lines = self._run(
            bootstrap, "produce", topic, codec, stdin="".join(to_line(r) + "\n" for r in records)
        )
        acks = [json.loads(line) for line in lines]
        return [Ack(a["index"], a["partition"], a["offset"]) for a in acks]

    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        lines = self._run(bootstrap, "consume", topic, str(partitions), str(count))
        return [from_json(json.loads(line)) for line in lines]

    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        (line,) = self._run(bootstrap, "end-offsets", topic, str(partitions))
        return {int(p): offset for p, offset in json.loads(line).items()}
