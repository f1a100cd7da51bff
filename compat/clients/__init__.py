"""One adapter per stock client, all with the same small interface, so a scenario is written once.

Each adapter drives its client the way a user of that client would: the client's own admin API where it has
one, its own producer (default settings unless a scenario needs otherwise) and its own consumer with
assign + seek to beginning.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from compat.records import Ack, Consumed, Record

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

# How long a client may take to read back what a scenario wrote before the scenario gives up.
CONSUME_TIMEOUT_S = 120.0


class Client(ABC):
    name: str

    def unsupported_codec_reason(self, codec: str) -> str | None:
        """Why this client cannot send `codec` here, or None when it can."""
        return None

    def record_options(self) -> dict[str, bool]:
        """Flags for make_records: the features this client can express per record."""
        return {}

    def prepare(self, records: Sequence[Record]) -> list[Record]:
        """The records as this client will actually send them (kcat adds fixed headers to each)."""
        return list(records)

    @abstractmethod
    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None: ...

    @abstractmethod
    def produce(self, bootstrap: str, topic: str, records: Sequence[Record], codec: str) -> list[Ack] | None:
        """Send every record and wait for every delivery report; returns them where the client reports offsets."""

    @abstractmethod
    def consume(self, bootstrap: str, topic: str, partitions: int, count: int) -> list[Consumed]:
        """Assign every partition, seek to the beginning, read until `count` records arrived (or time out)."""

    @abstractmethod
    def end_offsets(self, bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
        """The latest offset (high watermark) of each partition, as this client asks for it."""
