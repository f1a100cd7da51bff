"""compat/clients/ops.py's operations through kcat, one subprocess each: what kcat can express.

- describe: `kcat -L -J -t TOPIC` (metadata as JSON; a topic's error is librdkafka's text, e.g. "Broker: Unknown topic
  or partition"). kcat's metadata request lets the broker auto-create the topic, as any librdkafka producer's does.
- offsets: `kcat -Q -t TOPIC:PARTITION:TS` (offsetsForTimes; -2 is the earliest offset, -1 the latest); kcat prints
  no timestamps.
- produce: `kcat -P -p PARTITION` of one record; kcat prints no delivery report, so a success has no offset.
kcat has no admin API: creating, deleting or configuring topics and anything about groups is unsupported. `config` is
passed as `-X key=value`.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from compat.clients.ops import Op, Ops, Result, unsupported

TIMEOUT_S = 60.0
# kcat prints "% ERROR: ...: <librdkafka's text>" and "% Delivery failed for message: <text>".
ERROR_LINE = re.compile(r"^% (?:ERROR: .*?|Delivery failed for message): (.*)$", re.MULTILINE)
SPECS = {"earliest": "-2", "latest": "-1"}


class KcatError(Exception):
    pass


class KcatOps(Ops):
    name = "kcat"

    def __init__(self, executable: Path) -> None:
        self.executable = str(executable)

    def run(self, bootstrap: str, ops: Sequence[Op], config: Mapping[str, str] | None = None) -> list[Result]:
        options = [arg for key, value in (config or {}).items() for arg in ("-X", f"{key}={value}")]
        results: list[Result] = []
        for op in ops:
            try:
                if op[0] == "describe":
                    results.append(self._describe(bootstrap, options, op[1]))
                elif op[0] == "offsets":
                    results.append(self._offsets(bootstrap, options, op[1], op[2], op[3]))
                elif op[0] == "produce":
                    results.append(self._produce(bootstrap, options, op[1], op[2], op[3]))
                else:
                    results.append(unsupported(op, "kcat has no admin API for this"))
            except KcatError as error:
                results.append({"op": op[0], "error": str(error), "message": str(error)})
        return results

    def _kcat(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [self.executable, *args], input=stdin, capture_output=True, timeout=TIMEOUT_S, check=False
        )

    def _describe(self, bootstrap: str, options: list[str], topic: str) -> Result:
        result = self._kcat("-L", "-J", "-b", bootstrap, *options, "-t", topic)
        if result.returncode != 0:
            raise KcatError(_error_text(result))
        (answer,) = json.loads(result.stdout)["topics"]
        if "error" in answer:
            raise KcatError(answer["error"])
        partitions = sorted(answer["partitions"], key=lambda p: p["partition"])
        return {
            "op": "describe",
            "partitions": [p["partition"] for p in partitions],
            "replicas": [len(p["replicas"]) for p in partitions],
        }

    def _offsets(self, bootstrap: str, options: list[str], topic: str, partition: str, spec: str) -> Result:
        if spec == "max":
            return unsupported(("offsets",), "kcat -Q has no max-timestamp query")
        result = self._kcat(
            "-Q", "-b", bootstrap, *options, "-t", f"{topic}:{partition}:{SPECS.get(spec, spec)}"
        )
        text = result.stdout.decode(errors="replace")
        # "<topic> [<partition>] offset <offset>", with ": <error>" after it when the query failed
        found = re.search(r"\[(\d+)\]\s+offset\s+(-?\d+)(?::\s*(.*))?", text)
        if result.returncode != 0 or found is None:
            raise KcatError(_error_text(result))
        if found.group(3):
            raise KcatError(found.group(3).strip())
        return {"op": "offsets", "offset": int(found.group(2))}

    def _produce(self, bootstrap: str, options: list[str], topic: str, partition: str, size: str) -> Result:
        args = ["-P", "-b", bootstrap, *options, "-t", topic]
        if int(partition) >= 0:
            args += ["-p", partition]
        result = self._kcat(*args, stdin=b"x" * int(size))
        if result.returncode != 0 or ERROR_LINE.search(result.stderr.decode(errors="replace")):
            raise KcatError(_error_text(result))
        return {"op": "produce"}


def _error_text(result: subprocess.CompletedProcess[bytes]) -> str:
    """The last error kcat printed (librdkafka's text), or its whole stderr."""
    stderr = result.stderr.decode(errors="replace")
    found = ERROR_LINE.findall(stderr)
    return found[-1].strip() if found else f"exit {result.returncode}: {stderr.strip()[-500:]}"
