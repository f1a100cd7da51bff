"""The fetching side of a fetch session (KIP-227; Kafka's client FetchSessionHandler), for our own followers
(kbroker/replication/fetcher.py); the broker side is kbroker/replication/fetch_session.py."""

from __future__ import annotations

from protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
"""A full fetch asking for a new session."""
FINAL_EPOCH = -1
"""A full fetch closing its session (if any) and asking for none: sessionless."""
INT32_MAX = 2**31 - 1


def next_epoch(epoch: int) -> int:
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class FetchSessionHandler:
    """What a fetcher (kbroker/replication/fetcher.py) puts in each Fetch to one leader: the first is full and asks
    for a session; once the leader gave one, each next request lists only the partitions whose fields changed since
    the last one sent, and forgets those no longer wanted. A session error, or an answer that did not arrive, makes
    the next request full again."""

    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._sent: dict[tuple[str, int], object] = {}
        """The fields last sent for each partition of the session, as the leader has them."""
        self._pending: dict[tuple[str, int], object] = {}

    def build(
        self, wanted: dict[tuple[str, int], object]
    ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """(partitions to list, partitions to forget) of the next request, `wanted` being every partition to fetch
        (topic, partition) -> its request fields (compared by ==)."""
        self._pending = wanted
        if self.epoch == INITIAL_EPOCH:
            return list(wanted), []
        listed = [key for key, fields in wanted.items() if self._sent.get(key) != fields]
        return listed, [key for key in self._sent if key not in wanted]

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
        self._sent = self._pending

    def reset(self) -> None:
        """The request failed without an answer: the next one is full (and closes the session, if any)."""
        self.epoch = INITIAL_EPOCH
