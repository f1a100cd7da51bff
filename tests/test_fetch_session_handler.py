"""The follower's side of a fetch session (kbroker/replication/fetch_session_handler.py): what each request lists and
forgets when the fetcher names only the partitions that may have changed since its last request."""

from __future__ import annotations

import pytest

from kbroker.replication.fetch_session_handler import INITIAL_EPOCH, INVALID_SESSION_ID, FetchSessionHandler
from protocol.errors import ErrorCode

pytestmark = pytest.mark.timeout(10)

SESSION = 7


def started(wanted: dict[str, int]) -> FetchSessionHandler[str]:
    """A handler whose full first request (listing `wanted`) the leader answered with a session."""
    handler: FetchSessionHandler[str] = FetchSessionHandler()
    listed, forgotten = handler.build(wanted, set())
    assert (sorted(listed), forgotten) == (sorted(wanted), [])
    handler.handle_response(ErrorCode.NONE, SESSION)
    assert (handler.session_id, handler.epoch) == (SESSION, 1)
    return handler


def test_the_first_request_lists_everything_whatever_changed() -> None:
    handler: FetchSessionHandler[str] = FetchSessionHandler()
    assert handler.epoch == INITIAL_EPOCH
    listed, forgotten = handler.build({"a": 1, "b": 2}, {"a"})
    assert sorted(listed) == ["a", "b"]
    assert forgotten == []


def test_an_incremental_request_lists_only_changed_fields_and_forgets_removed_partitions() -> None:
    handler = started({"a": 1, "b": 2, "c": 3})
    # "a" changed, "b" was named but its fields are what the leader has, "c" is no longer wanted, "d" is new.
    listed, forgotten = handler.build({"a": 10, "b": 2, "d": 4}, {"a", "b", "c", "d"})
    assert sorted(listed) == ["a", "d"]
    assert forgotten == ["c"]
    handler.handle_response(ErrorCode.NONE, SESSION)
    assert handler.epoch == 2
    # What the leader holds now: a=10, b=2, d=4. Nothing named, nothing sent.
    assert handler.build({"a": 10, "b": 2, "d": 4}, set()) == ([], [])
    # Named again with the fields the leader has: still nothing to send.
    assert handler.build({"a": 10, "b": 2, "d": 4}, {"a", "d"}) == ([], [])


def test_a_partition_not_named_is_taken_as_unchanged() -> None:
    """The caller's promise: a partition it does not name has the fields the session holds."""
    handler = started({"a": 1, "b": 2})
    assert handler.build({"a": 1, "b": 99}, {"a"}) == ([], [])


def test_forgetting_a_partition_the_leader_never_had_sends_nothing() -> None:
    handler = started({"a": 1})
    assert handler.build({"a": 1}, {"x"}) == ([], [])


def test_a_lost_answer_or_a_session_error_makes_the_next_request_full() -> None:
    handler = started({"a": 1, "b": 2})
    handler.build({"a": 5, "b": 2}, {"a"})
    handler.reset()  # the request got no answer
    listed, forgotten = handler.build({"a": 5, "b": 2}, set())
    assert (sorted(listed), forgotten) == (["a", "b"], [])
    handler.handle_response(ErrorCode.NONE, SESSION + 1)
    assert (handler.session_id, handler.epoch) == (SESSION + 1, 1)

    handler.build({"a": 6, "b": 2}, {"a"})
    handler.handle_response(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, INVALID_SESSION_ID)
    assert (handler.session_id, handler.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    listed, _ = handler.build({"a": 6, "b": 2}, set())
    assert sorted(listed) == ["a", "b"]


def test_changes_of_a_request_that_failed_are_sent_by_the_next_full_one() -> None:
    """An incremental request whose answer never came: the leader may or may not have applied it, so the next
    request is full and carries every partition's current fields."""
    handler = started({"a": 1, "b": 2})
    handler.build({"a": 3}, {"a", "b"})  # a changed, b forgotten
    handler.reset()
    listed, forgotten = handler.build({"a": 3}, set())
    assert (listed, forgotten) == (["a"], [])
    handler.handle_response(ErrorCode.NONE, SESSION)
    assert handler.build({"a": 3}, {"a", "b"}) == ([], [])


def test_without_a_session_every_request_is_full() -> None:
    handler: FetchSessionHandler[str] = FetchSessionHandler()
    handler.build({"a": 1}, set())
    handler.handle_response(ErrorCode.NONE, INVALID_SESSION_ID)  # the leader keeps no session (slots = 0)
    listed, _ = handler.build({"a": 1, "b": 2}, set())
    assert sorted(listed) == ["a", "b"]
