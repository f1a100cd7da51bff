"""kbroker/log/fsyncer.py: fsyncs through Linux asynchronous I/O, and the worker-thread fallback."""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from kbroker.log.fsyncer import Fsyncer

pytestmark = pytest.mark.timeout(30)


@asynccontextmanager
async def running(fsyncer: Fsyncer) -> AsyncIterator[Fsyncer]:
    async with trio.open_nursery() as nursery:
        await nursery.start(fsyncer.run)
        yield fsyncer
        nursery.cancel_scope.cancel()


def written_files(tmp_path: Path, count: int) -> list[int]:
    fds = []
    for i in range(count):
        fd = os.open(tmp_path / f"f{i}", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"x" * 4096)
        fds.append(fd)
    return fds


class Answers:
    """`start`'s callback, recording each call's errors."""

    def __init__(self) -> None:
        self.errors: list[list[OSError | None]] = []
        self.answered = trio.Event()

    def on_done(self, errors: list[OSError | None]) -> None:
        self.errors.append(errors)
        self.answered.set()

    def assert_only_the_pipe_failed(self) -> None:
        """The first call's answer for [a regular file, a pipe]: the pipe cannot be fsynced (EINVAL)."""
        good, pipe = self.errors[0]
        assert good is None
        assert isinstance(pipe, OSError)
        assert pipe.errno == errno.EINVAL


@pytest.mark.trio
@pytest.mark.parametrize("use_aio", [True, False], ids=["aio", "threads"])
async def test_every_file_is_fsynced_even_beyond_the_context_size(tmp_path: Path, use_aio: bool) -> None:
    fds = written_files(tmp_path, 20)
    try:
        async with running(Fsyncer(max_in_flight=4, use_aio=use_aio)) as fsyncer:
            assert fsyncer.aio == use_aio  # Linux, with caio installed: the asynchronous path is really taken
            with trio.fail_after(10):
                errors = await fsyncer.fsync_all(fds)
    finally:
        for fd in fds:
            os.close(fd)
    assert errors == [None] * 20


@pytest.mark.trio
async def test_a_descriptor_the_kernel_refuses_is_fsynced_in_a_thread_and_its_error_reported(
    tmp_path: Path,
) -> None:
    """io_submit refuses an fsync the file cannot do (EINVAL): the fsync is made in a thread instead, and its own
    error (a pipe cannot be fsynced either way) comes back for that descriptor alone."""
    read_end, write_end = os.pipe()
    (good,) = written_files(tmp_path, 1)
    try:
        async with running(Fsyncer()) as fsyncer:
            with trio.fail_after(10):
                errors = await fsyncer.fsync_all([good, read_end])
    finally:
        for fd in (read_end, write_end, good):
            os.close(fd)
    assert errors[0] is None
    assert isinstance(errors[1], OSError)
    assert errors[1].errno == errno.EINVAL


@pytest.mark.trio
async def test_fsyncs_asked_for_after_the_stop_run_in_threads(tmp_path: Path) -> None:
    fsyncer = Fsyncer()
    async with running(fsyncer):
        assert fsyncer.aio
    assert not fsyncer.aio  # its task ended: nothing would deliver an asynchronous fsync's completion
    (fd,) = written_files(tmp_path, 1)
    try:
        with trio.fail_after(10):
            assert await fsyncer.fsync_all([fd]) == [None]
    finally:
        os.close(fd)


@pytest.mark.trio
async def test_signals_arriving_while_completions_are_collected_are_not_errors(tmp_path: Path) -> None:
    """io_getevents answers EINTR when a signal arrives while it finds nothing, even without waiting (caio raises
    SystemError): a signal handled by Python (SIGTERM, SIGINT) or a debugger's interruption stopped the broker.
    Here another process signals this one all the time (from another process: a thread of this one would need
    the interpreter lock, which the event loop's thread holds but for the system calls) while fsyncs complete."""
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    pester = await trio.lowlevel.open_process(
        [sys.executable, "-c", f"import os, signal\nwhile True: os.kill({os.getpid()}, signal.SIGUSR1)"]
    )
    (fd,) = written_files(tmp_path, 1)
    try:
        async with running(Fsyncer()) as fsyncer:
            assert fsyncer.aio
            with trio.fail_after(20):
                for _ in range(500):  # ~40% of the rounds see io_getevents answer EINTR (measured)
                    os.write(fd, b"y" * 512)
                    assert await fsyncer.fsync_all([fd]) == [None]
            assert pester.returncode is None  # it signalled throughout
    finally:
        pester.kill()
        with trio.CancelScope(shield=True):
            await pester.wait()
        signal.signal(signal.SIGUSR1, previous)
        os.close(fd)


