"""The one exception the storage layer raises for conditions a client must hear about."""

from __future__ import annotations

from protocol.errors import ErrorCode


class LogError(Exception):
    """An append, read or flush refused with a Kafka error code (the handler puts `code` in its response)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
