"""The vocabulary every part of the broker shares: a topic-partition, and the one error type.

`KafkaError` carries a Kafka error code and a message. Whatever layer raises it (the log, a partition, the metadata
store, the group coordinator), a request handler puts its code and message into the response unchanged. Anything
else that escapes a handler is a bug: the connection logs it and closes.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from protocol.errors import ErrorCode


class TopicPartition(NamedTuple):
    """A tuple, so that hashing and comparing it (every dict lookup of the produce and fetch paths) run in C
    rather than in a dataclass's generated Python methods."""

    topic: str
    partition: int

    def __str__(self) -> str:
        # Kafka's own spelling (and the name of the partition's directory).
        return f"{self.topic}-{self.partition}"


class KafkaError(Exception):
    """A request (or part of one) refused with a Kafka error code.

    Subclasses fix the code (`InvalidReplicationFactor("…")`); the base takes it (`KafkaError(code, "…")`).
    """

    code: ErrorCode
    message: str | None

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(f"{code.name}: {message}" if message else code.name)
        self.code = code
        self.message = message


class CodedError(KafkaError):
    """A KafkaError whose code is the class's: `raise TopicAlreadyExists("Topic 't' already exists.")`."""

    error_code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str | None = None) -> None:
        super().__init__(self.error_code, message)


class ConfigError(CodedError):
    """A broker or topic setting is unknown, malformed or out of range (INVALID_CONFIG in a response; at start-up,
    a one-line message and exit status 2)."""

    error_code = ErrorCode.INVALID_CONFIG

    def __str__(self) -> str:
        return self.message or "invalid configuration"


class StartupError(Exception):
    """The broker cannot start (or go on as this node): a taken port, a data directory another broker holds, a node id
    another live process has registered. The message says why in one line; the command exits with status 1."""
