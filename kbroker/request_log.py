"""Request logging with sampling (Kafka's `kafka.request.logger`, which logs every request at DEBUG).

One line per sampled request on the logger `kbroker.request`: the API and version, who asked (client id, address,
connection), the response's size and how long the broker took. Every `sample_every`-th request is logged (1: all of
them, 0: none), counted per broker, so a busy broker can keep a steady trickle of examples without drowning its log.
Request and response bodies are never logged: they carry records and, with authentication, credentials.
"""

from __future__ import annotations

import logging

log = logging.getLogger("kbroker.request")


class RequestLog:
    __slots__ = ("sample_every", "seen")

    def __init__(self, sample_every: int = 0) -> None:
        if sample_every < 0:
            raise ValueError("sample_every must be 0 (off) or more")
        self.sample_every = sample_every
        self.seen = 0

    def sampled(self) -> bool:
        """Whether this request is one to log (call once per request)."""
        if not self.sample_every:
            return False
        self.seen += 1
        return self.seen % self.sample_every == 0

    @staticmethod
    def write(
        api: str,
        version: int,
        correlation_id: int,
        client_id: str | None,
        peer: str,
        connection_id: int,
        response_bytes: int,
        seconds: float,
    ) -> None:
        log.info(
            "request %s v%d correlation %d from client %r at %s (connection %d): %d response bytes in %.3f ms",
            api,
            version,
            correlation_id,
            client_id,
            peer,
            connection_id,
            response_bytes,
            seconds * 1000,
            extra={
                "api": api,
                "api_version": version,
                "correlation_id": correlation_id,
                "client_id": client_id,
                "peer": peer,
                "connection_id": connection_id,
                "response_bytes": response_bytes,
                "latency_ms": round(seconds * 1000, 3),
            },
        )
