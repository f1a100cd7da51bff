"""A second broker of the target's own kind, for the scenarios the shared one cannot serve.

The `sibling` fixture (compat/conftest.py) starts, next to each target the suite started, one more broker of the
same kind (a kbroker, or the same Apache Kafka release) with
- `auto.create.topics.enable=false`, so a topic that does not exist stays so whatever the client asks (the shared
  targets keep Kafka's default, true, which other scenarios rely on);
- its advertised listener on a FaultProxy (compat/proxy.py), so every client connection goes through the proxy and a
  scenario can spoil a chosen Produce response (idempotence under retries).

An Apache Kafka sibling is started on a thread while its target starts, when a selected scenario will ask for it: the
two JVMs come up side by side instead of one after the other.
"""

from __future__ import annotations

import tempfile
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
    """The target is a broker this suite did not start (--bootstrap, a container, a cluster): there is no second
    one."""


class SiblingBroker:
    """The sibling of the target named `target_name`: a kbroker, or Apache Kafka `kafka_version`, in a new temporary
    directory, behind a FaultProxy already listening. `start` (blocking, callable from a thread) and `stop` (by pid;
    again harmless); the directory stays for the caller to remove unless a scenario failed."""

    def __init__(self, target_name: str, kafka_version: str | None) -> None:
        self.target_name = target_name
        self.base_dir = Path(tempfile.mkdtemp(prefix=f"kbroker-compat-sibling-{target_name}-"))
        overrides = dict(SIBLING_OVERRIDES)
        self.process: BrokerProcess
        if kafka_version is not None:
            self.process = KafkaProcess(kafka_version, self.base_dir, overrides=overrides)
        else:
            self.process = BrokerProcess(
                self.base_dir / "data", overrides=overrides, log_path=self.base_dir / "broker.log"
            )
        self.proxy = FaultProxy(self.process.host, self.process.port)
        self.process.overrides["advertised.listeners"] = f"PLAINTEXT://{self.proxy.address}"

    @classmethod
    def of(cls, target: Target) -> SiblingBroker:
        if isinstance(target.process, KafkaProcess):
            return cls(target.name, target.process.version)
        if target.process is not None:
            return cls(target.name, None)
        raise NoSibling(f"target {target.name} was not started by this suite as a single broker")

    def start(self) -> Sibling:
        self.process.start()
        return Sibling(
            Target(f"{self.target_name}-sibling", self.proxy.address, self.process), self.proxy, self.base_dir
        )

    def stop(self) -> None:
        self.process.stop()
        self.proxy.close()
