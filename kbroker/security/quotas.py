"""Client quotas (KIP-13, KIP-55, KIP-124, KIP-219): produce and fetch byte rates and request time, per user and
client id, with Kafka's precedence; what a client over its quota is told (`throttle_time_ms`) and for how long its
connection is muted.

A client's quota of one kind is the first of these entities that sets it (None: the type's default entity):

    user=U,client-id=C  user=U,client-id=None  user=U  user=None,client-id=C  user=None,client-id=None
    user=None  client-id=C  client-id=None

and its usage is measured where that entity says (a quota set for `user=U` alone is shared by all of U's clients;
one set for the default user is each user's own). Usage is a rate over `quota.window.num` samples of
`quota.window.size.seconds`; a request that takes it over the bound gets the time the client must stay quiet for
the rate to fall back to the bound, `(rate - bound) / bound * window`, at most the whole window long (as Kafka).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kbroker.metadata.image import MetadataImage
from kbroker.security.image import QuotaEntity

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"
CLIENT_QUOTA_KEYS = frozenset(
    {PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE}
)
IP_QUOTA_KEYS = frozenset({CONNECTION_CREATION_RATE})
ENTITY_TYPES = frozenset({USER, CLIENT_ID, IP})


def _precedence(user: str, client_id: str) -> list[tuple[QuotaEntity, tuple[str, str]]]:
    """(entity, where usage is counted) in Kafka's order."""
    return [
        (((CLIENT_ID, client_id), (USER, user)), (user, client_id)),
        (((CLIENT_ID, None), (USER, user)), (user, client_id)),
        (((USER, user),), (user, "")),
        (((CLIENT_ID, client_id), (USER, None)), (user, client_id)),
        (((CLIENT_ID, None), (USER, None)), (user, client_id)),
        (((USER, None),), (user, "")),
        (((CLIENT_ID, client_id),), ("", client_id)),
        (((CLIENT_ID, None),), ("", client_id)),
    ]


@dataclass
class Rate:
    """A rate per second over `samples` windows of `window_ms` (Kafka's SampledStat + Rate)."""

    samples: int
    window_ms: int
    _windows: list[list[float]] = field(default_factory=list)  # [start_ms, total]

    def record(self, value: float, now_ms: int) -> None:
        self._purge(now_ms)
        if not self._windows or now_ms >= self._windows[-1][0] + self.window_ms:
            self._windows.append([float(now_ms), 0.0])
        self._windows[-1][1] += value

    def unrecord(self, value: float) -> None:
        if self._windows:
            self._windows[-1][1] -= value

    def _purge(self, now_ms: int) -> None:
        horizon = now_ms - self.samples * self.window_ms
        self._windows = [w for w in self._windows if w[0] + self.window_ms > horizon]

    def window_size_ms(self, now_ms: int) -> float:
        self._purge(now_ms)
        oldest = self._windows[0][0] if self._windows else float(now_ms)
        elapsed = now_ms - oldest
        full = int(elapsed // self.window_ms)
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return max(elapsed, 1.0)

    def per_second(self, now_ms: int) -> float:
        total = sum(w[1] for w in self._windows)
        return total * 1000.0 / self.window_size_ms(now_ms)


class ClientQuotas:
    """Every client quota of the current metadata image, and the usage of each measured entity."""

    def __init__(self, window_num: int, window_size_seconds: int) -> None:
        self._samples = window_num
        self._window_ms = window_size_seconds * 1000
        self._configs: Mapping[QuotaEntity, Mapping[str, float]] = {}
        self._rates: dict[tuple[str, str, str], Rate] = {}

    def on_metadata(self, image: MetadataImage) -> None:
        quotas = image.security.client_quotas
        if quotas is not self._configs:
            self._configs = quotas
            self._rates.clear()

    @property
    def any(self) -> bool:
        return bool(self._configs)

    def quota(self, user: str, client_id: str, key: str) -> tuple[float, tuple[str, str]] | None:
        """(bound, where it is measured) of the client's quota of kind `key`, if any applies."""
        for entity, measured in _precedence(user, client_id):
            values = self._configs.get(entity)
            if values is not None and key in values:
                return values[key], measured
        return None

    def record(self, user: str, client_id: str, key: str, value: float, now_ms: int) -> int:
        """Count `value` towards the client's quota of kind `key`; the throttle time (ms) it has earned, 0 if
        within its quota (or none applies)."""
        found = self.quota(user, client_id, key)
        if found is None:
            return 0
        bound, (u, c) = found
        rate = self._rates.get((key, u, c))
        if rate is None:
            rate = self._rates[(key, u, c)] = Rate(self._samples, self._window_ms)
        rate.record(value, now_ms)
        observed = rate.per_second(now_ms)
        if bound <= 0 or observed <= bound:
            return 0
        throttle = (observed - bound) / bound * rate.window_size_ms(now_ms)
        return int(min(throttle, self._window_ms * self._samples))

    def unrecord(self, user: str, client_id: str, key: str, value: float) -> None:
        """Take back a recorded value (a fetch answered empty because it was throttled, as Kafka does)."""
        found = self.quota(user, client_id, key)
        if found is not None:
            rate = self._rates.get((key, *found[1]))
            if rate is not None:
                rate.unrecord(value)
