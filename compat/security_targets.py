"""Brokers configured for the security scenarios: a kbroker and Apache Kafka (3.9.2, 4.3.1) with the same SASL
listener, users, authorizer and super users, so the same requests can be compared.

Each has a SASL_PLAINTEXT listener with PLAIN users admin, alice and bob (`sasl_bootstrap`), Kafka's
StandardAuthorizer and `super.users=User:admin;User:ANONYMOUS` (ANONYMOUS: Kafka's own broker-to-controller
connections on its PLAINTEXT listeners, which the scenarios do not use).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from compat.kafka.process import KafkaProcess
from tests.broker_process import BrokerProcess, free_port
from tests.security_support import PLAIN_JAAS

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_SETTINGS = {
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "super.users": "User:admin;User:ANONYMOUS",
    "group.initial.rebalance.delay.ms": "0",
}


class AclKbroker(BrokerProcess):
    def __init__(self, base: Path) -> None:
        super().__init__(base / "data", overrides=dict(ACL_SETTINGS), log_path=base / "broker.log")
        self.sasl_port = free_port(self.host)

    def command(self) -> list[str]:
        command = super().command()
        command[command.index("--listeners") + 1] += f",SASL_PLAINTEXT://{self.host}:{self.sasl_port}"
        return command

    @property
    def sasl_bootstrap(self) -> str:
        return f"{self.host}:{self.sasl_port}"


class AclKafka(KafkaProcess):
    def __init__(self, version: str) -> None:
        super().__init__(version, Path(tempfile.mkdtemp(prefix=f"kbroker-acl-kafka-{version}-")))
        self.sasl_port = free_port(self.host)
        h = self.host
        self.overrides = {
            "listeners": f"PLAINTEXT://{h}:{self.port},CONTROLLER://{h}:{self.controller_port},"
            f"SASL_PLAINTEXT://{h}:{self.sasl_port}",
            "advertised.listeners": f"PLAINTEXT://{h}:{self.port},SASL_PLAINTEXT://{h}:{self.sasl_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            **ACL_SETTINGS,
        }

    @property
    def sasl_bootstrap(self) -> str:
        return f"{self.host}:{self.sasl_port}"
