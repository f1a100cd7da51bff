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
"""

from __future__ import annotations

import errno
import functools
import logging
import os
from collections.abc import Sequence
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


class Fsyncer:
    """`await fsync_all(fds)`: fsync every descriptor, side by side; each one's error or None. `run` (a task of
    the broker's) owns the AIO context and hands completions back; without it every call uses a thread."""

    def __init__(self, max_in_flight: int = MAX_IN_FLIGHT, *, use_aio: bool = True) -> None:
        self._max_in_flight = max_in_flight
        self._use_aio = use_aio and linux_aio is not None
        self._context: Any = None
        self._in_flight = 0
        self._room = trio.Event()
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
            while True:
                await self._deliver()
        finally:
            with trio.CancelScope(shield=True):
                while self._in_flight:
                    await self._deliver()
            self.aio = False
            self._room.set()  # a call waiting for room goes to threads now

    async def _deliver(self) -> None:
        await trio.lowlevel.wait_readable(self._context.fileno)
        try:
            self._context.poll()  # reset the eventfd's count
        except BlockingIOError:
            pass
        while self._process_events():
            pass

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
            if result >= 1 << 63:  # caio hands the result as unsigned: -errno
                code = (1 << 64) - result
                errors[index] = OSError(code, os.strerror(code))
            pending -= 1
            self._in_flight -= 1
            self._room.set()
            self._room = trio.Event()
            if not pending and not submitting:
                done.set()

        operations = []  # (index, operation) still to submit; the binding holds each submitted one until it ends
        for index, fd in enumerate(fds):
            operation = linux_aio.Operation.fsync(fd)
            operation.set_callback(functools.partial(finished, index))
            operations.append((index, operation))
        while operations:
            while self.aio and self._in_flight >= self._max_in_flight:
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
