"""A second broker of the target's own kind, for the scenarios the shared one cannot serve.

The `sibling` fixture (compat/conftest.py) starts, next to each target the suite started, one more broker of the
same kind (a kbroker, or the same Apache Kafka release) with
- `auto.create.topics.enable=false`, so a topic that does not exist stays so whatever the client asks (the shared
  targets keep Kafka's default, true, which other scenarios rely on);
- its advertised listener on a FaultProxy (compat/proxy.py), so every client connection goes through the proxy and a
  scenario can cut one at a chosen Produce (idempotence under retries).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from compat.kafka.process import KafkaProcess
from compat.proxy import FaultProxy
from compat.target import Target
from tests.broker_process import BrokerProcess

SIBLING_OVERRIDES = {
    "auto.create.topics.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
}


@dataclass(frozen=True)
class Sibling:
    """`target.bootstrap` is the proxy's address; `proxy` arms its faults; `base_dir` holds config, data and log."""

    target: Target
    proxy: FaultProxy
    base_dir: Path


class NoSibling(Exception):
    """The target is a broker this suite did not start (--bootstrap, a container): there is no second one."""


def sibling_process(target: Target) -> BrokerProcess:
    """A broker of `target`'s kind with SIBLING_OVERRIDES, not started yet, in a new temporary directory."""
    base = Path(tempfile.mkdtemp(prefix=f"kbroker-compat-sibling-{target.name}-"))
    if isinstance(target.process, KafkaProcess):
        return KafkaProcess(target.process.version, base, overrides=dict(SIBLING_OVERRIDES))
    if target.process is not None:
        return BrokerProcess(base / "data", overrides=dict(SIBLING_OVERRIDES), log_path=base / "broker.log")
    raise NoSibling(f"target {target.name} was not started by this suite")


@contextmanager
def running(target: Target, process: BrokerProcess) -> Iterator[Sibling]:
    """Start the sibling behind its proxy; stop both (by pid) on exit. Its directory stays: the caller removes it
    unless a scenario failed."""
    with FaultProxy(process.host, process.port) as proxy:
        process.overrides["advertised.listeners"] = f"PLAINTEXT://{proxy.address}"
        try:
            process.start()
            yield Sibling(
                Target(f"{target.name}-sibling", proxy.address, process), proxy, process.log_path.parent
            )
        finally:
            process.stop()
