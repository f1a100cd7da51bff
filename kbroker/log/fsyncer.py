"""fsync without a thread hand-over: Linux's asynchronous I/O, with a thread per call as the fallback.

Every acks=-1 produce waits for an fsync, and so does every replication round of a follower. Done in a Python
thread, each fsync costs a hand-over to the thread and back (futex wake-ups and the interpreter lock changing hands
between the thread and the event loop): ~50 µs of CPU per round trip on our 2-vCPU machines, ~120 µs under load,
besides the fsync itself. Linux (4.18 and later) runs an fsync submitted with `io_submit` (IOCB_CMD_FSYNC) in a
kernel worker and reports its end on an eventfd, which trio waits on like a socket: a round of fsyncs is one
system call out and one back, whatever the number of files, and no Python thread is involved. The `caio` package
(the asyncio file library aiofile's engine) provides the io_submit binding; its eventfd is all we use of its
machinery.

The fsync is the same one (`vfs_fsync`, in the kernel worker); what it costs the kernel (the page writeback) is
no longer counted in the broker's own CPU, as the kernel's flusher threads' writeback of acks=1 data never was
(docs/performance.md). Where the AIO context cannot be had (not Linux, no `caio`, io_setup refused) or a file
system refuses AIO fsync (EINVAL at submission), `fsync_all` runs `os.fsync` in a worker thread instead.
An fsync's own failure (EIO, ENOSPC) comes back as that descriptor's error either way.

Two ways in: `await fsync_all(fds)`, and `start(fds, on_done)`, which returns at once and has `run`'s task call
`on_done` when the fsyncs have ended (the group committer's rounds: kbroker/log/flusher.py settles a round there,
with no other trio task to wake).
"""

from __future__ import annotations

import collections
import errno
import functools
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import trio

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT = 256
"""AIO fsyncs submitted at once (the io_setup size); more wait for room."""
_EVENTS_PER_CALL = 512
"""Completions one io_getevents may take (caio's default): fewer back means none was left."""

linux_aio: Any
try:  # pragma: no cover - depends on the platform
    from caio import linux_aio
except ImportError:  # pragma: no cover
    linux_aio = None