@pytest.mark.trio
async def test_start_answers_from_the_fsyncers_task_with_each_descriptors_error(tmp_path: Path) -> None:
    """`start` submits and returns at once; the callback comes when every fsync has ended. io_submit queues the
    good file and refuses the pipe behind it (EINVAL): the pipe's fsync is made in a thread, and the callback waits
    for it too. A batch whose first descriptor io_submit refuses is declined whole (False), as is any batch once
    the fsyncer's task has stopped."""
    read_end, write_end = os.pipe()
    (good,) = written_files(tmp_path, 1)
    answers = Answers()

    try:
        fsyncer = Fsyncer()
        async with running(fsyncer):
            assert fsyncer.start([good, read_end], answers.on_done)
            assert answers.errors == []  # (not called from within `start`)
            with trio.fail_after(10):
                await answers.answered.wait()
            assert not fsyncer.start([read_end, good], answers.on_done)
        assert not fsyncer.start([good], answers.on_done)
    finally:
        for fd in (read_end, write_end, good):
            os.close(fd)
    assert len(answers.errors) == 1
    answers.assert_only_the_pipe_failed()


@pytest.mark.trio
async def test_start_needs_the_descriptors_only_during_the_call(tmp_path: Path) -> None:
    """The group committer hands `start` the segments' own descriptors, which may be closed (and their numbers
    reused) once it returns: io_submit holds the files it accepted, and what it left for a thread is fsynced
    through copies. Here the pipe's number is reused by a regular file before the thread runs: the pipe's own
    error still comes back (an fsync of the reused number would have succeeded)."""
    read_end, write_end = os.pipe()
    (good,) = written_files(tmp_path, 1)
    answers = Answers()

    reused: list[int] = []
    try:
        fsyncer = Fsyncer()
        async with running(fsyncer):
            assert fsyncer.start([good, read_end], answers.on_done)
            for fd in (good, read_end):
                os.close(fd)
            (tmp_path / "later").mkdir()
            reused = written_files(tmp_path / "later", 2)  # (the lowest free numbers: the two just closed)
            assert read_end in reused
            with trio.fail_after(10):
                await answers.answered.wait()
    finally:
        for fd in (write_end, *reused):
            os.close(fd)
    answers.assert_only_the_pipe_failed()


@pytest.mark.trio
async def test_an_exception_in_a_start_callback_ends_the_fsyncers_task(tmp_path: Path) -> None:
    """caio reports an exception raised by an operation's own callback as unraisable and goes on, which would
    leave a group commit round unsettled for ever (its produces hanging): `start`'s callback is therefore called
    after caio's, from the fsyncer's task, where an exception ends the task like any bug."""
    (fd,) = written_files(tmp_path, 1)

    def on_done(errors: list[OSError | None]) -> None:
        raise RuntimeError("a bug in the callback")

    async def fsync_with_a_failing_callback() -> None:
        async with trio.open_nursery() as nursery:
            fsyncer = Fsyncer()
            await nursery.start(fsyncer.run)
            assert fsyncer.start([fd], on_done)
            await trio.sleep_forever()  # until the fsyncer's task fails, which cancels this

    try:
        with trio.fail_after(10), pytest.raises(BaseExceptionGroup) as raised:
            await fsync_with_a_failing_callback()
    finally:
        os.close(fd)
    assert raised.value.subgroup(lambda e: str(e) == "a bug in the callback") is not None
