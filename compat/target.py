"""The broker a compat scenario runs against."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from tests.broker_process import BrokerProcess


@dataclass(frozen=True)
class Target:
    """A broker under test: its name in test ids and where clients connect. `process` is set for a broker the
    suite started, a kbroker or an Apache Kafka (a KafkaProcess); None for an external broker or a container."""

    name: str
    bootstrap: str
    process: BrokerProcess | None = None

    def topic(self, prefix: str) -> str:
        """A topic name no earlier scenario used, so a long-lived broker can serve many runs."""
        return f"{prefix}-{uuid.uuid4().hex[:12]}"