class Fsyncer:
    """`await fsync_all(fds)`: fsync every descriptor, side by side; each one's error or None. `run` (a task of
    the broker's) owns the AIO context and hands completions back; without it every call uses a thread."""

    def __init__(self, max_in_flight: int = MAX_IN_FLIGHT, *, use_aio: bool = True) -> None:
        self._max_in_flight = max_in_flight
        self._use_aio = use_aio and linux_aio is not None
        self._context: Any = None
        self._in_flight = 0
        self._room = trio.Event()
        self._room_wanted = False
        """Whether a call waits on `_room` (only then does a completion replace it: one Event per fsync costs)."""
        self._nursery: trio.Nursery | None = None
        """While AIO completions are delivered: `start` is possible."""
        self._finished_rounds: collections.deque[Callable[[], None]] = collections.deque()
        """`start`'s callbacks whose fsyncs have all ended, to call."""
        self.aio = False
        """Whether fsyncs currently go through AIO (for metrics and tests)."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Open the AIO context and deliver its completions until cancelled (then wait for those in flight: their
        descriptors belong to the callers until then)."""
        if self._use_aio:
            try:
                self._context = linux_aio.Context(self._max_in_flight)
                self.aio = True
            except (OSError, ValueError, SystemError) as exc:
                logger.info("no asynchronous fsync (%s): fsyncs run in worker threads", exc)
        task_status.started()
        if self._context is None:
            await trio.sleep_forever()
        try:
            async with trio.open_nursery() as nursery:  # (for `start`'s thread fallback)
                self._nursery = nursery
                try:
                    while True:
                        await self._deliver()
                finally:
                    self._nursery = None  # `start` declines from now on
                    with trio.CancelScope(shield=True):
                        while self._in_flight:
                            await self._deliver()
                    # With no await since the last look at `_in_flight` (the nursery's exit below is one): an
                    # fsync_all submitted after it would wait for a completion no task delivers any more.
                    self.aio = False
        finally:
            self.aio = False
            self._room.set()  # a call waiting for room goes to threads now

    async def _deliver(self) -> None:
        await trio.lowlevel.wait_readable(self._context.fileno)
        try:
            self._context.poll()  # reset the eventfd's count
        except BlockingIOError:
            pass
        while self._process_events() == _EVENTS_PER_CALL:
            pass  # (fewer: the queue was empty; what ends after that signals the eventfd again)
        while self._finished_rounds:
            self._finished_rounds.popleft()()

    def _process_events(self) -> int:
        """Run each finished operation's callback; how many there were. io_getevents answers EINTR when a signal
        arrived while it found nothing, even without waiting (a SIGTERM, a debugger attaching): nothing was taken
        from the queue then, so it is asked again (the signal's handler has run by the time it returns)."""
        while True:
            try:
                return int(self._context.process_events(max_requests=_EVENTS_PER_CALL))
            except SystemError as exc:  # caio's error for a failed io_getevents: (errno, message)
                if not exc.args or exc.args[0] != errno.EINTR:
                    raise

    def start(self, fds: Sequence[int], on_done: Callable[[list[OSError | None]], None]) -> bool:
        """Submit an AIO fsync of each of `fds` now and return at once; `on_done(errors)` (each descriptor's error
        or None) is called from `run`'s task once the last has ended. False, with nothing submitted, when that
        cannot be had at once (no AIO, no room for them all, io_submit refusing the first): `fsync_all` then.

        This is the group committer's path: it settles a round in `on_done` itself and begins the next one there,
        with no trio task to wake in between. What io_submit leaves of a batch after queueing part of it is
        fsynced in a worker thread by a task of `run`'s, and `on_done` waits for that too."""
        if not fds or self._nursery is None or self._in_flight + len(fds) > self._max_in_flight:
            return False
        errors: list[OSError | None] = [None] * len(fds)
        pending = len(fds)

        def settle(index: int, error: OSError | None) -> list[OSError | None] | None:
            nonlocal pending
            errors[index] = error
            pending -= 1
            return errors if not pending else None

        def finished(index: int, result: int) -> None:
            # Called by caio inside `process_events`, which would swallow an exception (it reports it as
            # unraisable and goes on): `on_done` runs after it, from `_deliver`.
            self._released()
            if settle(index, _result_error(result)) is not None:
                self._finished_rounds.append(functools.partial(on_done, errors))

        operations = []
        for index, fd in enumerate(fds):
            operation = linux_aio.Operation.fsync(fd)
            operation.set_callback(functools.partial(finished, index))
            operations.append(operation)
        try:
            accepted = int(self._context.submit(*operations))
        except (OSError, ValueError, OverflowError, SystemError):  # as in _submit_and_wait
            accepted = 0
        if not accepted:
            return False
        self._in_flight += accepted
        if accepted < len(fds):
            rest = list(range(accepted, len(fds)))
            # The caller's descriptors need only last this call (io_submit took its own reference to each file
            # it accepted): the thread fsyncs copies of the others.
            copies = [_duplicate(fds[i]) for i in rest]

            async def fsync_rest() -> None:
                with trio.CancelScope(shield=True):  # the outcome must be known
                    thread_errors = await trio.to_thread.run_sync(_fsync_copies, copies)
                for i, error in zip(rest, thread_errors, strict=True):
                    if settle(i, error) is not None:
                        on_done(errors)

            self._nursery.start_soon(fsync_rest)
        return True

    def _released(self) -> None:
        """An AIO operation ended: its room goes to whoever waits for some."""
        self._in_flight -= 1
        if self._room_wanted:
            self._room_wanted = False
            self._room.set()
            self._room = trio.Event()

    async def fsync_all(self, fds: Sequence[int]) -> list[OSError | None]:
        """fsync each of `fds` (all at once); returns each one's error, or None. Not cancellable once started:
        the outcome must be known (an fsync that failed takes its log offline)."""
        errors: list[OSError | None] = [None] * len(fds)
        if not fds:
            return errors
        with trio.CancelScope(shield=True):
            fallback = list(range(len(fds))) if not self.aio else await self._submit_and_wait(fds, errors)
            if fallback:
                thread_errors = await trio.to_thread.run_sync(_fsync_each, [fds[i] for i in fallback])
                for i, error in zip(fallback, thread_errors, strict=True):
                    errors[i] = error
        return errors

    async def _submit_and_wait(self, fds: Sequence[int], errors: list[OSError | None]) -> list[int]:
        """Submit an AIO fsync per descriptor (as few io_submit calls as room allows) and wait for them all; the
        indexes whose submission failed (to do in a thread)."""
        pending = 0
        submitting = True
        done = trio.Event()
        refused: list[int] = []

        def finished(index: int, result: int) -> None:
            nonlocal pending
            errors[index] = _result_error(result)
            pending -= 1
            self._released()
            if not pending and not submitting:
                done.set()

        operations = []  # (index, operation) still to submit; the binding holds each submitted one until it ends
        for index, fd in enumerate(fds):
            operation = linux_aio.Operation.fsync(fd)
            operation.set_callback(functools.partial(finished, index))
            operations.append((index, operation))
        while operations:
            while self.aio and self._in_flight >= self._max_in_flight:
                self._room_wanted = True
                await self._room.wait()  # (completions of this call's first operations may come meanwhile)
            if not self.aio:  # the broker is stopping: `run` no longer delivers completions
                refused += [index for index, _ in operations]
                break
            batch = operations[: self._max_in_flight - self._in_flight]
            try:
                # One io_submit for the batch: it queues a prefix, stopping at the first it cannot queue.
                accepted = self._context.submit(*(operation for _, operation in batch))
            except (OSError, ValueError, OverflowError, SystemError):
                # caio's errors when io_submit queued none: ValueError (EINVAL, EBADF), OverflowError (EAGAIN,
                # the kernel out of AIO slots), SystemError (any other errno, EINTR among them).
                accepted = 0
            if not accepted:
                # The first was not submitted, so not done: EINVAL, a file system that does not take AIO fsync;
                # anything else (the kernel short of AIO slots) is no verdict on the data either. A thread's fsync
                # gives one.
                refused.append(batch[0][0])
                operations = operations[1:]
                continue
            pending += accepted
            self._in_flight += accepted
            operations = operations[accepted:]
        submitting = False
        if pending:
            await done.wait()
        return refused


def _result_error(result: int) -> OSError | None:
    """An AIO fsync's result as its error: caio hands the kernel's result as unsigned, so -errno is above 2**63."""
    if result < 1 << 63:
        return None
    code = (1 << 64) - result
    return OSError(code, os.strerror(code))


def _duplicate(fd: int) -> int | OSError:
    try:
        return os.dup(fd)
    except OSError as exc:
        return exc


def _fsync_copies(copies: list[int | OSError]) -> list[OSError | None]:
    """fsync and close each duplicated descriptor; a failed duplication is that descriptor's error."""
    errors: list[OSError | None] = []
    for copy in copies:
        if isinstance(copy, OSError):
            errors.append(copy)
            continue
        try:
            errors.extend(_fsync_each([copy]))
        finally:
            os.close(copy)
    return errors


def _fsync_each(fds: list[int]) -> list[OSError | None]:
    errors: list[OSError | None] = []
    for fd in fds:
        try:
            os.fsync(fd)
        except OSError as exc:
            errors.append(exc)
        else:
            errors.append(None)
    return errors
