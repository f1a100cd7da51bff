"""Connection limits: `max.connections` (per listener and broker-wide), `max.connections.per.ip` (with
`max.connections.per.ip.overrides`). As in Kafka, a listener at its limit stops accepting until a connection
closes (new clients wait in the kernel's backlog), while an address over its own limit has its new connection
closed at once.
"""

from __future__ import annotations

from collections.abc import Mapping

import trio


class ConnectionQuotas:
    def __init__(
        self,
        max_connections: int,
        max_per_ip: int,
        per_ip_overrides: Mapping[str, int],
        per_listener: Mapping[str, int],
    ) -> None:
        self._max = max_connections
        self._max_per_ip = max_per_ip
        self._overrides = dict(per_ip_overrides)
        self._per_listener_max = dict(per_listener)
        self._total = 0
        self._by_ip: dict[str, int] = {}
        self._by_listener: dict[str, int] = {}
        self._freed = trio.Event()

    def _listener_full(self, listener: str) -> bool:
        return self._total >= self._max or self._by_listener.get(listener, 0) >= self._per_listener_max.get(
            listener, 2**31 - 1
        )

    async def wait_for_slot(self, listener: str) -> None:
        """Return once the listener may accept another connection."""
        while self._listener_full(listener):
            await self._freed.wait()

    def try_open(self, listener: str, ip: str) -> bool:
        """Count a new connection; False (not counted) if its address is at its limit."""
        limit = self._overrides.get(ip, self._max_per_ip)
        if self._by_ip.get(ip, 0) >= limit:
            return False
        self._total += 1
        self._by_ip[ip] = self._by_ip.get(ip, 0) + 1
        self._by_listener[listener] = self._by_listener.get(listener, 0) + 1
        return True

    def close(self, listener: str, ip: str) -> None:
        self._total -= 1
        self._by_ip[ip] -= 1
        if not self._by_ip[ip]:
            del self._by_ip[ip]
        self._by_listener[listener] -= 1
        self._freed.set()
        self._freed = trio.Event()

    @property
    def count(self) -> int:
        return self._total
