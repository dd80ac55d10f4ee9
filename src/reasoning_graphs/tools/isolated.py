"""Run CPU-bound work in a worker process, where a time limit can stop it.

A time limit kept by a thread cannot interrupt one long C call: the call holds
the GIL, the thread that should give up never runs, and the whole process (a
``langgraph dev`` server with it) stops answering. A process can be killed.
Each call here goes to an idle worker process; the caller waits on a socket,
which releases the GIL (on the async face the event loop watches the socket,
so nothing blocks the loop), and past the limit, or when the waiting task is
cancelled, it kills the worker. The next call takes or starts another one.

Workers are started with :mod:`subprocess` (fork and exec), not
:mod:`multiprocessing`: its ``spawn`` and ``forkserver`` methods import the
caller's ``__main__`` again in each worker, which re-runs any script not
guarded by ``if __name__ == "__main__"``. The function and its arguments are
pickled, so the function must be importable by name; the worker searches the
caller's ``sys.path`` after its own. POSIX only, like the shell tool.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import pickle
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

MAX_IDLE_WORKERS = 2
"""Workers kept for later calls; overlapping calls start more, which end afterwards."""

STOPPED = "The work did not finish within {seconds:g} s and was stopped."
WORKER_DIED = "The worker process ended unexpectedly (exit code {code})."
UNPICKLABLE_REPLY = "The worker could not send back its reply: {error}"

_BOOTSTRAP = (
    "import sys; sys.path += [p for p in sys.argv[2:] if p not in sys.path]; "
    "from reasoning_graphs.tools.isolated import serve; serve(int(sys.argv[1]))"
)
"""The worker's start, isolated (``-I``): its own standard library and installed
packages come before the caller's ``sys.path``, and the current folder (perhaps
the workspace, where a model may write ``ast.py``) is not searched first."""


class StoppedAfter(TimeoutError):
    """The work ran past its time limit and its worker process was killed."""


class WorkerDied(RuntimeError):
    """The worker process ended in the middle of a call (killed, or out of memory)."""


class _Worker:
    """One worker process and the socket to it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        paths = [os.path.abspath(path) for path in sys.path]
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOTSTRAP, str(theirs.fileno()), *paths],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # the CLI's output stays the CLI's
                start_new_session=True,  # a Ctrl-C meant for the caller does not reach it
            )
        self.connection = Connection(ours.detach())

    def reply(self) -> Any:
        """The result of the request sent, raising what the work raised."""
        try:
            ok, value = self.connection.recv()
        except EOFError:
            raise WorkerDied(WORKER_DIED.format(code=self.process.wait())) from None
        if not ok:
            raise value
        return value

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.connection.close()


class WorkerPool:
    """Worker processes for isolated calls, one call per worker at a time; thread-safe.

    Examples:
        >>> pool = WorkerPool()
        >>> pool.call(pow, (2, 10), limit=10.0)
        1024
        >>> pool.close()
    """

    def __init__(self, max_idle: int = MAX_IDLE_WORKERS) -> None:
        self._max_idle = max_idle
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def call(self, func: Callable[..., T], args: tuple[Any, ...], *, limit: float) -> T:
        """``func(*args)`` in a worker, waiting at most ``limit`` seconds.

        Raises:
            StoppedAfter: The limit passed; the worker was killed.
            WorkerDied: The worker ended during the call.
            Exception: Whatever ``func`` raised.
        """
        worker = self._take_idle() or self._start()
        try:
            worker.connection.send((func, args))
            if not worker.connection.poll(limit):
                raise StoppedAfter(STOPPED.format(seconds=limit))
            result = worker.reply()
        except BaseException:
            self._discard(worker)
            raise
        self._release(worker)
        return result

    async def acall(self, func: Callable[..., T], args: tuple[Any, ...], *, limit: float) -> T:
        """:meth:`call` without blocking the event loop; cancelling it kills the worker."""
        worker = self._take_idle() or await self._astart()
        try:
            worker.connection.send((func, args))
            await _readable(worker.connection, limit)
            result = worker.reply()
        except BaseException:
            self._discard(worker)
            raise
        self._release(worker)
        return result

    def close(self) -> None:
        """Kill every worker, idle or busy (at exit: none may outlive the caller)."""
        with self._lock:
            workers = [*self._idle, *self._busy]
            self._idle, self._busy = [], set()
        for worker in workers:
            worker.kill()

    def _take_idle(self) -> _Worker | None:
        with self._lock:
            if self._pid != os.getpid():  # a forked copy: those workers serve the parent
                self._idle, self._busy, self._pid = [], set(), os.getpid()
            if not self._idle:
                return None
            worker = self._idle.pop()
            self._busy.add(worker)
            return worker

    def _start(self) -> _Worker:
        worker = _Worker()
        with self._lock:
            self._busy.add(worker)
        return worker

    async def _astart(self) -> _Worker:
        """Start a worker on a thread (a fork and exec takes milliseconds, too long for a loop).

        Should the caller be cancelled meanwhile, the new worker goes to the idle ones.
        """
        starting = asyncio.ensure_future(asyncio.to_thread(self._start))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            starting.add_done_callback(self._release_started)
            raise

    def _release_started(self, starting: asyncio.Future[_Worker]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            self._release(starting.result())

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            keep = len(self._idle) < self._max_idle
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.kill()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
        worker.kill()


async def _readable(connection: Connection, seconds: float) -> None:
    """Wait until a reply (or the end of the stream) can be read, at most ``seconds``."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    fd = connection.fileno()

    def mark_ready() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, mark_ready)
    try:
        done, _ = await asyncio.wait({ready}, timeout=seconds)
    finally:
        loop.remove_reader(fd)
    if not done:
        raise StoppedAfter(STOPPED.format(seconds=seconds))


_shared = WorkerPool()
atexit.register(_shared.close)


def call_isolated(func: Callable[..., T], *args: Any, limit: float) -> T:
    """``func(*args)`` in a worker process of the shared pool (see :meth:`WorkerPool.call`)."""
    return _shared.call(func, args, limit=limit)


async def acall_isolated(func: Callable[..., T], *args: Any, limit: float) -> T:
    """``func(*args)`` in a worker process of the shared pool (see :meth:`WorkerPool.acall`)."""
    return await _shared.acall(func, args, limit=limit)


def serve(fd: int) -> None:
    """The worker's loop: run each request and send back its outcome until the caller hangs up."""
    connection = Connection(fd)
    while True:
        try:
            request = connection.recv_bytes()
        except EOFError:
            return
        try:
            func, args = pickle.loads(request)  # a function the worker cannot import fails here
            reply = (True, func(*args))
        except Exception as exc:
            reply = (False, exc)
        try:
            connection.send(reply)
        except OSError:  # the caller is gone
            return
        except Exception as exc:  # the result or the error does not pickle
            connection.send((False, RuntimeError(UNPICKLABLE_REPLY.format(error=exc))))
