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

`submit` is the same without an await: it hands the errors to a function called by `run` as it collects the
completions, so that the caller's task is not woken only to learn that its fsyncs ended (the group committer
settles its rounds so: kbroker/log/flusher.py).
"""

from __future__ import annotations

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

linux_aio: Any
try:  # pragma: no cover - depends on the platform
    from caio import linux_aio
except ImportError:  # pragma: no cover
    linux_aio = None


FsyncErrors = list[OSError | None]


class _Round:
    """One call's fsyncs: each descriptor's error, how many have not ended, and what to call once none is left."""

    __slots__ = ("errors", "on_done", "pending", "submitting")

    def __init__(self, count: int, on_done: Callable[[FsyncErrors], None]) -> None:
        self.errors: FsyncErrors = [None] * count
        self.on_done = on_done
        self.pending = 0
        self.submitting = True  # more may still be submitted: not done even if none is pending


class Fsyncer:
    """`await fsync_all(fds)`: fsync every descriptor, side by side; each one's error or None. `run` (a task of
    the broker's) owns the AIO context and hands completions back; without it every call uses a thread."""

    def __init__(self, max_in_flight: int = MAX_IN_FLIGHT, *, use_aio: bool = True) -> None:
        self._max_in_flight = max_in_flight
        self._use_aio = use_aio and linux_aio is not None
        self._context: Any = None
        self._in_flight = 0
        self._room = trio.Event()
        self._ended: list[_Round] = []  # rounds whose last fsync `_deliver` has just collected
        self._threads: trio.Nursery | None = None
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
        async with trio.open_nursery() as self._threads:  # for what `submit` has to do in threads
            try:
                while True:
                    await self._deliver()
            finally:
                with trio.CancelScope(shield=True):
                    while self._in_flight:
                        await self._deliver()
                self.aio = False
                self._room.set()  # a call waiting for room goes to threads now
        self._threads = None

    async def _deliver(self) -> None:
        await trio.lowlevel.wait_readable(self._context.fileno)
        try:
            self._context.poll()  # reset the eventfd's count
        except BlockingIOError:
            pass
        while self._process_events():
            pass
        ended, self._ended = self._ended, []
        for round_ in ended:
            round_.on_done(round_.errors)  # (not from within caio's callback: what it raises is the task's)

    def _process_events(self) -> int:
        """Run each finished operation's callback; how many there were. io_getevents answers EINTR when a signal
        arrived while it found nothing, even without waiting (a SIGTERM, a debugger attaching): nothing was taken
        from the queue then, so it is asked again (the signal's handler has run by the time it returns)."""
        while True:
            try:
                return int(self._context.process_events())
            except SystemError as exc:  # caio's error for a failed io_getevents: (errno, message)
                if not exc.args or exc.args[0] != errno.EINTR:
                    raise

    async def fsync_all(self, fds: Sequence[int]) -> FsyncErrors:
        """fsync each of `fds` (all at once); returns each one's error, or None. Not cancellable once started:
        the outcome must be known (an fsync that failed takes its log offline)."""
        if not fds:
            return []
        done = trio.Event()
        round_ = _Round(len(fds), lambda errors: done.set())
        with trio.CancelScope(shield=True):
            fallback = (
                list(range(len(fds))) if not self.aio else await self._submit_and_wait(fds, round_, done)
            )
            if fallback:
                thread_errors = await trio.to_thread.run_sync(_fsync_each, [fds[i] for i in fallback])
                for i, error in zip(fallback, thread_errors, strict=True):
                    round_.errors[i] = error
        return round_.errors

    def submit(self, fds: Sequence[int], on_done: Callable[[FsyncErrors], None]) -> bool:
        """fsync each of `fds` (all at once) without waiting: `on_done(errors)` is called from `run` once all have
        ended (each descriptor's error, or None). False, and nothing done, when AIO cannot take them all now (no
        AIO context, not enough room): the caller uses `fsync_all` then."""
        if (
            not fds
            or not self.aio
            or self._threads is None
            or self._in_flight + len(fds) > self._max_in_flight
        ):
            return False
        round_ = _Round(len(fds), on_done)
        refused = self._submit(fds, round_, list(range(len(fds))))
        if refused:
            # The file system does not take an AIO fsync of these: a thread makes them (the round ends after it).
            round_.pending += 1
            self._threads.start_soon(self._fsync_in_thread, fds, round_, refused)
        round_.submitting = False  # (none has ended yet: `run` delivers completions, the thread ends later)
        return True

    async def _fsync_in_thread(self, fds: Sequence[int], round_: _Round, indexes: list[int]) -> None:
        errors = await trio.to_thread.run_sync(_fsync_each, [fds[i] for i in indexes])
        for i, error in zip(indexes, errors, strict=True):
            round_.errors[i] = error
        round_.pending -= 1
        if not round_.pending:
            round_.on_done(round_.errors)

    def _finished(self, round_: _Round, index: int, result: int) -> None:
        """caio's callback for one operation that ended."""
        if result >= 1 << 63:  # caio hands the result as unsigned: -errno
            code = (1 << 64) - result
            round_.errors[index] = OSError(code, os.strerror(code))
        round_.pending -= 1
        self._in_flight -= 1
        self._room.set()
        self._room = trio.Event()
        if not round_.pending and not round_.submitting:
            self._ended.append(round_)

    def _submit(self, fds: Sequence[int], round_: _Round, indexes: list[int]) -> list[int]:
        """Submit an AIO fsync for each of `indexes` (as few io_submit calls as they take; room for them all is
        the caller's); the indexes the kernel refused (to do in a thread)."""
        refused: list[int] = []
        operations = []  # (index, operation) still to submit; the binding holds each submitted one until it ends
        for index in indexes:
            operation = linux_aio.Operation.fsync(fds[index])
            operation.set_callback(functools.partial(self._finished, round_, index))
            operations.append((index, operation))
        while operations:
            try:
                # One io_submit for them all: it queues a prefix, stopping at the first it cannot queue.
                accepted = self._context.submit(*(operation for _, operation in operations))
            except (OSError, ValueError, OverflowError, SystemError):
                # caio's errors when io_submit queued none: ValueError (EINVAL, EBADF), OverflowError (EAGAIN,
                # the kernel out of AIO slots), SystemError (any other errno, EINTR among them).
                accepted = 0
            if not accepted:
                # The first was not submitted, so not done: EINVAL, a file system that does not take AIO fsync;
                # anything else (the kernel short of AIO slots) is no verdict on the data either. A thread's fsync
                # gives one.
                refused.append(operations[0][0])
                operations = operations[1:]
                continue
            round_.pending += accepted
            self._in_flight += accepted
            operations = operations[accepted:]
        return refused

    async def _submit_and_wait(self, fds: Sequence[int], round_: _Round, done: trio.Event) -> list[int]:
        """Submit an AIO fsync per descriptor, as room allows, and wait for them all; the indexes whose
        submission failed (to do in a thread)."""
        refused: list[int] = []
        waiting = list(range(len(fds)))
        while waiting:
            while self.aio and self._in_flight >= self._max_in_flight:
                await self._room.wait()  # (completions of this call's first operations may come meanwhile)
            if not self.aio:  # the broker is stopping: `run` no longer delivers completions
                refused += waiting
                break
            room = self._max_in_flight - self._in_flight
            refused += self._submit(fds, round_, waiting[:room])
            waiting = waiting[room:]
        round_.submitting = False
        if round_.pending:
            await done.wait()
        return refused


def _fsync_each(fds: list[int]) -> FsyncErrors:
    errors: FsyncErrors = []
    for fd in fds:
        try:
            os.fsync(fd)
        except OSError as exc:
            errors.append(exc)
        else:
            errors.append(None)
    return errors
