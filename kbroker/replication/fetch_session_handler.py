"""The fetching side of a fetch session (KIP-227; Kafka's client FetchSessionHandler), for our own followers
(kbroker/replication/fetcher.py); the broker side is kbroker/replication/fetch_session.py."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from typing import Generic, TypeVar

from protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
"""A full fetch asking for a new session."""
FINAL_EPOCH = -1
"""A full fetch closing its session (if any) and asking for none: sessionless."""
INT32_MAX = 2**31 - 1

K = TypeVar("K", bound=Hashable)


def next_epoch(epoch: int) -> int:
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class FetchSessionHandler(Generic[K]):
    """What a fetcher (kbroker/replication/fetcher.py) puts in each Fetch to one leader: the first is full and asks
    for a session; once the leader gave one, each next request lists only the partitions whose fields changed since
    the last one sent, and forgets those no longer wanted. A session error, or an answer that did not arrive, makes
    the next request full again.

    Kafka's handler compares every partition's fields at every request. Here the caller says which partitions may
    have changed since its last request (`build`'s `changed`), so a request of a session costs what changed, not
    the session's size: a follower of thousands of idle partitions sends its long polls for nothing per partition.
    """

    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._sent: dict[K, object] = {}
        """The fields last sent for each partition of the session, as the leader has them."""
        self._full: dict[K, object] | None = None
        """A full request in flight: every partition it lists, with its fields."""
        self._listed: list[tuple[K, object]] = []
        self._forgotten: list[K] = []

    def build(self, wanted: Mapping[K, object], changed: Collection[K]) -> tuple[list[K], list[K]]:
        """(partitions to list, partitions to forget) of the next request. `wanted` holds every partition to fetch
        now with its request fields (compared by ==); `changed` must name every partition whose entry in `wanted`
        (its fields, or whether it is there at all) may differ from what the previous request left the session
        with. A full request lists all of `wanted`."""
        if self.epoch == INITIAL_EPOCH:
            self._full = dict(wanted)
            return list(self._full), []
        self._full = None
        self._listed = []
        self._forgotten = []
        sent = self._sent
        for key in changed:
            fields = wanted.get(key)
            if fields is None:
                if key in sent:
                    self._forgotten.append(key)
            elif sent.get(key) != fields:
                self._listed.append((key, fields))
        return [key for key, _ in self._listed], list(self._forgotten)

    def handle_response(self, error: int, session_id: int) -> None:
        if error != ErrorCode.NONE:
            # Kafka's handler: an unknown session starts afresh; any other error closes it with a full fetch.
            if error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id = INVALID_SESSION_ID
            self.epoch = INITIAL_EPOCH
            return
        if self.epoch == INITIAL_EPOCH:
            self.session_id = session_id
            if session_id == INVALID_SESSION_ID:
                return  # the leader keeps no session for us: every request stays full
        self.epoch = next_epoch(self.epoch)
        if self._full is not None:
            self._sent, self._full = self._full, None
            return
        for key, fields in self._listed:
            self._sent[key] = fields
        for key in self._forgotten:
            self._sent.pop(key, None)

    def reset(self) -> None:
        """The request failed without an answer: the next one is full (and closes the session, if any)."""
        self.epoch = INITIAL_EPOCH
